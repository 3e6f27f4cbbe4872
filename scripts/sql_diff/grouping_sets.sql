-- GROUPING SETS, ROLLUP, CUBE and GROUPING() over the --make-nulls tables
-- (nulls in every key column, so a rolled-up null and a null key meet).
-- ORDER BY ALL sorts by every output column.
select a % 3 as g, flag, count(*), sum(c) from t group by rollup (a % 3, flag) order by all nulls first
select a % 3 as g, flag, count(*), grouping(a % 3, flag) from t group by cube (a % 3, flag) order by all nulls first
select s, year(dt), count(b), grouping(s), grouping(year(dt)) from t where a between 0 and 2 group by grouping sets ((s), (year(dt)), ())
select a % 2, flag, avg(c), min(s) from t group by a % 2, rollup (flag)
select a % 2, flag, count(*) from t group by grouping sets ((a % 2), (a % 2), (flag))
select flag, count(*) as n from t group by rollup (flag) having count(*) > 1000 order by n
select a % 4, flag, sum(c) from t group by rollup ((a % 4, flag))
select k % 3, count(distinct v), grouping(k % 3) from u group by rollup (k % 3)
select flag, count(*) from t where false group by rollup (flag)
select flag, grouping(flag) as g, rank() over (partition by grouping(flag) order by count(*) desc) from t group by cube (flag)
select s, a from t where a > 12 order by all desc nulls last
select distinct flag, a % 2 from t order by all
