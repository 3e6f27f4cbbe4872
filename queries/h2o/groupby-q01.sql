select id1, sum(v1) as v1 from x group by id1;
