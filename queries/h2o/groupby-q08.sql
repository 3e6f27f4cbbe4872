-- largest two v3 per id6: row_number() over a partition, kept by a filter on it (the window keeps two rows per partition)
select id6, v3 as largest2_v3 from (select id6, v3, row_number() over (partition by id6 order by v3 desc) as order_v3 from x where v3 is not null) sub_query where order_v3 <= 2;
