-- Population variance and standard deviation, bool_and / bool_or / every,
-- over the --make-nulls tables (nulls in
-- every column), whole-table and per group, with DISTINCT.
select var_pop(c), stddev_pop(c), var_samp(c), stddev_samp(c) from t
select a, var_pop(b), stddev_pop(d) from t group by a order by a
select a, var_pop(distinct b) from t group by a order by a
select var_pop(c) from t where a = 1 and c is not null and b = (select min(b) from t where a = 1 and c is not null)
select bool_and(flag), bool_or(flag) from t
select a, bool_and(flag), bool_or(flag) from t group by a order by a
select bool_and(flag) from t where flag is null
select a, bool_or(distinct flag) from t group by a order by a
select var_pop(c) from t where false
