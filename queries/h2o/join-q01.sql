select x.*, small.id4 as small_id4, v2 from x join small using (id1);
