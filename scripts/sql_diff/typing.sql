-- Untyped NULL in functions and operators, quoted literals that take the
-- other side's type, bitwise operators and PostgreSQL's LIKE operators,
-- over the --make-nulls tables. (PostgreSQL's `~` is a partial regular
-- expression match, DuckDB's a full one: not compared here.)
select abs(null), -null, upper(null), substr(s, cast(null as int)), round(c, null), md5(null), null & 1, coalesce(null, a) from t order by a nulls first limit 5
select count(*) from t where a in ('1', '15', '3')
select count(*) from t where a not in ('1', '15') and b in ('12', b)
select coalesce(a, '-1'), coalesce(c, '0.5') from t order by 1, 2 limit 20
select case when 'true' then a else '0' end from t order by 1 nulls first limit 10
select a & 6, a | 9, xor(a, 5), abs(a) << 2, b >> 3, 2 ^ 3 from t where a is not null order by a, b limit 20
select s ~~ 'A%', s !~~ '%x', s ~~* 'b%', s !~~* '%X' from t order by s nulls first limit 30
select count(*) from t where s ~~ 'C%' or s !~~* '%xxx%'
select cast(abs(a) as uinteger), cast(abs(a) as utinyint) + 1, sum(cast(abs(a) as usmallint)), cast(b as hugeint) from t where a is not null group by all order by 1, 2, 4 nulls first limit 30
select s, regexp_extract(s, 'x+'), regexp_extract(s, '([A-E])(x*)', 2), regexp_replace(s, 'x+', '-', 'g') from t order by s nulls first limit 40
