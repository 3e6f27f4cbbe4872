select id4, id5, median(v3) as median_v3, stddev(v3) as sd_v3 from x group by id4, id5;
