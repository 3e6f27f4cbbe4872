-- Clauses beyond the core: * REPLACE, named windows (WINDOW w AS (..),
-- OVER w, OVER (w ORDER BY ..)), LIMIT / OFFSET of constant expressions
-- and NULL, EXISTS with LIMIT or ORDER BY inside, over the --make-nulls tables.
select * exclude (s, dt) replace (a * 2 as a, coalesce(flag, false) as flag) from t order by all nulls first limit 20
select a, b, sum(c) over w, rank() over w, count(*) over (w rows between 2 preceding and current row) from t where a between 0 and 2 and b is not null window w as (partition by a order by b nulls first, c nulls first) order by a, b nulls first, c nulls first
select a, first_value(b) over w2 from t where a = 3 window w1 as (partition by a), w2 as (w1 order by b desc nulls last, c) order by b nulls first, c nulls first
select b from t order by b nulls first limit 2 * 5 offset 3 + 1
select count(*) from (select * from t limit null)
select count(*) from u where exists (select * from t where t.a = u.k and t.c > 40 limit 1)
select count(*) from u where not exists (select * from t where t.a = u.k and t.s like 'A%' order by t.b limit 5)
select k, exists (select 1 from t where t.a = u.k and t.flag limit 1) from u order by k nulls first, w limit 40
select k, (select count(*) + 2 from t where t.a = u.k and t.c > 45), (select coalesce(sum(t.b), 0) from t where t.a = u.k and t.c > 45), (select count(t.s) * 10 - 1 from t where t.a = u.k and t.flag) from u order by k nulls first, w
select count(*) from u where (select coalesce(max(t.c), -100) from t where t.a = u.k and t.c > 49) < 0
select count(*) from t where a not in (select k from u where u.w % 10 = t.a % 10)
select count(*), sum(b) from t where a not in (select k from u where u.w = t.a and u.v like 'v1%')
select a, count(*) from t where c not in (select w from u where u.k = t.a) group by a order by a nulls first
select distinct on (a) a, b, c from t where b is not null order by a nulls first, b desc
select distinct on (k % 5) k % 5 as g, w, v from u order by g, w desc, v nulls last
select distinct on (a) a, flag, count(*) from t where a between 0 and 5 group by a, flag order by a, count(*) desc, flag nulls first
select k, w, (select count(*) from t where t.a > u.k), (select sum(t.c) from t where t.a < u.k and t.b > cast(u.w as bigint) * 10000000000 - 500000000000), (select max(t.s) from t where t.a between u.k - 1 and u.k + 1) from u order by k nulls first, w, v nulls first
select k, (select count(*) + 1 from t where t.a > u.k and t.flag), (select coalesce(min(t.d), 0) from t where t.a = u.w % 7 and t.c > u.k) from u order by k nulls first, w, v nulls first
select k, w, k > all (select a from t where t.a < u.w % 11), k < any (select a from t where t.c > u.w - 50), k = all (select a from t where t.b < u.w) from u order by k nulls first, w, v nulls first
select k, exists (select 1 from t where t.a > u.k + 10), k in (select a from t where t.c < u.w - 49), k not in (select a from t where t.a >= u.k and t.flag) from u order by k nulls first, w, v nulls first
select count(*) from u where w > (select count(*) from t where t.a < u.k and t.c > 40)
select k % 3 as g, sum((select count(*) from t where t.a > u.k)) from u group by 1 order by 1 nulls first
select (select count(*) from t where t.a > u.k) as n, count(*) from u group by 1 order by 1
