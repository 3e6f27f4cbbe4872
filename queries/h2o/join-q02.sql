select x.*, medium.id1 as medium_id1, medium.id4 as medium_id4, medium.id5 as medium_id5, v2 from x join medium using (id2);
