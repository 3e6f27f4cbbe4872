-- WITH RECURSIVE over the --make-nulls tables: counting, UNION ALL and
-- UNION (which ends on cycles), joins with u inside the step, several
-- columns, a base term without rows, and a recursive CTE beside plain ones.
with recursive r(n) as (select 1 union all select n + 1 from r where n < 100) select sum(n), count(*) from r
with recursive fib(i, a, b) as (select 1, 0::bigint, 1::bigint union all select i + 1, b, a + b from fib where i < 60) select i, a from fib order by i
with recursive reach(k) as (select 1 union select u.w % 25 from reach join u on u.k = reach.k) select k from reach order by k
with recursive p(k, path, d) as (select 0, '0', 0 union all select u.w % 20, p.path || '>' || (u.w % 20)::varchar, p.d + 1 from p join u on u.k = p.k where p.d < 3) select count(*), max(d), min(path), max(path) from p
with recursive r(n) as (select a from t where a > 1000 union all select n + 1 from r where n < 2000) select count(*) from r
with recursive base as (select distinct k from u where k is not null), recursive_part(k, steps) as (select min(k), 0 from base union all select r.k + 1, r.steps + 1 from recursive_part r where r.k + 1 in (select k from base)) select max(steps), max(k) from recursive_part
with recursive cnt(a, n) as (select a, 1 from t where a between 0 and 2 and b > 0 union all select a, n + 1 from cnt where n < 3) select a, n, count(*) from cnt group by a, n order by a nulls first, n
with recursive walk(v, seen) as (select 'v1', 1 union select u.v, seen + 1 from walk join u on u.v > walk.v where seen < 2) select count(*), count(distinct v) from walk
