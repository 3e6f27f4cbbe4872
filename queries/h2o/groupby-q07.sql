select id3, max(v1) - min(v2) as range_v1_v2 from x group by id3;
