select x.*, big.id1 as big_id1, big.id2 as big_id2, big.id4 as big_id4, big.id5 as big_id5, big.id6 as big_id6, v2 from x join big using (id3);
