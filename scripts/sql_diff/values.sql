-- VALUES as a query, as a table in FROM (with and without column names),
-- in a CTE with column names, in IN lists, with NULLs, mixed numeric
-- types and dates, joined to a table (run over the --make-nulls tables).
select * from (values (1, 'one'), (2, 'two'), (3, null)) as v(a, b) order by a
select count(*), count(b), sum(a) from (values (1, 'one'), (2, null), (null, 'x')) as v(a, b)
select a + b from (values (1, 2.5), (2, 3), (null, 1)) as v(a, b)
with v(x, y) as (values (1, date '2024-01-01'), (2, null)) select x, y from v order by x
select count(*) from t where a in (values (1), (2), (3))
select v.label, count(t.a) from (values (1, 'low'), (2, 'high'), (99, 'none')) as v(k, label) left join t on t.a = v.k group by v.label order by v.label
select max(a), min(a) from (values (9223372036854775807), (-9223372036854775807)) as v(a)
select a from (values (1), (1), (2)) as v(a) group by a order by a
select * from (values ('x', true), ('y', false), (null, null)) as v(s, b) where b or s is null order by s
