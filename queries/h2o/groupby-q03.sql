select id3, sum(v1) as v1, avg(v3) as v3 from x group by id3;
