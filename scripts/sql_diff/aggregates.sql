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
-- Correlation, covariance and least-squares statistics (y, x), whole-table
-- and per group; groups of a few rows through a filter.
select corr(c, b), covar_pop(c, b), covar_samp(c, b), regr_count(c, b) from t
select regr_slope(c, d), regr_intercept(c, d), regr_r2(c, d), regr_avgx(c, d), regr_avgy(c, d) from t
select regr_sxx(c, b), regr_syy(c, b), regr_sxy(c, b) from t
select a, corr(b, c), covar_samp(d, c), regr_slope(b, d), regr_count(b, d) from t group by a order by a
select a, regr_intercept(c, a), regr_r2(c, b) from t where c > 40 group by a order by a
select covar_pop(c, d), regr_count(c, d) from t where false
-- bit_and / bit_or / bit_xor of INTEGER and BIGINT, with DISTINCT and
-- groups of nulls.
select bit_and(a), bit_or(a), bit_xor(a), bit_and(b), bit_or(b), bit_xor(b) from t
select a, bit_or(b), bit_xor(b), bit_and(b + 1000000000000) from t group by a order by a
select bit_xor(distinct a), bit_xor(a) from t where a > 10
select bit_and(a) from t where a is null
-- Digests and date construction / formatting.
select md5(s), sha256(s) from t order by s nulls first limit 20
select make_date(1990 + a % 30, 1 + abs(a) % 12, 1 + abs(a) % 28) from t order by 1 nulls first limit 30
select strftime(dt, '%Y/%m/%d %a %j %b %B %A') from t order by dt nulls first limit 30
-- array_agg (nulls kept) in key order; DuckDB's list().
select a, array_agg(b order by b nulls first) from t where a between 0 and 3 and c > 30 group by a order by a
select flag, array_agg(s order by s desc nulls last) from t where a = 7 and c < -40 group by flag order by flag nulls first
select array_agg(a order by a) from t where c > 49.9
select k % 5, list(v order by v nulls first) from u where k between 0 and 9 group by 1 order by 1
select array_agg(b) from t where false
