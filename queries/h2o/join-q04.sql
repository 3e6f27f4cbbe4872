select x.*, medium.id1 as medium_id1, medium.id2 as medium_id2, medium.id4 as medium_id4, v2 from x join medium using (id5);
