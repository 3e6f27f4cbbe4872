select l_orderkey, l_extendedprice, l_comment from lineitem order by l_extendedprice desc, l_orderkey limit 5;
