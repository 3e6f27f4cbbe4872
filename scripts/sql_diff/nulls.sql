-- Over the tables of sql_diff.py --make-nulls DIR. Expected to differ (sloth follows PostgreSQL;
-- see the README): integer division, NULLs first under DESC. No refusals expected.
select count(*), count(a), count(s), count(dt), count(flag) from t
select a, count(*), sum(b), min(c), max(d), avg(c) from t group by a order by a nulls first
select s, count(*) from t group by s order by s nulls last limit 10
select flag, count(*), sum(a) from t group by flag order by flag nulls first
select count(*) from t where a > 3 and s like 'B%'
select count(*) from t where not (a > 3)
select count(*) from t where a > 3 or c < 0
select count(*) from t where a is null or s = ''
select count(*) from t where s = ''
select count(*) from t where s <> ''
select count(*) from t where flag
select count(*) from t where not flag
select count(*) from t where flag is not true
select a, b from t order by a desc nulls last, b limit 10
select a, b from t order by a nulls first, b desc limit 10
select dt, count(*) from t group by dt order by 2 desc, 1 limit 5
select year(dt), count(*) from t group by 1 order by 1 limit 5
select t.a, u.v, count(*) from t join u on t.a = u.k group by 1, 2 order by 1, 2 limit 20
select count(*) from t left join u on t.a = u.k
select count(*) from t left join u on t.a = u.k where u.k is null
select count(*) from t full join u on t.a = u.k
select count(*), count(t.a), count(u.k) from t full join u on t.a = u.k
select count(*) from t where a in (select k from u)
select count(*) from t where a not in (select k from u)
select count(*) from t where a not in (select k from u where k is not null)
select count(*) from t where exists (select 1 from u where u.k = t.a)
select count(*) from t where not exists (select 1 from u where u.k = t.a)
select count(*) from t right join u on t.a = u.k
select k, count(*) from u group by k order by k nulls first
select count(distinct a), count(distinct s), count(distinct dt) from t
select sum(d), avg(d), min(d), max(d) from t
select sum(b), min(b), max(b) from t
select a, sum(d) from t group by a having sum(d) > 0 order by a
select coalesce(a, -100) x, count(*) from t group by x order by x
select case when a is null then 'n' when a < 0 then 'neg' else 'pos' end k, count(*) from t group by 1 order by 1
select a, row_number() over (partition by a order by b nulls last) rn, b from t where a = 1 order by rn limit 5
select a, rank() over (order by a nulls first) from t order by 2 desc, 1 limit 3
select distinct a from t order by a nulls first
select a, s from t order by s nulls first, a nulls first limit 10
select s, a from t where s is not null order by s desc, a desc nulls last limit 10
select length(s), count(*) from t group by 1 order by 1 nulls first
select upper(s), lower(s) from t where s is not null order by 1, 2 limit 3
select substring(s, 2, 3), count(*) from t group by 1 order by 2 desc, 1 limit 3
select min(s), max(s) from t
select min(dt), max(dt), min(flag), max(flag) from t
select a + 1, a * 2, a - b, a / 2, a % 3 from t order by b nulls first limit 5
select c * 2, c / 3, -c, abs(c) from t order by b limit 5
select d * 2, d + 1, d * d, round(d, 1) from t order by b limit 5
select count(*) from t where c between -10 and 10
select count(*) from t where dt between date '1995-01-01' and date '1999-12-31'
select count(*) from t where a in (1, 2, null)
select count(*) from t where a not in (1, 2, null)
select count(*) from t where a not in (1, 2)
select u1.k, count(*) from u u1 join u u2 on u1.k = u2.k group by 1 order by 1
select sum(w) filter (where k is null), count(*) filter (where v is null) from u
select k, sum(w) over (partition by k) from u order by 1, 2 limit 3
select percentile_cont(0.5) within group (order by c), median(c) from t
select stddev_samp(c), var_samp(c) from t
select a, stddev_samp(c) from t group by a order by a nulls first
select count(*) from (select a from t union select k from u) x
select count(*) from (select a from t union all select k from u) x
select a from t where a is not null order by a limit 1 offset 19000
select count(*) from t where s like '%x%x%'
select count(*) from t where s like '_x%'
select count(*) from t where s not like 'A%'
select a, s, b, sum(b) over (partition by a), count(s) over (partition by a), count(*) over (partition by a) from t
select s, c, avg(c) over (partition by s), max(dt) over (partition by s) from t
select k, v, w, sum(w) over (partition by k, v) from u
select k, v, w, min(v) over (partition by k), max(w) over () from u
select flag, b, sum(d) over (partition by flag) from t
select a, b, var_samp(c) over (partition by a, flag), count(distinct_s) from (select a, b, c, flag, s as distinct_s from t) x group by a, b, c, flag
select a, b, s, lag(s) over (partition by a order by b, s, c), lead(b, 3) over (partition by a order by b, s, c) from t
select k, v, w, lag(w, 2) over (partition by k order by v nulls first, w) from u
select count(*), sum(a), min(s), avg(c) from t where a > 1000
select a, count(*) from t where a > 1000 group by a
select count(*) from t having count(*) > 5
select count(*) from t where a > 1000 having count(*) > 0
select a from t order by a limit 0
select a from t order by a nulls first offset 30000
select distinct a, flag from t
select a, flag from t union select k, null from u
select a from t intersect select k from u
select a, s from t where a > 3 except select a, s from t where s like 'A%'
select s from t order by length(s) desc nulls last, s limit 5
select a, sum(c) from t group by a order by sum(c) desc nulls last limit 3
select a % 3, count(*) from t group by a % 3
select t.a, u.w from t join u on t.a = u.k and t.c > u.w
select count(*) from t join u on t.a = u.k or t.a = u.w
select count(*) from t left join u on t.a = u.k and u.w > 50
select count(*) from t left join u on t.a = u.k where u.w > 50 or u.w is null
select count(*) from u a join u b on a.k = b.k join u c on b.v = c.v
select k, count(distinct v), count(v), count(*) from u group by k
select count(*) from t where c > (select avg(c) from t)
select count(*) from t where a in (select k from u where w > 90)
select count(*) from t x where exists (select 1 from u where u.k = x.a and u.w > x.c)
select count(*) from t where a = (select max(k) from u)
select (select count(*) from u where u.k = t.a) n, count(*) from t group by 1
select count(*) from t where a between 1 and 3 and not flag
select cast(c as int), cast(d as double), cast(a as varchar) from t where b is not null order by b limit 5
select cast(dt as varchar), cast('2020-02-29' as date) from t where dt is not null order by dt limit 3
select sum(a * 1.5), sum(d * 2), sum(d) / count(d) from t
select coalesce(s, 'none'), count(*) from t group by 1
select case a when 1 then 'one' when 2 then 'two' end, count(*) from t group by 1
select a, b from t where a is not null and b is not null order by a, b desc limit 5
select a from t intersect select k from u
select a, s from t where a > 3 except select a, s from t where s like 'A%'
select a, flag from t except select k, null from u
select k, v from u intersect select k, v from u where w > 50
select k from u except select a from t
select n from (select a n from t intersect select k from u) x order by n nulls first
select count(*) from t where a not in (select k from u where v = 'v1')
select count(*) from t where a not in (select k from u where k > 100)
select count(*) from t where a in (select k from u where k is null)
select count(*) from t where a not in (select null)
select count(*) from t where not exists (select 1 from u where u.k = t.a and u.w > 50)
select count(*) from t where exists (select 1 from u where u.k = t.a and u.v is null)
select a, (select max(w) from u where u.k = t.a) m from t where a between 0 and 3 group by a order by a
select count(*) from t where c > (select avg(w) from u where u.k = t.a)
select count(*) from t where c > all (select w from u where u.k = t.a)
select count(*) from u where k in (select a from t where t.b > 0)
select count(*) from u where (k, w) in (select a, a from t)
select k, (select count(*) from t where t.a = u.k) from u order by k nulls first, w limit 10
select count(*) from t join (select k as a, w from u) x using (a)
select count(*) from t left join u on t.a = u.k and t.flag
select count(*) from t full join u on t.a = u.k and u.v like 'v1%'
select sum(w) from u where w > (select min(w) from u u2 where u2.v = u.v)
select v from u group by v having count(*) > (select count(*) / 100 from u) order by v nulls first
select count(*) from t where a = (select k from u limit 1)
select count(*), count(u.k), count(t.a) from t left join u on t.a = u.k and t.c > u.w
select t.a, count(u.k), sum(u.w) from t left join u on t.a = u.k and t.c > u.w group by 1 order by 1 nulls first
select count(*), count(t.a), count(u.k) from t right join u on t.a = u.k and t.c < u.w
select count(*), count(t.a), count(u.k) from t full join u on t.a = u.k and t.c < u.w and u.v like 'v1%'
select count(*), count(u.k) from t left join u on t.a = u.k and t.a > 3
select count(*), count(u.k) from t left join u on t.a < u.k and u.w > 40
select count(*), count(t.a) from u left join t on u.k = t.a + 1 and t.flag and not (u.w < t.c)
select count(*), count(u.k) from t left join u on true
select count(*), count(t.a), count(u.k) from t full join u on t.a - 1 > u.k
select a, sum(distinct b), avg(distinct c), sum(distinct d), count(distinct s), avg(distinct d) from t group by a order by a nulls first
select sum(distinct a), avg(distinct a), stddev(distinct c), median(distinct a) from t
select count(*) from t where c > all (select w from u where u.k = t.a)
select count(*) from t where c > all (select w from u)
select count(*) from t where c < any (select w from u where u.k = t.a)
select count(*) from t where a >= all (select k from u where k is not null)
select count(*) from t where a <= any (select k from u where v like 'v1%')
select a, c > all (select w from u where u.k = t.a) x, c < any (select w from u where u.k = t.a) y, count(*) from t group by 1, 2, 3 order by 1 nulls first, 2 nulls first, 3 nulls first
select count(*) from t where a = all (select k from u where u.w > 48)
select count(*) from t where a <> any (select k from u where u.w > 40)
select count(*) from t where not (c >= all (select w from u where u.k = t.a))
select a, a > all (select k from u where k < 0) from t group by 1 order by 1 nulls first
select count(*) from u where (k, k + 1) in (select a, a + 1 from t where c > 0)
select count(*) from t where (a, flag) in (select k, w > 0 from u)
select a, min_by(b, c), max_by(b, c), min_by(s, dt), max_by(dt, b) from t group by a order by a nulls first
select a, first(b order by c nulls last), last(b order by c nulls first), first(s order by dt asc nulls last) from t where a is not null group by a order by a
select a, string_agg(s, ',' order by b), string_agg(cast(b as varchar), ';' order by c desc), count(*) from t where a between 0 and 3 and b is not null and c is not null group by a order by a
select a, exists (select 1 from u where u.k = t.a) e, not exists (select 1 from u where u.k = t.a and u.w > 0) ne, count(*) from t group by 1, 2, 3 order by 1 nulls first
select a, a in (select k from u) i, a not in (select k from u where k is not null) ni, count(*) from t group by 1, 2, 3 order by 1 nulls first
select a, a in (select k from u where u.v like 'v1%') i, count(*) from t group by 1, 2 order by 1 nulls first
select a, exists (select 1 from u where u.k > 100) from t group by 1 order by 1 nulls first
