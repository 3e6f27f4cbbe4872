-- Window frames, first_value/last_value/lag/lead IGNORE NULLS, lag/lead defaults, percent_rank/cume_dist/ntile, concat, date_trunc, LIKE ESCAPE and
-- INTERSECT/EXCEPT ALL over the --make-nulls tables (nulls in every column).
-- Expected difference: date_trunc of a date is a date in sloth and a
-- timestamp at midnight in DuckDB (the same day).
select a, sum(c) over (partition by a order by b, dt rows between 2 preceding and 1 following) from t where b is not null
select a, avg(d) over (partition by a order by dt, b rows 3 preceding) from t where b is not null and dt is not null
select a, count(c) over (partition by a order by b rows between unbounded preceding and 1 preceding) from t where b is not null
select a, min(s) over (partition by a order by b rows between current row and unbounded following) from t where b is not null
select a, max(c) over (partition by a order by b rows between 1 following and 3 following) from t where b is not null
select a, count(*) over (order by b, dt rows between unbounded preceding and unbounded following) from t
select a, lag(c, 2, -1.0) over (partition by a order by b) from t where b is not null
select a, lead(s, 1, 'none') over (partition by a order by b) from t where b is not null
select a, b, rank() over (partition by a order by dt desc nulls first, b) from t where b is not null
select a, b, percent_rank() over (partition by a order by dt, b) from t where b is not null
select a, b, cume_dist() over (partition by a order by dt nulls first) from t where b is not null
select a, b, percent_rank() over (order by a), cume_dist() over (order by a desc nulls last) from t where b is not null
select a, b, ntile(4) over (partition by a order by b) from t where b is not null
select a, b, ntile(7) over (order by b), ntile(50000) over (order by b) from t where b is not null
select a, percent_rank() over (), cume_dist() over (partition by a), ntile(2) over (partition by a order by b) from t where b is not null
select concat(s, '-', a, d) from t
select date_trunc('month', dt) from t
select date_trunc('week', dt) from t
select date_trunc('quarter', dt), count(*) from t group by 1
select s from t where s like 'A!%%' escape '!'
select a from t intersect all select k from u
select a, s from t except all select k, v from u
select a from t except all select k from u
select a, s from t intersect all select w, v from u
select a, b, c, first_value(c ignore nulls) over (partition by a order by b), last_value(c ignore nulls) over (partition by a order by b), last_value(c ignore nulls) over (partition by a order by b rows between 3 preceding and 1 preceding), first_value(c ignore nulls) over (partition by a order by b rows between current row and unbounded following) from t where a between 0 and 2 and b is not null order by a, b
select s, dt, last_value(d ignore nulls) over (order by dt, b rows between unbounded preceding and current row) from t where a = 4 and dt is not null and b is not null order by dt, b
select a, b, c, lag(c ignore nulls) over (partition by a order by b), lead(c ignore nulls) over (partition by a order by b), lag(c, 2 ignore nulls) over (partition by a order by b), lead(c, 3, -1 ignore nulls) over (partition by a order by b) from t where a between 0 and 2 and b is not null order by a, b
select a, dt, sum(d) over (partition by a order by dt range between interval '400 days' preceding and current row) from t
select a, count(*) over (order by a range between 2 preceding and 1 following), max(s) over (order by a desc range between 1 preceding and 1 following) from t
select a, dt, avg(d) over (partition by a order by dt desc nulls first range between interval 30 days preceding and interval 30 days following) from t
select a, b, sum(d) over (order by b range between 100000000000 preceding and 50000000000 following) from t
select a, d, count(c) over (partition by a order by d range between 100.5 preceding and current row) from t
select a, dt, sum(d) over (partition by a order by dt groups between 2 preceding and 1 following), count(*) over (partition by a order by dt groups between 1 following and unbounded following) from t
select a, b, first_value(b) over (order by b range between 100000000000 preceding and current row), last_value(b) over (order by b desc groups between current row and 2 following) from t where b is not null
select a, s, max(c) over (order by s range between current row and unbounded following), min(d) over (partition by a order by s groups 1 preceding) from t
select a, dt, sum(d) over (partition by a order by dt range between interval '3 months' preceding and interval '1 month 10 days' following), count(*) over (order by dt desc range between interval '1 year' preceding and current row) from t
