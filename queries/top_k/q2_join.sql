select l_orderkey, o_orderdate, l_extendedprice, l_comment from lineitem join orders on l_orderkey = o_orderkey order by l_extendedprice desc, l_orderkey limit 5;
