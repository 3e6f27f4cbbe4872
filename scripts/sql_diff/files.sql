-- Inputs named in SQL; data from `sql_diff.py --make-files DIR`, paths relative to DIR.
select count(*), sum(amt) from 'sales/*/*/*.parquet'
select year, count(*), sum(amt) from read_parquet('sales/*/*/*.parquet', hive_partitioning = true) group by year
select region, count(*) from read_parquet('sales/*/*/*.parquet', hive_partitioning = true) where year = 2022 group by region
select count(*) from read_parquet('sales/*/*/*.parquet', hive_partitioning = true) where region = 'a/b' and year > 2020
select count(*) from read_parquet('sales/*/*/*.parquet', hive_partitioning = true) where region is null
select k, r, a from read_csv('semi.txt', delim = ';', header = false, nullstr = 'NA') as t(k, r, a) where k < 20
select count(*), count(r) from read_csv('semi.txt', delim = ';', header = false, nullstr = 'NA') as t(k, r, a)
select region, count(*), sum(amt) from read_json('events.ndjson') group by region
select count(*) from 'parts/*.parquet'
select year, sum(amt) from read_parquet(['parts/p1.parquet', 'parts/p2.parquet']) group by year
select count(*) from 'parts/p1.parquet' a join 'events.ndjson' b on a.id = b.id
select count(*), count(amt), count(region), sum(amt) from read_parquet('mixed/*.parquet', union_by_name = true)
select region, count(*) from read_parquet('mixed/*.parquet', union_by_name = true) where id between 90 and 120 group by region
select count(*) from read_csv('empty.csv')
select note, count(*) from read_csv('quoted.csv') group by note
select id, note from read_csv('quoted.csv') where note like '%"%' order by id
select min(day), max(day), count(distinct day) from read_csv('eu_dates.csv', dateformat = '%d/%m/%Y')
select day, sum(amt) from read_csv('eu_dates.csv', dateformat = '%d/%m/%Y') where day < date '2024-01-05' group by day
