select id2, id4, corr(v1, v2) * corr(v1, v2) as r2 from x group by id2, id4;
