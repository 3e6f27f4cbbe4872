-- Over TPC-H SF 0.01 (sloth gen tpch --scale 0.01). Expected to differ: integer division,
-- booleans and dates printed differently.
select n_regionkey, count(*), sum(n_nationkey), min(n_name), max(n_name) from nation group by n_regionkey
select o_orderstatus, avg(o_totalprice), stddev_samp(o_totalprice), var_samp(o_totalprice), median(o_totalprice) from orders group by 1
select count(*), count(c_comment), count(distinct c_nationkey) from customer
select c_nationkey, count(*) from customer left join orders on c_custkey = o_custkey where o_orderkey is null group by 1 order by 1
select * from region r full outer join nation n on r.r_regionkey = n.n_regionkey + 3 order by n_nationkey nulls first, r_regionkey
select n_name from nation where n_regionkey not in (select r_regionkey from region where r_name like 'A%') order by 1
select n_name, (select count(*) from customer where c_nationkey = n_nationkey) as c from nation order by c desc, n_name limit 5
select case when o_totalprice > 200000 then 'big' when o_totalprice > 100000 then 'mid' else 'small' end b, count(*) from orders group by 1 order by 1
select l_returnflag, l_linestatus, sum(l_quantity * l_extendedprice) from lineitem group by 1, 2 order by 1, 2
select o_orderdate, count(*) from orders where o_orderdate between date '1995-01-01' and date '1995-01-05' group by 1 order by 1
select extract(year from o_orderdate) y, extract(month from o_orderdate) m, count(*) from orders group by 1, 2 order by 1, 2 limit 10
select substring(c_phone, 1, 2) cc, count(*) from customer group by cc order by cc
select upper(r_name), lower(r_name), length(r_name) from region order by 1
select r_name from region where r_name like '%A%' and r_name not like '%E%' order by 1
select abs(-5), round(2.567, 2), coalesce(null, 3)
select 7 / 2, 7 % 3, -7 / 2, 7.0 / 2
select cast(3.7 as integer), cast('12' as integer) + 1, cast(1 as double) / 3
select n_regionkey, count(*) filter (where n_nationkey > 10) from nation group by 1 order by 1
select ps_partkey, sum(ps_supplycost * ps_availqty) v from partsupp group by ps_partkey order by v desc limit 5
select distinct c_mktsegment from customer order by 1
select c_mktsegment, count(*) c from customer group by 1 having count(*) > 290 order by c
select o_custkey, o_orderkey, row_number() over (partition by o_custkey order by o_orderdate, o_orderkey) rn from orders order by o_custkey, rn limit 20
select n_name, rank() over (order by n_regionkey) from nation order by 2, 1
select r_name from region union select n_name from nation where n_nationkey < 3 order by 1
select r_regionkey from region union all select r_regionkey from region order by 1
select count(*) from lineitem where l_discount in (0.05, 0.06) and l_quantity < 10
select count(*) from lineitem where not (l_quantity < 10 or l_quantity > 40)
select sum(case when l_shipmode = 'AIR' then 1 else 0 end) from lineitem
select count(*) from orders where o_comment like '%special%requests%'
select min(l_shipdate), max(l_shipdate), min(l_commitdate) from lineitem
select o_orderpriority, count(*) from orders where exists (select * from lineitem where l_orderkey = o_orderkey and l_commitdate < l_receiptdate) group by 1 order by 1
select count(*) from (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 200) t
select null is null, 1 = null, null = null
select count(*) from nation n1 cross join nation n2
select n_name from nation order by n_name desc limit 3 offset 2
select c_custkey from customer where c_acctbal > (select avg(c_acctbal) from customer) order by c_acctbal desc limit 3
select l_shipmode, count(distinct l_orderkey) from lineitem group by 1 order by 1
select s_name from supplier where s_suppkey in (select ps_suppkey from partsupp where ps_availqty > 9990) order by 1
select count(*) from orders o join customer c on o.o_custkey = c.c_custkey and c.c_nationkey = 5
select n_name from nation where n_nationkey = any (select 1)
select sum(l_extendedprice) / count(*) , avg(l_extendedprice) from lineitem
select corr(l_quantity, l_extendedprice) from lineitem
select date '1995-03-31' + interval '1' month, date '1996-02-29' + interval '1' year
select o_orderkey % 7 k, count(*) from orders group by k order by k
select count(*) from lineitem where l_shipdate < l_commitdate and l_commitdate < l_receiptdate
select r_name, n_name from region left join nation on r_regionkey = n_regionkey and n_name like 'A%' order by 1, 2
select r_name, n_name from region right join nation on r_regionkey = n_regionkey and r_name like 'A%' order by 2
select c_custkey, o_orderkey from customer left join orders on c_custkey = o_custkey where c_custkey < 5 order by 1, 2
select max(o_totalprice) - min(o_totalprice) from orders
select count(*) from part where p_size between 10 and 20 and p_brand <> 'Brand#12'
select p_type, count(*) from part where p_type like 'PROMO%' group by 1 order by 2 desc, 1 limit 3
select n_regionkey, first(n_name order by n_name) from nation group by 1
select 'a' || 'b'
select count(*) from customer where c_phone like '1_-%'
select l_linenumber, count(*) from lineitem group by 1 order by 1
select sum(l_quantity) from lineitem where l_orderkey in (1, 2, 3, 4, 5, 6, 7)
select n_nationkey, n_name from nation where n_nationkey > 20 or n_name = 'CHINA' order by 1
select cast(o_orderdate as varchar) from orders order by o_orderkey limit 2
select o_orderkey from orders order by o_totalprice desc nulls last limit 3
select avg(c_acctbal) filter (where c_mktsegment = 'BUILDING') from customer
select percentile_cont(0.9) within group (order by c_acctbal) from customer
select n_name from nation qualify row_number() over (partition by n_regionkey order by n_name desc) = 1 order by 1
select * exclude (r_comment) from region order by 1
select count(*) from customer where c_acctbal < 0 and c_mktsegment in ('BUILDING', 'MACHINERY')
select x, count(*) from (select case when c_acctbal < 0 then null else c_nationkey end x from customer) t group by x order by x nulls first
select x from (select case when n_nationkey < 3 then null else n_nationkey end x from nation) t order by x desc nulls first limit 5
select count(x), count(*), sum(x) from (select case when n_nationkey < 3 then null else n_nationkey end x from nation) t
select min(x), max(x) from (select case when n_nationkey < 30 then null else n_nationkey end x from nation) t
select a.n_name, b.n_name from nation a join nation b on a.n_regionkey = b.n_regionkey and a.n_nationkey < b.n_nationkey order by 1, 2 limit 5
select count(*) from lineitem l1 where exists (select * from lineitem l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
select count(*) from orders where o_orderkey not in (select l_orderkey from lineitem where l_quantity > 49)
with t as (select c_nationkey k, count(*) n from customer group by 1) select a.k, a.n, b.n from t a join t b on a.k = b.k + 1 order by 1
select c_custkey, coalesce(sum(o_totalprice), 0) from customer left join orders on c_custkey = o_custkey group by 1 order by 2 desc, 1 limit 5
select count(*), count(o_orderkey) from customer left join orders on c_custkey = o_custkey and o_orderstatus = 'P'
select o_orderstatus, count(*) from orders full join customer on o_custkey = c_custkey and c_nationkey = 1 group by 1 order by 1
select n_name, s_cnt, c_cnt from (select s_nationkey, count(*) s_cnt from supplier group by 1) s join (select c_nationkey, count(*) c_cnt from customer group by 1) c on s_nationkey = c_nationkey join nation on n_nationkey = s_nationkey order by 1
select p_brand, avg(p_retailprice) from part group by 1 having avg(p_retailprice) > (select avg(p_retailprice) from part) order by 1
select count(*) from partsupp where ps_supplycost < (select min(ps_supplycost) * 2 from partsupp)
select c_mktsegment, c_nationkey, count(*), max(c_acctbal) from customer group by 1, 2 order by 3 desc, 1, 2 limit 5
select l_orderkey, count(*) from lineitem group by 1 having count(*) = 7 order by 1 limit 5
select count(*) from lineitem join orders on l_orderkey = o_orderkey join customer on o_custkey = c_custkey where c_nationkey = 3 and l_quantity > 45
select o_orderkey, o_totalprice from orders where o_totalprice in (select max(o_totalprice) from orders group by o_orderpriority) order by 1
select distinct l_shipmode, l_shipinstruct from lineitem order by 1, 2
select s_suppkey from supplier where not exists (select * from partsupp where ps_suppkey = s_suppkey and ps_availqty < 100) order by 1 limit 5
select count(*) from (select * from nation union all select * from nation) t
select n_regionkey, sum(n_nationkey) s from nation group by 1 union all select 99, count(*) from region order by 1
select r_name, (select max(n_name) from nation where n_regionkey = r_regionkey) from region order by 1
select case when c_acctbal < 0 then 'neg' end x, count(*) from customer group by 1 order by 1 nulls last
select count(distinct l_partkey), count(distinct l_suppkey), sum(distinct l_linenumber) from lineitem
select l_returnflag, avg(l_discount), min(l_discount), max(l_tax) from lineitem where l_shipdate > date '1998-01-01' group by 1 order by 1
select o_orderkey from orders order by o_orderdate desc, o_orderkey limit 5 offset 10
select c_name from customer where c_name like 'Customer#00000001%' order by 1
select count(*) from orders where o_orderdate >= date '1995-01-01' and o_orderdate < date '1995-01-01' + interval '3' month
select sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) from lineitem
select l_quantity, count(*) from lineitem where l_quantity > 48 group by 1 order by 1
select ps_partkey, ps_suppkey from partsupp where (ps_partkey, ps_suppkey) in (select l_partkey, l_suppkey from lineitem where l_orderkey = 1) order by 1
select max(length(c_comment)), min(length(c_comment)) from customer
select upper(substring(n_name, 2, 3)) from nation order by 1 limit 3
select c_nationkey, rank() over (partition by c_nationkey order by c_acctbal desc) r, c_custkey from customer qualify r <= 1 order by 1
select n_name, dense_rank() over (order by n_regionkey desc) from nation order by 2, 1 limit 6
select o_custkey, sum(o_totalprice) from orders where o_custkey in (select c_custkey from customer where c_acctbal > 9000) group by 1 order by 2 desc limit 3
select count(*) from customer c1 where c1.c_acctbal > (select avg(c2.c_acctbal) from customer c2 where c2.c_nationkey = c1.c_nationkey)
select n1.n_name, n2.n_name from nation n1, nation n2 where n1.n_regionkey = n2.n_regionkey and n1.n_name < n2.n_name and n1.n_regionkey = 0 order by 1, 2
select sum(case when o_orderpriority in ('1-URGENT', '2-HIGH') then 1 else 0 end), sum(case when o_orderpriority not in ('1-URGENT', '2-HIGH') then 1 else 0 end) from orders
select cast(l_quantity as double) / 3, cast(l_discount as varchar) from lineitem order by l_orderkey, l_linenumber limit 3
select o_orderdate - interval '7' day from orders order by o_orderkey limit 2
select count(*) from lineitem where l_receiptdate - l_shipdate > 20
select extract(day from o_orderdate), count(*) from orders group by 1 order by 1 limit 3
select r_regionkey from region where r_regionkey not in (select n_regionkey from nation where n_nationkey > 100) order by 1
select r_regionkey from region where r_regionkey not in (select case when n_nationkey = 0 then null else n_regionkey end from nation where n_nationkey < 2)
select count(*) from region where r_regionkey in (select null)
select avg(x) from (select case when n_nationkey % 2 = 0 then n_nationkey end x from nation) t
select n_regionkey, count(*) from nation where n_name > 'M' group by all order by 1
select count(*) from nation, region
select max(o_orderdate) - min(o_orderdate) from orders
select round(avg(c_acctbal), 2), round(sum(c_acctbal) / count(*), 2) from customer
select l_linenumber, l_quantity from lineitem where l_orderkey = 3 order by 1 desc
select n_name, n_regionkey, count(*) over (partition by n_regionkey) from nation order by 1
select n_name, sum(n_nationkey) over (partition by n_regionkey) s, avg(n_nationkey) over (partition by n_regionkey) a from nation order by 1
select n_name, n_nationkey * 100.0 / sum(n_nationkey) over () share from nation order by 1
select c_nationkey, c_custkey, c_acctbal - avg(c_acctbal) over (partition by c_nationkey) d from customer order by 2 limit 10
select o_orderpriority, min(o_totalprice) over (partition by o_orderpriority, o_orderstatus), max(o_orderdate) over (partition by o_orderpriority) from orders order by o_orderkey limit 10
select l_returnflag, count(*) over (), sum(l_quantity) over (partition by l_returnflag) from lineitem order by l_orderkey, l_linenumber limit 5
select n_regionkey, count(*) c, sum(count(*)) over () t from nation group by n_regionkey order by 1
select s_nationkey, s_suppkey from supplier qualify s_acctbal = max(s_acctbal) over (partition by s_nationkey) order by 1
select n_name, stddev_samp(n_nationkey) over (partition by n_regionkey), median(n_nationkey) over (partition by n_regionkey) from nation order by 1
select n_name, lag(n_name) over (order by n_name), lead(n_name, 2) over (order by n_name) from nation order by 1
select n_regionkey, n_name, lag(n_nationkey) over (partition by n_regionkey order by n_name desc) from nation order by 1, 2
select o_custkey, o_orderdate, o_orderkey, o_totalprice - lag(o_totalprice) over (partition by o_custkey order by o_orderdate, o_orderkey) from orders order by 1, 2, 3 limit 50
select n_name, lag(n_name, 0) over (order by n_name) from nation order by 1
select greatest(1, 2), least(3, 1), greatest(1, null, 3), least(null, null)
select floor(2.5), ceil(2.5), floor(-2.5), ceil(-2.5), trunc(-2.7), sign(-2.5), sign(3), floor(7)
select sqrt(4.0), power(2, 10), ln(2.718281828), exp(1.0), log10(100.0), log(1000), log2(8), cbrt(27.0)
select mod(7, 3), mod(-7, 3)
select position('b' in 'abc'), strpos('abc', 'c'), strpos('abc', 'z')
select left('abcd', 2), right('abcd', 2), left('abcd', -1), right('abcd', -1)
select lpad('7', 3, '0'), rpad('a', 3, '-'), lpad('hello', 3, 'x'), lpad('7', 4, 'ab')
select split_part('a,b,c', ',', 2), split_part('a,b,c', ',', -1), split_part('a,b,c', ',', 5)
select reverse('abc'), repeat('ab', 3), repeat('x', 0)
select date_part('year', date '1995-03-04'), date_part('month', date '1995-03-04'), date_part('doy', date '1995-03-04')
select n_name, left(n_name, 3), right(n_name, 2), lpad(n_name, 12, '*'), strpos(n_name, 'A'), reverse(n_name), split_part(n_comment, ' ', 2) from nation order by 1
select c_custkey, floor(c_acctbal), ceil(c_acctbal), trunc(c_acctbal), sign(c_acctbal), round(sqrt(abs(c_acctbal)), 6), greatest(c_acctbal, 0), least(c_acctbal, c_nationkey * 100) from customer order by 1 limit 50
select degrees(pi()), radians(180), sin(0), cos(0), round(atan(1) * 4, 10)
select l_orderkey, power(l_quantity, 2), greatest(l_shipdate, l_commitdate, l_receiptdate), least(l_shipmode, l_shipinstruct) from lineitem order by 1, 2 limit 30
select n_regionkey, first(n_name order by n_name) from nation group by 1
select n_regionkey, first(n_name order by n_nationkey desc), last(n_name order by n_nationkey), last(n_nationkey order by n_name desc) from nation group by 1
select o_custkey, min_by(o_orderkey, o_totalprice), max_by(o_orderdate, o_totalprice), arg_min(o_orderpriority, o_orderdate) from orders where o_custkey < 200 group by 1
select l_returnflag, max_by(l_orderkey * 10 + l_linenumber, l_extendedprice), min_by(l_shipmode, l_extendedprice) from lineitem group by 1
select first(c_name order by c_acctbal desc), last(c_name order by c_acctbal desc), min_by(c_name, c_acctbal) from customer
select r_name, string_agg(n_name, ', ' order by n_name) from nation join region on n_regionkey = r_regionkey group by 1
select string_agg(r_name, '|' order by r_regionkey desc) from region
select n_regionkey, string_agg(n_nationkey, ',' order by n_name desc), count(*) from nation group by 1
select o_orderstatus, length(string_agg(o_orderpriority, '' order by o_orderkey)), count(*) from orders group by 1
select count(*) filter (where exists (select 1 from supplier where s_nationkey = n_nationkey and s_acctbal > 9000)) from nation
select sum((select r_regionkey from region where r_regionkey = n_regionkey)) from nation
select n_regionkey, sum(case when n_nationkey in (select s_nationkey from supplier where s_acctbal > 9000) then 1 else 0 end), count(*) from nation group by 1 order by 1
select n_regionkey, max((select count(*) from supplier where s_nationkey = n_nationkey)) from nation group by 1 order by 1
