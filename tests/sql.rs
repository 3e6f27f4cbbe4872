//! SQL front end on TPC-H SF 0.01 generated in memory: answers checked
//! against naive computations, optimizer on/off/each-rule-off equivalence,
//! and the error paths.

use crate::common;

use std::sync::OnceLock;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::{Date32Type, Decimal128Type};
use sloth::datagen::{TPCH_TABLES, tpch_table};
use sloth::prelude::*;
use sloth::sql::SqlContext;

fn tables() -> &'static Vec<(String, Vec<RecordBatch>, arrow::datatypes::SchemaRef)> {
    static T: OnceLock<Vec<(String, Vec<RecordBatch>, arrow::datatypes::SchemaRef)>> =
        OnceLock::new();
    T.get_or_init(|| {
        TPCH_TABLES
            .iter()
            .map(|t| {
                let (schema, batches) = tpch_table(t, 0.01).unwrap();
                (t.to_string(), batches, schema)
            })
            .collect()
    })
}

fn ctx(options: OptimizerOptions) -> SqlContext {
    common::tpch_context(options)
}

/// Each query fails, when planned or run, with an error that says `what`.
fn assert_refused(c: &SqlContext, cases: &[(&str, &str)]) {
    for (sql, what) in cases {
        let e = c
            .sql(sql)
            .and_then(|lf| lf.collect())
            .unwrap_err()
            .to_string();
        assert!(e.contains(what), "{sql}: {e}");
    }
}

/// The rows `sql` gives over `c`, sorted, as CSV.
fn sorted_csv(c: &SqlContext, sql: &str) -> String {
    c.sql(sql)
        .unwrap()
        .collect()
        .unwrap()
        .to_sorted_csv()
        .unwrap()
}

fn query(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/queries/tpch/{name}.sql",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn lineitem() -> &'static Vec<RecordBatch> {
    &tables().iter().find(|(n, ..)| n == "lineitem").unwrap().1
}

#[test]
fn q6_matches_a_naive_scan() {
    let df = ctx(OptimizerOptions::default())
        .sql(query("q06").trim_end_matches([';', '\n']))
        .unwrap()
        .collect()
        .unwrap();
    let (lo, hi) = (
        sloth::expr::parse_date32("1994-01-01").unwrap(),
        sloth::expr::parse_date32("1995-01-01").unwrap(),
    );
    let mut revenue: i128 = 0;
    for b in lineitem() {
        let col = |n: &str| b.column(b.schema().index_of(n).unwrap()).clone();
        let (q, p, d, s) = (
            col("l_quantity"),
            col("l_extendedprice"),
            col("l_discount"),
            col("l_shipdate"),
        );
        let (q, p, d) = (
            q.as_primitive::<Decimal128Type>(),
            p.as_primitive::<Decimal128Type>(),
            d.as_primitive::<Decimal128Type>(),
        );
        let s = s.as_primitive::<Date32Type>();
        for i in 0..b.num_rows() {
            // scale 2: 0.05 = 5, 24 = 2400
            if s.value(i) >= lo
                && s.value(i) < hi
                && (5..=7).contains(&d.value(i))
                && q.value(i) < 2400
            {
                revenue += p.value(i) * d.value(i);
            }
        }
    }
    let expected = format!("{}.{:04}", revenue / 10_000, revenue % 10_000);
    assert_eq!(common::rows_of(&df), vec![expected]);
}

#[test]
fn q1_counts_and_sums_match_a_naive_scan() {
    let df = ctx(OptimizerOptions::default())
        .sql(query("q01").trim_end_matches([';', '\n']))
        .unwrap()
        .collect()
        .unwrap();
    let cutoff = sloth::expr::parse_date32("1998-09-02").unwrap();
    let mut groups: std::collections::BTreeMap<(String, String), (i128, i64)> = Default::default();
    for b in lineitem() {
        let col = |n: &str| b.column(b.schema().index_of(n).unwrap()).clone();
        let (rf, ls) = (
            arrow::compute::cast(&col("l_returnflag"), &arrow::datatypes::DataType::Utf8).unwrap(),
            arrow::compute::cast(&col("l_linestatus"), &arrow::datatypes::DataType::Utf8).unwrap(),
        );
        let (rf, ls) = (rf.as_string::<i32>(), ls.as_string::<i32>());
        let q = col("l_quantity");
        let q = q.as_primitive::<Decimal128Type>();
        let s = col("l_shipdate");
        let s = s.as_primitive::<Date32Type>();
        for i in 0..b.num_rows() {
            if s.value(i) <= cutoff {
                let e = groups
                    .entry((rf.value(i).into(), ls.value(i).into()))
                    .or_default();
                e.0 += q.value(i);
                e.1 += 1;
            }
        }
    }
    let got: Vec<String> = common::rows_of(&df)
        .iter()
        .map(|r| {
            let c: Vec<&str> = r.split('|').collect();
            format!("{}|{}|{}|{}", c[0], c[1], c[2], c[9])
        })
        .collect();
    let want: Vec<String> = groups
        .iter()
        .map(|((a, b), (q, n))| format!("{a}|{b}|{}.{:02}|{n}", q / 100, q % 100))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn sql_features() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(q("select count(*) from nation"), vec!["25"]);
    assert_eq!(
        q("select r_name from region order by 1 desc limit 2 offset 1"),
        vec!["EUROPE", "ASIA"]
    );
    assert_eq!(
        q("select count(distinct n_regionkey) as k from nation"),
        vec!["5"]
    );
    assert_eq!(
        q(
            "with r as (select r_regionkey as k, r_name from region) select r_name, count(*) as n from nation join r on n_regionkey = k group by r_name having count(*) >= 5 order by r_name limit 2"
        ),
        vec!["AFRICA|5", "AMERICA|5"]
    );
    assert_eq!(
        q("select n_name from nation where n_name like 'UNITED%' order by n_name"),
        vec!["UNITED KINGDOM", "UNITED STATES"]
    );
    assert_eq!(
        q(
            "select n_nationkey from nation where n_nationkey in (1, 2) union all select r_regionkey from region where r_regionkey = 0 order by 1"
        ),
        vec!["0", "1", "2"]
    );
    assert_eq!(
        q("select distinct n_regionkey from nation where n_regionkey < 2 order by n_regionkey"),
        vec!["0", "1"]
    );
    assert_eq!(
        q(
            "select case when n_nationkey < 1 then 'low' else 'high' end as band, substring(n_name from 1 for 3) as p from nation where n_nationkey < 2 order by band"
        ),
        vec!["high|ARG", "low|ALG"]
    );
    assert_eq!(
        q(
            "select n1.n_name, n2.n_name from nation n1 join nation n2 on n1.n_nationkey = n2.n_nationkey where n1.n_nationkey = 3"
        ),
        vec!["CANADA|CANADA"]
    );
    assert_eq!(
        q(
            "select r_name from region left join nation on r_regionkey = n_nationkey + 100 where n_name is null order by r_name limit 1"
        ),
        vec!["AFRICA"]
    );
    assert_eq!(
        q(
            "select extract(year from date '1995-03-15') as y, cast(5 as double) / 2 as h from region limit 1"
        ),
        vec!["1995|2.5"]
    );
}

#[test]
fn sql_errors_are_clear() {
    let c = ctx(OptimizerOptions::default());
    let e = c
        .sql("select * from lineitem where")
        .unwrap_err()
        .to_string();
    assert!(e.contains("syntax") && e.contains("Line: 1"), "{e}");
    let e = c.sql("select * from nosuch").unwrap_err().to_string();
    assert!(
        e.contains("nosuch") && e.contains("lineitem") && e.contains("region"),
        "{e}"
    );
    let e = c.sql("select nope from region").unwrap_err().to_string();
    assert!(e.contains("'nope'") && e.contains("region.r_name"), "{e}");
    let e = c
        .sql("select r_name, stddev(r_regionkey) over (order by r_name) from region")
        .unwrap_err()
        .to_string();
    assert!(e.contains("running stddev()"), "{e}");
    let e = c
        .sql("select r_name, count(*) from region group by r_regionkey")
        .unwrap_err()
        .to_string();
    assert!(e.contains("GROUP BY"), "{e}");
    let e = c
        .sql("select r_name + 1 from region")
        .unwrap_err()
        .to_string();
    assert!(e.contains("Utf8") || e.contains("Utf8View"), "{e}");
}

#[test]
fn aggregate_filter_counts_only_the_rows_it_names() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // FILTER against the same counts and sums computed with WHERE.
    let filtered = q(
        "select o_orderpriority, count(*) filter (where o_orderstatus = 'F'), sum(o_totalprice) filter (where o_orderstatus = 'F'), count(distinct o_custkey) filter (where o_orderstatus = 'F') from orders group by 1 order by 1",
    );
    let with_where = q(
        "select o_orderpriority, count(*), sum(o_totalprice), count(distinct o_custkey) from orders where o_orderstatus = 'F' group by 1 order by 1",
    );
    assert_eq!(filtered, with_where);
    let all = q("select o_orderpriority, count(*) from orders group by 1 order by 1");
    assert_ne!(
        filtered
            .iter()
            .map(|r| r.split('|').nth(1).unwrap())
            .collect::<Vec<_>>(),
        all.iter()
            .map(|r| r.split('|').nth(1).unwrap())
            .collect::<Vec<_>>(),
        "FILTER must not count every row"
    );
    // No row qualifies: count 0, sum null; the column name keeps the
    // literal's case.
    let df = c
        .sql("select count(*) filter (where r_name = 'Mars'), sum(r_regionkey) filter (where r_name = 'Mars') from region")
        .unwrap()
        .collect()
        .unwrap();
    assert_eq!(common::rows_of(&df), vec!["0|null"]);
    assert!(
        df.schema().field(0).name().contains("'Mars'"),
        "{}",
        df.schema().field(0).name()
    );
    assert_eq!(
        q(
            "select percentile_cont(0.25) within group (order by n_nationkey), percentile_cont(0.25) within group (order by n_nationkey desc), quantile(n_nationkey, 0.25) from nation"
        ),
        vec!["6.0|18.0|6.0"]
    );
    for (sql, what) in [
        (
            "select first(n_name) filter (where n_regionkey = 1) from nation",
            "FILTER on first/last",
        ),
        (
            "select upper(distinct n_name) from nation",
            "DISTINCT in the non-aggregate",
        ),
    ] {
        let e = c.sql(sql).unwrap_err().to_string();
        assert!(e.contains(what), "{sql}: {e}");
    }
}

#[test]
fn top_fetch_qualify_exclude_and_select_without_from() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q("select r_name from region order by r_name fetch first 2 rows only"),
        vec!["AFRICA", "AMERICA"]
    );
    assert_eq!(
        q("select r_name from region order by r_name offset 1 rows fetch next 1 row only"),
        vec!["AMERICA"]
    );
    assert_eq!(
        q("select top 2 r_name from region order by r_name desc"),
        vec!["MIDDLE EAST", "EUROPE"]
    );
    // QUALIFY: the first nation of each region by name.
    assert_eq!(
        q(
            "select n_regionkey, n_name from nation qualify row_number() over (partition by n_regionkey order by n_name) = 1 order by n_regionkey"
        ),
        q("select n_regionkey, min(n_name) from nation group by n_regionkey order by n_regionkey")
    );
    // QUALIFY and HAVING may name select-list aliases.
    assert_eq!(
        q(
            "select c_nationkey, rank() over (partition by c_nationkey order by c_acctbal desc, c_custkey) r, c_custkey from customer qualify r <= 1 order by 1"
        ),
        q(
            "select c_nationkey, rank() over (partition by c_nationkey order by c_acctbal desc, c_custkey) r, c_custkey from customer qualify rank() over (partition by c_nationkey order by c_acctbal desc, c_custkey) <= 1 order by 1"
        )
    );
    assert_eq!(
        q(
            "select n_regionkey, count(*) as n from nation group by 1 having n >= 5 and n_regionkey < 2 order by 1"
        ),
        vec!["0|5", "1|5"]
    );
    // QUALIFY over an aggregate and a window of it.
    assert_eq!(
        q(
            "select n_regionkey, count(*) as n from nation group by n_regionkey qualify rank() over (order by n_regionkey desc) <= 2 order by 1"
        ),
        vec!["3|5", "4|5"]
    );
    let df = c
        .sql("select * exclude (r_comment) from region limit 1")
        .unwrap()
        .collect()
        .unwrap();
    let names: Vec<String> = df
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, vec!["r_regionkey", "r_name"]);
    assert_eq!(
        q("select n.* exclude (n_comment, n_name) from nation n where n_nationkey = 3"),
        vec!["3|1"]
    );
    let e = c
        .sql("select * exclude (nope) from region")
        .unwrap_err()
        .to_string();
    assert!(e.contains("'nope'") && e.contains("r_name"), "{e}");
    assert_eq!(q("select 1 + 1 as two, 'x' as s"), vec!["2|x"]);
    assert_eq!(
        q("select r_name from region where r_regionkey = (select 2)"),
        vec!["ASIA"]
    );
    assert_eq!(
        q(
            "select n_regionkey, count(*), max(n_name) from nation where n_nationkey < 9 group by all order by 1"
        ),
        q(
            "select n_regionkey, count(*), max(n_name) from nation where n_nationkey < 9 group by n_regionkey order by 1"
        )
    );
    assert_eq!(
        q("select n_regionkey % 2 as odd, count(*) c from nation group by all order by odd"),
        vec!["0|15", "1|10"]
    );
    // ALL keeps duplicates, as no quantifier does.
    assert_eq!(q("select all n_regionkey from nation").len(), 25);
}

#[test]
fn intervals_add_every_part_they_spell_out() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q(
            "select date '1995-01-15' + interval '1 year 2 months 3 days', date '1995-01-15' + interval '2' month, date '1995-01-15' - interval '1 week'"
        ),
        vec!["1996-03-18|1995-03-15|1995-01-08"]
    );
    for (sql, what) in [
        (
            "select date '1995-01-15' + interval '1 year 2'",
            "invalid interval",
        ),
        (
            "select date '1995-01-15' + interval '1 hour'",
            "interval unit 'hour'",
        ),
        (
            "select date '1995-01-15' + interval '1-2' year to month",
            "TO MONTH",
        ),
    ] {
        let e = c.sql(sql).unwrap_err().to_string();
        assert!(e.contains(what), "{sql}: {e}");
    }
}

#[test]
fn casts_to_integers_round_half_away_from_zero() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q(
            "select cast(3.7 as integer), cast(-3.5 as integer), cast(2.5 as bigint), cast(cast(3.5 as double) as int), cast(-2.4 as integer), cast(7 as smallint)"
        ),
        vec!["4|-4|3|4|-2|7"]
    );
    // Over a column (no constant folding): never more than one half away
    // (a truncating cast is, for about half the rows).
    assert_eq!(
        q(
            "select count(*) from customer where abs(c_acctbal - cast(c_acctbal as bigint)) > 0.5 or abs(c_acctbal - cast(cast(c_acctbal as double) as bigint)) > 0.5"
        ),
        vec!["0"]
    );
    // Out of range: an error (when planned or run), not a null.
    let e = c
        .sql("select cast(300 as tinyint)")
        .and_then(|lf| lf.collect())
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot cast") || e.contains("300"), "{e}");
}

#[test]
fn string_concatenation_and_quantified_subqueries() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q("select r_name || '-' || r_regionkey, 'x' || 'y' from region order by 1 limit 2"),
        vec!["AFRICA-0|xy", "AMERICA-1|xy"]
    );
    assert_eq!(
        q(
            "select n_name, nullif(n_regionkey, 1), nullif(n_name, 'BRAZIL') from nation where n_nationkey < 3 order by 1"
        ),
        vec![
            "ALGERIA|0|ALGERIA",
            "ARGENTINA|null|ARGENTINA",
            "BRAZIL|null|null"
        ]
    );
    assert_eq!(
        q("select n_name from nation where n_name ilike 'c%' or n_name not ilike '%a%' order by 1"),
        vec![
            "CANADA",
            "CHINA",
            "EGYPT",
            "MOROCCO",
            "PERU",
            "UNITED KINGDOM"
        ]
    );
    assert_eq!(
        q(
            "select '[' || trim('  a b  ') || ']', '[' || ltrim('  a ') || ']', '[' || rtrim('  a ') || ']', trim(trailing from 'x  '), replace('a-b-c', '-', '+'), replace(r_name, 'A', '') from region where r_regionkey = 0"
        ),
        vec!["[a b]|[a ]|[  a]|x|a+b+c|FRIC"]
    );
    // 1995-03-15 is a Wednesday, the 74th day of the first quarter.
    assert_eq!(
        q(
            "select extract(quarter from date '1995-03-15'), extract(dow from date '1995-03-15'), extract(doy from date '1995-03-15'), extract(quarter from date '1995-12-31')"
        ),
        vec!["1|3|74|4"]
    );
    // Null in, null out; dates join as their text.
    assert_eq!(
        q(
            "select n_name || case when n_nationkey < 2 then null else '!' end, date '1995-03-15' || '' from nation where n_nationkey < 3 order by n_nationkey"
        ),
        vec!["null|1995-03-15", "null|1995-03-15", "BRAZIL!|1995-03-15"]
    );
    assert_eq!(
        q(
            "select n_name from nation where n_regionkey = any (select r_regionkey from region where r_name = 'ASIA') order by 1"
        ),
        q(
            "select n_name from nation where n_regionkey in (select r_regionkey from region where r_name = 'ASIA') order by 1"
        )
    );
    assert_eq!(
        q(
            "select count(*) from nation where n_regionkey <> all (select r_regionkey from region where r_name like 'A%')"
        ),
        // AFRICA, AMERICA and ASIA have 5 nations each.
        vec!["10"]
    );
}

#[test]
fn is_true_and_is_false_treat_null_as_neither() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // b: null for keys 0-4, true for 5-14, false for 15-24.
    let t =
        "(select case when n_nationkey < 5 then null else n_nationkey < 15 end as b from nation) t";
    assert_eq!(
        q(&format!(
            "select count(*) filter (where b is true), count(*) filter (where b is not true), count(*) filter (where b is false), count(*) filter (where b is not false) from {t}"
        )),
        vec!["10|15|10|15"]
    );
}

#[test]
fn window_aggregates_cover_whole_partitions() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // The same numbers as a group-by joined back to its rows.
    assert_eq!(
        q(
            "select n_name, count(*) over (partition by n_regionkey), sum(n_nationkey) over (partition by n_regionkey), max(n_name) over () from nation order by n_name"
        ),
        q(
            "select n_name, c, s, m from nation join (select n_regionkey k, count(*) c, sum(n_nationkey) s from nation group by 1) g on n_regionkey = k, (select max(n_name) m from nation) x order by n_name"
        )
    );
    // Inside expressions, over an aggregation, and in QUALIFY.
    assert_eq!(
        q(
            "select n_regionkey, count(*) * 100 / sum(count(*)) over () pct from nation group by 1 order by 1"
        ),
        vec!["0|20", "1|20", "2|20", "3|20", "4|20"]
    );
    assert_eq!(
        q(
            "select n_regionkey, n_name from nation qualify n_nationkey = max(n_nationkey) over (partition by n_regionkey) order by 1"
        ),
        q(
            "select n_regionkey, n_name from nation where n_nationkey in (select max(n_nationkey) from nation group by n_regionkey) order by 1"
        )
    );
    for (sql, what) in [
        (
            "select median(n_nationkey) over (order by n_name) from nation",
            "running median()",
        ),
        (
            "select count(distinct n_regionkey) over () from nation",
            "DISTINCT in the window function",
        ),
    ] {
        let e = c.sql(sql).unwrap_err().to_string();
        assert!(
            e.contains("not supported") && e.contains(what),
            "{sql}: {e}"
        );
    }
}

#[test]
fn lag_and_lead_stop_at_partition_edges() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q(
            "select n_name, lag(n_name) over (partition by n_regionkey order by n_name), lead(n_nationkey, 2) over (partition by n_regionkey order by n_name) from nation where n_regionkey = 1 order by n_name"
        ),
        vec![
            "ARGENTINA|null|3",
            "BRAZIL|ARGENTINA|17",
            "CANADA|BRAZIL|24",
            "PERU|CANADA|null",
            "UNITED STATES|PERU|null",
        ]
    );
    // Offset 0 is the row itself.
    assert_eq!(
        q("select n_name from nation qualify lag(n_name, 0) over (order by n_name) = n_name").len(),
        25
    );
    // Offsets are part of the default column names, so two lags of one
    // column are two columns.
    let lags = c
        .sql("select lag(n_name) over (order by n_name), lag(n_name, 2) over (order by n_name), lead(n_name, 3) over (order by n_name) from nation")
        .unwrap();
    assert_eq!(
        lags.schema()
            .unwrap()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect::<Vec<_>>(),
        [
            "lag(n_name) over (order by n_name)",
            "lag(n_name, 2) over (order by n_name)",
            "lead(n_name, 3) over (order by n_name)"
        ]
    );
    for (sql, what) in [
        ("select lag(n_name) over () from nation", "needs ORDER BY"),
        (
            "select lag(n_name, 1, 'x', 'y') over (order by n_name) from nation",
            "takes a value, an offset and a default",
        ),
        (
            "select lag(n_name, n_nationkey) over (order by n_name) from nation",
            "integer constant",
        ),
    ] {
        let e = c.sql(sql).unwrap_err().to_string();
        assert!(e.contains(what), "{sql}: {e}");
    }
}

#[test]
fn running_aggregates_include_every_peer_of_the_current_row() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // Region 1's nations; ordered by their (equal) region key all five are
    // peers, and min by descending key runs from UNITED STATES (24) down.
    assert_eq!(
        q(
            "select n_name, sum(n_nationkey) over (partition by n_regionkey order by n_name), count(*) over (order by n_regionkey), min(n_name) over (partition by n_regionkey order by n_nationkey desc), avg(n_nationkey) over (partition by n_regionkey order by n_name) from nation where n_regionkey = 1 order by n_name"
        ),
        vec![
            "ARGENTINA|1|5|ARGENTINA|1.0",
            "BRAZIL|3|5|BRAZIL|1.5",
            "CANADA|6|5|CANADA|2.0",
            "PERU|23|5|PERU|5.75",
            "UNITED STATES|47|5|UNITED STATES|9.4",
        ]
    );
    // A running total reaches the whole partition's on its last peers.
    assert_eq!(
        q(
            "select count(*) from (select c_nationkey, sum(c_acctbal) over (partition by c_nationkey order by c_mktsegment) r, sum(c_acctbal) over (partition by c_nationkey) t, c_mktsegment, max(c_mktsegment) over (partition by c_nationkey) m from customer) x where c_mktsegment = m and r <> t"
        ),
        vec!["0"]
    );
}

#[test]
fn intersect_and_except_compare_whole_rows_with_nulls_equal() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // Left: null, 0..4 (null for keys 0-2); right: null, 1..4.
    let left = "select case when n_nationkey < 3 then null else n_regionkey end x from nation";
    let right = "select case when r_regionkey = 0 then null else r_regionkey end from region";
    assert_eq!(
        q(&format!("{left} intersect {right} order by 1 nulls first")),
        vec!["null", "1", "2", "3", "4"]
    );
    assert_eq!(q(&format!("{left} except {right} order by 1")), vec!["0"]);
    assert_eq!(
        q(
            "select n_regionkey, n_name from nation except select n_regionkey, n_name from nation where n_nationkey > 0"
        ),
        vec!["0|ALGERIA"]
    );
    for (sql, what) in [
        (
            "select n_regionkey from nation intersect by name select 1",
            "INTERSECT BY NAME",
        ),
        (
            "select n_regionkey, n_name from nation except select 1",
            "same number of columns",
        ),
    ] {
        let e = c.sql(sql).unwrap_err().to_string();
        assert!(e.contains(what), "{sql}: {e}");
    }
}

/// date_trunc groups dates by their period's first day; concat reads a
/// null as '' where `||` gives null.
#[test]
fn date_trunc_and_concat() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q(
            "select year(m), month(m), day(m), n from (select date_trunc('month', o_orderdate) m, count(*) n from orders group by 1) t order by 1, 2"
        ),
        q(
            "select year(o_orderdate), month(o_orderdate), 1, count(*) from orders group by 1, 2 order by 1, 2"
        )
    );
    // Every truncated week starts on a Monday (ISO): dayofweek 1.
    assert_eq!(
        q("select distinct dayofweek(date_trunc('week', o_orderdate)) from orders"),
        vec!["1"]
    );
    assert_eq!(
        q("select date_trunc('quarter', date '1996-08-17'), date_trunc('year', date '1996-08-17')"),
        vec!["1996-07-01|1996-01-01"]
    );
    assert_eq!(
        q("select concat('a', null, 1, 2.5), 'a' || null, concat(null)"),
        vec!["a12.5|null|"]
    );
    assert_refused(
        &c,
        &[
            (
                "select date_trunc('fortnight', o_orderdate) from orders",
                "not one of year, quarter, month, week, day",
            ),
            (
                "select date_trunc('month', o_totalprice) from orders",
                "needs a date",
            ),
            (
                "select date_trunc(o_comment, o_orderdate) from orders",
                "constant unit",
            ),
            ("select concat() from orders", "at least one argument"),
        ],
    );
}

/// `lag/lead(x, n, default)`: the default where the offset leaves the
/// partition, not where the neighbour's value is null.
#[test]
fn lag_and_lead_defaults_fill_only_past_the_partition() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    let value = "case when n_nationkey = 0 then null else n_nationkey end";
    assert_eq!(
        q(&format!(
            "select lag({value}, 1, -1) over (partition by n_regionkey order by n_nationkey), lead(n_name, 2, 'end') over (partition by n_regionkey order by n_nationkey) from nation order by n_nationkey"
        )),
        q(&format!(
            "select case when row_number() over (partition by n_regionkey order by n_nationkey) <= 1 then -1 else lag({value}) over (partition by n_regionkey order by n_nationkey) end, case when count(*) over (partition by n_regionkey) - row_number() over (partition by n_regionkey order by n_nationkey) < 2 then 'end' else lead(n_name, 2) over (partition by n_regionkey order by n_nationkey) end from nation order by n_nationkey"
        ))
    );
    // Nation 5 (region 0) follows nation 0, whose value reads null.
    assert!(q(&format!(
        "select lag({value}, 1, -1) over (partition by n_regionkey order by n_nationkey) from nation where n_regionkey = 0 order by n_nationkey"
    ))
    .starts_with(&["-1".to_string(), "null".to_string()]));
}

/// ROWS frames: a moving sum equals the sum of the neighbours read with
/// lag/lead, a running ROWS frame over a unique order equals SQL's default
/// frame, and bad frames are refused by name.
#[test]
fn rows_frames_aggregate_their_rows() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    let w = "partition by n_regionkey order by n_nationkey";
    assert_eq!(
        q(&format!(
            "select n_nationkey, sum(n_nationkey) over ({w} rows between 1 preceding and 1 following) from nation order by 1"
        )),
        q(&format!(
            "select n_nationkey, n_nationkey + coalesce(lag(n_nationkey) over ({w}), 0) + coalesce(lead(n_nationkey) over ({w}), 0) from nation order by 1"
        ))
    );
    assert_eq!(
        q(&format!(
            "select n_nationkey, sum(n_nationkey) over ({w} rows between unbounded preceding and current row), max(n_name) over ({w}) from nation order by 1"
        )),
        q(&format!(
            "select n_nationkey, sum(n_nationkey) over ({w}), max(n_name) over ({w}) from nation order by 1"
        ))
    );
    // RANGE with SQL's default bounds is the default frame.
    assert_eq!(
        q(&format!(
            "select n_nationkey, count(*) over ({w} range between unbounded preceding and current row) from nation order by 1"
        )),
        q(&format!(
            "select n_nationkey, count(*) over ({w}) from nation order by 1"
        ))
    );
    assert_refused(
        &c,
        &[
            (
                "select sum(n_nationkey) over (order by n_name rows between 2 following and 1 following) from nation",
                "starts after it ends",
            ),
            (
                "select sum(n_nationkey) over (rows between 1 preceding and current row) from nation",
                "needs ORDER BY",
            ),
            (
                "select sum(n_nationkey) over (order by n_name range between 1 preceding and current row) from nation",
                "does not apply to an order key of type Utf8",
            ),
            (
                "select sum(n_nationkey) over (order by n_regionkey, n_name range between 1 preceding and current row) from nation",
                "needs exactly one ORDER BY key",
            ),
            (
                "select count(*) over (order by o_orderdate range between interval '-1 month' preceding and current row) from orders",
                "non-negative",
            ),
            (
                "select sum(n_nationkey) over (order by n_nationkey groups between 1.5 preceding and current row) from nation",
                "non-negative integer constant",
            ),
            (
                "select sum(n_nationkey) over (order by n_name rows between unbounded following and current row) from nation",
                "cannot start at UNBOUNDED FOLLOWING",
            ),
            (
                "select sum(n_nationkey) over (order by n_name rows between n_nationkey preceding and current row) from nation",
                "non-negative integer constant",
            ),
            (
                "select median(n_nationkey) over (order by n_name rows 1 preceding) from nation",
                "median",
            ),
        ],
    );
}

/// INTERSECT ALL and EXCEPT ALL keep duplicates: a row `l` times on the
/// left and `r` on the right comes out min(l, r) or max(l - r, 0) times,
/// nulls equal to nulls. Nations 0-9 are in regions 0,1,1,1,4,0,3,3,2,2.
#[test]
fn intersect_all_and_except_all_count_copies() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    let first_ten = "select n_regionkey from nation where n_nationkey < 10";
    assert_eq!(
        q(&format!(
            "select n_regionkey from nation intersect all {first_ten} order by 1"
        )),
        ["0", "0", "1", "1", "1", "2", "2", "3", "3", "4"]
    );
    assert_eq!(
        q(&format!(
            "select n_regionkey from nation except all {first_ten} order by 1"
        )),
        [
            "0", "0", "0", "1", "1", "2", "2", "2", "3", "3", "3", "4", "4", "4", "4"
        ]
    );
    // Without ALL, one copy each; EXCEPT of a side with every region: none.
    assert_eq!(
        q(&format!(
            "select n_regionkey from nation intersect {first_ten} order by 1"
        )),
        ["0", "1", "2", "3", "4"]
    );
    // Nulls: 9 on the left, 4 on the right; ones: 8 and 4.
    assert_eq!(
        q(
            "select case when n_nationkey % 3 = 0 then null else n_nationkey % 2 end k from nation intersect all select case when n_nationkey % 2 = 0 then null else 1 end from nation where n_nationkey < 8 order by 1"
        ),
        ["1", "1", "1", "1", "null", "null", "null", "null"]
    );
}

/// `LIKE ... ESCAPE 'x'`: the escape character makes the next one literal,
/// and a backslash is then an ordinary character.
#[test]
fn like_escape_makes_wildcards_literal() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q(
            "select 'a%b' like 'a!%b' escape '!', 'axb' like 'a!%b' escape '!', 'a_b' not like 'a!_b' escape '!', 'a\\b' like 'a\\b' escape '!', 'A%B' ilike 'a!%b' escape '!', 'a!b' like 'a!!b' escape '!'"
        ),
        vec!["true|false|false|true|true|true"]
    );
    // Escaped, `_` is a literal underscore, which no nation name has.
    assert_eq!(
        q("select count(*) from nation where n_name like '%!_%' escape '!'"),
        vec!["0"]
    );
    assert_refused(
        &c,
        &[
            (
                "select 'a' like 'a!' escape '!'",
                "ends with its escape character",
            ),
            ("select 'a' like 'a' escape '!!'", "one-character constant"),
            (
                "select n_name like n_comment escape '!' from nation",
                "not a constant",
            ),
        ],
    );
}

/// Scalar subqueries give one value per outer row: a count of no rows is
/// 0, an empty subquery is null, and more than one row is an error (they
/// used to read null, drop every outer row, or repeat outer rows).
#[test]
fn scalar_subqueries_yield_exactly_one_value_per_outer_row() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // Regions 0-4 have 5 nations each; keys 5+ have none.
    assert_eq!(
        q(
            "select n_nationkey, (select count(*) from region where r_regionkey = n_nationkey), (select count(r_name) from region where r_regionkey = n_nationkey), (select max(r_name) from region where r_regionkey = n_nationkey) from nation where n_nationkey in (4, 5) order by 1"
        ),
        vec!["4|1|1|MIDDLE EAST", "5|0|0|null"]
    );
    assert_eq!(
        q(
            "select count(*), count(x) from (select n_name, (select r_name from region where r_regionkey = 99) x from nation) t"
        ),
        vec!["25|0"]
    );
    assert_eq!(
        q(
            "select n_name, (select r_name from region where r_regionkey = n_regionkey) from nation where n_nationkey < 2 order by 1"
        ),
        vec!["ALGERIA|AFRICA", "ARGENTINA|AMERICA"]
    );
    // In a grouped select list the subquery reads the group's key.
    assert_eq!(
        q(
            "select n_regionkey, count(*), (select r_name from region where r_regionkey = n_regionkey) from nation where n_regionkey < 2 group by n_regionkey order by 1"
        ),
        vec!["0|5|AFRICA", "1|5|AMERICA"]
    );
    // A subquery that is itself a group key (by position) joins before the
    // aggregation; it used to name an internal column that did not exist.
    assert_eq!(
        q("select (select max(r_regionkey) from region) m, count(*) from nation group by 1"),
        vec!["4|25"]
    );
    assert_eq!(
        q(
            "select (select r_name from region where r_regionkey = n_regionkey) r, count(*), (select count(*) from region) from nation group by 1 order by 1"
        ),
        q(
            "select r, count(*), 5 from (select (select r_name from region where r_regionkey = n_regionkey) r from nation) t group by r order by 1"
        )
    );
    assert_refused(
        &c,
        &[
            (
                "select n_name from nation where n_regionkey = (select r_regionkey from region)",
                "more than one row",
            ),
            (
                "select count(*), (select r_name from region where r_regionkey = n_regionkey) from nation",
                "must appear in GROUP BY",
            ),
            (
                "select n_name, (select r_name from region where r_regionkey < n_regionkey) from nation",
                "a scalar subquery returned more than one row",
            ),
            (
                "select n_name, (select n2.n_name from nation n2 where n2.n_regionkey = nation.n_regionkey) from nation",
                "more than one row",
            ),
        ],
    );
}

/// sqlparser parses clauses sloth does not run; each must be refused by
/// name, not dropped (which would return rows the query did not ask for).
#[test]
fn clauses_sloth_does_not_run_are_refused_by_name() {
    let c = ctx(OptimizerOptions::default());
    for (sql, what) in [
        (
            "select n_name from nation limit 1 by n_regionkey",
            "LIMIT .. BY",
        ),
        ("select n_name from nation for update", "FOR UPDATE"),
        (
            "select n_name, count(*) from nation group by n_name with totals",
            "TOTALS",
        ),
        ("from nation select n_name", "FROM-first"),
        (
            "select n_name from nation tablesample (10 percent)",
            "TABLESAMPLE",
        ),
        ("select * rename (n_name as x) from nation", "RENAME"),
        (
            "select r_name from region order by 1 fetch first 50 percent rows only",
            "PERCENT",
        ),
        (
            "select top 1 with ties r_name from region order by 1",
            "WITH TIES",
        ),
        ("select * from region, lateral (select 1) t", "LATERAL"),
        // Refused, not dropped: the answer would be RESPECT NULLS'.
        (
            "select nth_value(r_name, 2) ignore nulls over (order by r_name) from region",
            "IGNORE NULLS",
        ),
        ("select * into t2 from region", "SELECT INTO"),
        (
            "select first(distinct n_regionkey) from nation",
            "first(DISTINCT",
        ),
        (
            "select corr(distinct n_regionkey, n_nationkey) from nation",
            "corr(DISTINCT",
        ),
    ] {
        // Refused when planned or, at the latest, when run.
        match c.sql(sql).and_then(|lf| lf.collect()) {
            Ok(_) => panic!("{sql}: planned, but sloth does not run {what}"),
            Err(e) => {
                let e = e.to_string();
                assert!(
                    e.contains("not supported") && e.contains(what),
                    "{sql}: {e}"
                );
            }
        }
    }
}

#[test]
fn subqueries_follow_sql_semantics() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // IN / NOT IN / EXISTS / NOT EXISTS / scalar, correlated and not.
    assert_eq!(
        q(
            "select count(*) from nation where n_regionkey in (select r_regionkey from region where r_name like 'A%')"
        ),
        vec!["15"]
    );
    assert_eq!(
        q(
            "select count(*) from nation where n_regionkey not in (select r_regionkey from region where r_name like 'A%')"
        ),
        vec!["10"]
    );
    assert_eq!(
        q(
            "select count(*) from region where exists (select * from nation where n_regionkey = r_regionkey and n_name like 'C%')"
        ),
        vec!["2"]
    );
    assert_eq!(
        q(
            "select count(*) from region where not exists (select * from nation where n_regionkey = r_regionkey and n_name like 'C%')"
        ),
        vec!["3"]
    );
    assert_eq!(
        q("select r_name from region where r_regionkey = (select max(n_regionkey) from nation)"),
        vec!["MIDDLE EAST"]
    );
    // Correlated scalar: nations whose key is the largest of their region
    // (expected rows from DuckDB on the same data).
    assert_eq!(
        q(
            "select n_name from nation n where n_nationkey = (select max(n2.n_nationkey) from nation n2 where n2.n_regionkey = n.n_regionkey) order by n_name"
        ),
        vec![
            "MOZAMBIQUE",
            "SAUDI ARABIA",
            "UNITED KINGDOM",
            "UNITED STATES",
            "VIETNAM"
        ]
    );
    // NOT IN with a NULL in the subquery keeps nothing; with an empty subquery keeps all.
    assert_eq!(
        q(
            "select count(*) from region where r_regionkey not in (select case when n_nationkey = 0 then null else n_regionkey + 10 end from nation)"
        ),
        vec!["0"]
    );
    assert_eq!(
        q(
            "select count(*) from region where r_regionkey not in (select n_regionkey from nation where n_nationkey < 0)"
        ),
        vec!["5"]
    );
    // EXISTS with a non-equality correlation (a join filter), as in TPC-H Q21.
    assert_eq!(
        q(
            "select count(*) from nation n1 where exists (select * from nation n2 where n2.n_regionkey = n1.n_regionkey and n2.n_nationkey > n1.n_nationkey)"
        ),
        vec!["20"]
    );
}

#[test]
fn window_functions_rank_with_ties() {
    let c = ctx(OptimizerOptions::default());
    let rows = common::rows_of(
        &c.sql("select n_regionkey, rank() over (order by n_regionkey) r, dense_rank() over (order by n_regionkey) d, row_number() over (partition by n_regionkey order by n_name) rn, n_name from nation order by n_nationkey limit 8")
            .unwrap()
            .collect()
            .unwrap(),
    );
    // Expected rows from DuckDB 2.0.1 on the same data.
    assert_eq!(
        rows,
        vec![
            "0|1|1|1|ALGERIA",
            "1|6|2|1|ARGENTINA",
            "1|6|2|2|BRAZIL",
            "1|6|2|3|CANADA",
            "4|21|5|1|EGYPT",
            "0|1|1|2|ETHIOPIA",
            "3|16|4|1|FRANCE",
            "3|16|4|2|GERMANY",
        ]
    );
}

#[test]
fn row_number_filters_keep_the_same_rows_as_a_full_window() {
    // `rn <= k` lets the window keep only each partition's first k rows;
    // `rn + 0 <= k` is the same filter that the planner does not fuse.
    let c = ctx(OptimizerOptions::default());
    let orders = [
        "l_shipdate",              // date: normalized integer keys
        "l_linenumber desc",       // int, descending
        "l_quantity",              // decimal: row-format keys, many ties
        "l_shipmode desc",         // string
        "l_extendedprice * 1.0e0", // float
    ];
    for order in orders {
        for (fused, plain) in [
            ("rn <= 2", "rn + 0 <= 2"),
            ("rn < 4", "rn + 0 < 4"),
            ("1 >= rn", "1 >= rn + 0"),
        ] {
            let sql = |filter: &str| {
                format!(
                    "select l_orderkey, l_linenumber, rn from (select l_orderkey, l_linenumber, row_number() over (partition by l_suppkey % 7 order by {order}) rn from lineitem) t where {filter}"
                )
            };
            let explain = c.sql(&sql(fused)).unwrap().explain(true).unwrap();
            assert!(explain.contains("per partition"), "{explain}");
            let got = common::sorted_rows(&c.sql(&sql(fused)).unwrap());
            let want = common::sorted_rows(&c.sql(&sql(plain)).unwrap());
            assert!(!want.is_empty());
            assert_eq!(got, want, "order by {order}, {fused}");
        }
    }
}

/// An outer join's non-equality conditions decide which pairs match, not
/// which rows survive: a row of the preserved side without a passing pair
/// comes out once, null-extended. Checked against formulations that need
/// no such join (inner joins, CASE, and counts of each part).
#[test]
fn outer_joins_keep_other_conditions_as_pair_filters() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // Every nation has its region, so the condition only nulls r_name.
    assert_eq!(
        q(
            "select n_name, r_name from nation left join region on n_regionkey = r_regionkey and n_nationkey < r_regionkey * 3 order by 1"
        ),
        q(
            "select n_name, case when n_nationkey < r_regionkey * 3 then r_name end from nation join region on n_regionkey = r_regionkey order by 1"
        )
    );
    // A condition on the preserved side alone filters pairs too.
    assert_eq!(
        q(
            "select n_name, r_name from nation left join region on n_regionkey = r_regionkey and n_name like 'A%' order by 1"
        ),
        q(
            "select n_name, case when n_name like 'A%' then r_name end from nation join region on n_regionkey = r_regionkey order by 1"
        )
    );
    // No equality at all: a nested-loop join. Region keys are 0..4.
    assert_eq!(
        q(
            "select n_nationkey, count(r_regionkey) from nation left join region on n_nationkey < r_regionkey group by 1 order by 1"
        ),
        q(
            "select n_nationkey, case when n_nationkey < 4 then 4 - n_nationkey else 0 end from nation order by 1"
        )
    );
    // A full join is the matching pairs, then each side's rows without one.
    let parts = q(
        "select (select count(*) from nation, region where n_nationkey < r_regionkey) + (select count(*) from nation where not exists (select 1 from region where n_nationkey < r_regionkey)) + (select count(*) from region where not exists (select 1 from nation where n_nationkey < r_regionkey))",
    );
    assert_eq!(
        q("select count(*) from nation full join region on n_nationkey < r_regionkey"),
        parts
    );
    assert_eq!(
        q(
            "select count(*), count(n_name), count(r_name) from region right join nation on r_regionkey = n_regionkey and r_name <> 'ASIA'"
        ),
        q(
            "select count(*), count(n_name), count(case when r_name <> 'ASIA' then 1 end) from nation join region on r_regionkey = n_regionkey"
        )
    );
    // EXISTS correlated by its filter alone, or not at all.
    assert_eq!(
        q(
            "select count(*) from nation where exists (select 1 from region where r_regionkey > n_nationkey)"
        ),
        q("select count(*) from nation where n_nationkey < 4")
    );
    assert_eq!(
        q(
            "select count(*) from nation where not exists (select 1 from region where r_name = 'MARS')"
        ),
        q("select count(*) from nation")
    );
    assert_eq!(
        q("select count(*) from nation where exists (select 1 from region where r_name = 'MARS')"),
        vec!["0"]
    );
}

/// `sum / avg / stddev / median (DISTINCT x)` aggregate each group's set of
/// values: the same as the plain aggregate over `SELECT DISTINCT g, x`.
#[test]
fn aggregates_over_distinct_values_equal_aggregates_of_the_distinct_rows() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q(
            "select l_returnflag, sum(distinct l_partkey), avg(distinct l_suppkey), count(distinct l_partkey), round(stddev(distinct l_partkey), 6), median(distinct l_suppkey), count(*) from lineitem group by 1 order by 1"
        ),
        q(
            "select p.l_returnflag, sp, sa, cp, dp, sm, n from (select l_returnflag, sum(l_partkey) sp, count(l_partkey) cp, round(stddev(l_partkey), 6) dp from (select distinct l_returnflag, l_partkey from lineitem) d group by 1) p join (select l_returnflag, avg(l_suppkey) sa, median(l_suppkey) sm from (select distinct l_returnflag, l_suppkey from lineitem) d group by 1) s on p.l_returnflag = s.l_returnflag join (select l_returnflag, count(*) n from lineitem group by 1) c on c.l_returnflag = p.l_returnflag order by 1"
        )
    );
    assert_eq!(
        q("select sum(distinct n_regionkey), avg(distinct n_regionkey) from nation"),
        vec!["10|2.0"]
    );
    assert_refused(
        &c,
        &[(
            "select first(distinct n_name) from nation",
            "first(DISTINCT ..)",
        )],
    );
}

/// `x op ALL / ANY (q)` with SQL's three values, against formulations by
/// EXISTS and aggregates; row values IN a subquery against EXISTS.
#[test]
fn quantified_comparisons_and_row_values_in_subqueries() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // > ALL: beyond every supplier balance of the same nation.
    assert_eq!(
        q(
            "select count(*) from customer where c_acctbal > all (select s_acctbal from supplier where s_nationkey = c_nationkey)"
        ),
        q(
            "select count(*) from customer where not exists (select 1 from supplier where s_nationkey = c_nationkey and s_acctbal >= c_acctbal)"
        )
    );
    // < ANY: below some balance of the nation.
    assert_eq!(
        q(
            "select count(*) from customer where c_acctbal < any (select s_acctbal from supplier where s_nationkey = c_nationkey)"
        ),
        q(
            "select count(*) from customer where exists (select 1 from supplier where s_nationkey = c_nationkey and s_acctbal > c_acctbal)"
        )
    );
    // An empty subquery: ALL holds, ANY does not.
    assert_eq!(
        q(
            "select n_nationkey > all (select r_regionkey from region where r_name = 'MARS'), n_nationkey > any (select r_regionkey from region where r_name = 'MARS') from nation where n_nationkey = 3"
        ),
        vec!["true|false"]
    );
    // A null among the values: ALL is null unless a value refutes it.
    // Region keys are 0..4; the union adds a null.
    assert_eq!(
        q(
            "select n_nationkey, n_nationkey > all (select r_regionkey from region union all select null), n_nationkey >= any (select r_regionkey from region union all select null) from nation where n_nationkey in (2, 7) order by 1"
        ),
        vec!["2|false|true", "7|null|true"]
    );
    // = ANY and <> ALL as values are IN and NOT IN, nulls included.
    for (quantified, spelled) in [
        (
            "select n_nationkey, n_nationkey = any (select r_regionkey from region union all select null) from nation",
            "select n_nationkey, n_nationkey in (select r_regionkey from region union all select null) from nation",
        ),
        (
            "select n_nationkey, n_nationkey <> all (select n_regionkey from nation m where m.n_nationkey < nation.n_nationkey) from nation",
            "select n_nationkey, n_nationkey not in (select n_regionkey from nation m where m.n_nationkey < nation.n_nationkey) from nation",
        ),
    ] {
        let rows = rows_on_both_executors(&c, quantified);
        assert_eq!(rows, rows_on_both_executors(&c, spelled), "{quantified}");
    }
    // = ALL and <> ANY compare with the minimum and the maximum.
    assert_eq!(
        q(
            "select r_regionkey from region where r_regionkey = all (select n_regionkey from nation where n_name = 'CHINA' or n_name = 'JAPAN')"
        ),
        q("select n_regionkey from nation where n_name = 'CHINA'")
    );
    assert_eq!(
        q(
            "select count(*) from region where r_regionkey <> any (select n_regionkey from nation where n_name = 'CHINA')"
        ),
        vec!["4"]
    );
    // Rows IN a subquery, correlated or not.
    assert_eq!(
        q(
            "select count(*) from lineitem where (l_partkey, l_suppkey) in (select ps_partkey, ps_suppkey from partsupp where ps_availqty < 1000)"
        ),
        q(
            "select count(*) from lineitem where exists (select 1 from partsupp where ps_partkey = l_partkey and ps_suppkey = l_suppkey and ps_availqty < 1000)"
        )
    );
    assert_eq!(
        q(
            "select count(*) from orders where (o_custkey, o_orderpriority) in (select o2.o_custkey, o2.o_orderpriority from orders o2 where o2.o_orderdate > orders.o_orderdate)"
        ),
        q(
            "select count(*) from orders where exists (select 1 from orders o2 where o2.o_custkey = orders.o_custkey and o2.o_orderpriority = orders.o_orderpriority and o2.o_orderdate > orders.o_orderdate)"
        )
    );
    assert_refused(
        &c,
        &[
            (
                "select count(*) from nation where (n_regionkey, n_nationkey) not in (select r_regionkey, r_regionkey from region)",
                "NOT IN with a row value",
            ),
            (
                "select count(*) from nation where (n_regionkey, n_nationkey) in (select r_regionkey from region)",
                "a row of 2 values IN a subquery of 1 columns",
            ),
        ],
    );
}

/// Math and string functions: hand-computed values, and identities that
/// tie them to each other and to the operators.
#[test]
fn math_and_string_functions() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q(
            "select floor(-2.5), ceil(-2.5), trunc(-2.7), sign(-2.5), floor(7), greatest(1, null, 3), least(2.5, 1), mod(-7, 3)"
        ),
        vec!["-3|-2|-2|-1|7|3|1.0|-1"]
    );
    assert_eq!(
        q(
            "select sqrt(16), power(2, 10), log(1000), log2(8), exp(0), degrees(pi()), position('c' in 'abcd')"
        ),
        vec!["4.0|1024.0|3.0|3.0|1.0|180.0|3"]
    );
    assert_eq!(
        q(
            "select log(10, 1000), log(2, 8), character_length('héllo'), octet_length('héllo'), bit_length('héllo')"
        ),
        vec!["3.0|3.0|5|6|48"]
    );
    assert_eq!(
        q(
            "select left('héllo', 2), right('héllo', 3), lpad('7', 3, '0'), rpad('ab', 5, 'xy'), split_part('a,b,c', ',', -2), reverse('héllo'), repeat('ab', 3), date_part('quarter', date '1995-08-01')"
        ),
        vec!["hé|llo|007|abxyx|b|olléh|ababab|3"]
    );
    // Per row over a table, against identities.
    assert_eq!(
        q(
            "select count(*) from customer where floor(c_acctbal) <= c_acctbal and ceil(c_acctbal) >= c_acctbal and ceil(c_acctbal) - floor(c_acctbal) <= 1 and trunc(c_acctbal) = case when c_acctbal < 0 then ceil(c_acctbal) else floor(c_acctbal) end and sign(c_acctbal) * c_acctbal = abs(c_acctbal) and greatest(c_acctbal, 0) - least(c_acctbal, 0) = abs(c_acctbal)"
        ),
        q("select count(*) from customer")
    );
    assert_eq!(
        q(
            "select count(*) from nation where left(n_name, 2) || right(n_name, -2) = n_name and right(n_name, -2) = substr(n_name, 3) and reverse(reverse(n_name)) = n_name and length(lpad(n_name, 30, '*')) = 30 and (strpos(n_name, 'AN') > 0) = (n_name like '%AN%') and split_part(n_name || ',x', ',', 1) = n_name"
        ),
        vec!["25"]
    );
    assert_refused(
        &c,
        &[
            (
                "select lpad(n_name, n_nationkey) from nation",
                "arguments after the first must be constants",
            ),
            ("select sqrt(n_name) from nation", "sqrt() needs a number"),
            (
                "select greatest(n_name, n_nationkey) from nation",
                "incompatible types",
            ),
            (
                "select date_part('hour', o_orderdate) from orders",
                "date_part('hour'",
            ),
        ],
    );
}

/// `first / last(x ORDER BY key)` and `min_by / max_by(x, key)`, against
/// the same rows found by a join with the groups' extreme keys.
#[test]
fn first_and_last_in_an_order_and_min_by_max_by() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // Balances are distinct within a nation, so each pick is one row.
    let by_join = |agg: &str| {
        q(&format!(
            "select c.c_nationkey, c.c_name from customer c join (select c_nationkey k, {agg}(c_acctbal) b from customer group by 1) m on c.c_nationkey = m.k and c.c_acctbal = m.b order by 1"
        ))
    };
    assert_eq!(
        q(
            "select c_nationkey, first(c_name order by c_acctbal) from customer group by 1 order by 1"
        ),
        by_join("min")
    );
    assert_eq!(
        q(
            "select c_nationkey, last(c_name order by c_acctbal) from customer group by 1 order by 1"
        ),
        by_join("max")
    );
    assert_eq!(
        q("select c_nationkey, min_by(c_name, c_acctbal) from customer group by 1 order by 1"),
        by_join("min")
    );
    assert_eq!(
        q(
            "select c_nationkey, max_by(c_name, c_acctbal), first(c_name order by c_acctbal desc) from customer group by 1 order by 1"
        ),
        q(
            "select c.c_nationkey, c.c_name, c.c_name from customer c join (select c_nationkey k, max(c_acctbal) b from customer group by 1) m on c.c_nationkey = m.k and c.c_acctbal = m.b order by 1"
        )
    );
    assert_refused(
        &c,
        &[
            (
                "select sum(n_nationkey order by n_name) from nation",
                "first, last, string_agg and array_agg take one ORDER BY key",
            ),
            (
                "select first(n_name order by n_regionkey, n_nationkey) from nation",
                "first, last, string_agg and array_agg take one ORDER BY key",
            ),
        ],
    );
}

/// `string_agg(x, sep [ORDER BY key])`: values joined in the key's order,
/// nulls skipped, null for a group without values; group_concat's comma.
#[test]
fn string_agg_joins_values_in_order() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q("select string_agg(r_name, ', ' order by r_name desc) from region"),
        vec!["MIDDLE EAST, EUROPE, ASIA, AMERICA, AFRICA"]
    );
    assert_eq!(
        q("select group_concat(r_regionkey order by r_regionkey) from region"),
        vec!["0,1,2,3,4"]
    );
    // Per group, against the names' own order: lengths and counts agree,
    // and the first and last names are the group's min and max.
    assert_eq!(
        q(
            "select n_regionkey, length(string_agg(n_name, '' order by n_name)), split_part(string_agg(n_name, ',' order by n_name), ',', 1), split_part(string_agg(n_name, ',' order by n_name), ',', -1) from nation group by 1 order by 1"
        ),
        q(
            "select n_regionkey, sum(length(n_name)), min(n_name), max(n_name) from nation group by 1 order by 1"
        )
    );
    assert_eq!(
        q(
            "select string_agg(case when n_nationkey < 3 then n_name end, '+' order by n_nationkey), string_agg(case when n_nationkey < 0 then n_name end, '+') from nation"
        ),
        vec!["ALGERIA+ARGENTINA+BRAZIL|null"]
    );
}

/// EXISTS and IN (subquery) as values, not WHERE conditions: per outer row
/// true, false or (IN) null, against counts and hand cases.
#[test]
fn exists_and_in_subqueries_as_values() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    // Nations with a supplier whose balance is over 9000.
    assert_eq!(
        q(
            "select n_nationkey, exists (select 1 from supplier where s_nationkey = n_nationkey and s_acctbal > 9000) from nation order by 1"
        ),
        q(
            "select n_nationkey, (select count(*) from supplier where s_nationkey = n_nationkey and s_acctbal > 9000) > 0 from nation order by 1"
        )
    );
    assert_eq!(
        q(
            "select count(*) from nation where exists (select 1 from supplier where s_nationkey = n_nationkey and s_acctbal > 9000) = not exists (select 1 from supplier where s_nationkey = n_nationkey and s_acctbal > 9000)"
        ),
        vec!["0"]
    );
    // IN with SQL's nulls: region keys 0..4, plus a null.
    assert_eq!(
        q(
            "select n_nationkey, n_nationkey in (select r_regionkey from region), n_nationkey in (select r_regionkey from region union all select null), n_nationkey not in (select r_regionkey from region where r_regionkey > 9) from nation where n_nationkey in (3, 7) order by 1"
        ),
        vec!["3|true|true|true", "7|false|null|true"]
    );
    assert_eq!(
        q(
            "select case when n_regionkey in (select r_regionkey from region where r_name like 'A%') then 'A' else '-' end k, count(*) from nation group by 1 order by 1"
        ),
        q(
            "select case when r_name like 'A%' then 'A' else '-' end k, count(*) from nation join region on n_regionkey = r_regionkey group by 1 order by 1"
        )
    );
}

/// A subquery read inside an aggregate joins before the aggregation (it
/// used to join after it and fail with "must appear in GROUP BY").
#[test]
fn subqueries_inside_aggregates_join_before_the_aggregation() {
    let c = ctx(OptimizerOptions::default());
    let q = |s: &str| common::rows_of(&c.sql(s).unwrap().collect().unwrap());
    assert_eq!(
        q(
            "select count(*) filter (where exists (select 1 from supplier where s_nationkey = n_nationkey and s_acctbal > 9000)) from nation"
        ),
        q(
            "select count(*) from nation where exists (select 1 from supplier where s_nationkey = n_nationkey and s_acctbal > 9000)"
        )
    );
    // Each nation's region key, summed: 5 nations in each of regions 0..4.
    assert_eq!(
        q(
            "select sum((select r_regionkey from region where r_regionkey = n_regionkey)) from nation"
        ),
        vec!["50"]
    );
    assert_eq!(
        q(
            "select n_regionkey, max((select count(*) from supplier where s_nationkey = n_nationkey)) from nation group by 1 order by 1"
        ),
        q(
            "select n_regionkey, max(c) from (select n_regionkey, n_nationkey, (select count(*) from supplier where s_nationkey = n_nationkey) c from nation) t group by 1 order by 1"
        )
    );
}

/// `count(a, b)` counts the rows where every argument is non-null (as
/// DuckDB does), grouped or not; the same as a count of a CASE that is
/// null where any argument is.
#[test]
fn count_of_several_arguments_counts_rows_where_all_are_present() {
    let c = ctx(OptimizerOptions::default());
    let run = |sql: &str| sorted_csv(&c, sql);
    let several = "select c_mktsegment, count(nullif(c_nationkey, 1), nullif(c_acctbal > 0, false)) \
                   as n from customer group by c_mktsegment";
    let by_case = "select c_mktsegment, count(case when c_nationkey <> 1 and c_acctbal > 0 then 1 end) \
                   as n from customer group by c_mktsegment";
    assert_eq!(run(several), run(by_case));
    let one = run(
        "select count(nullif(c_nationkey, 1), nullif(c_acctbal > 0, false)) as n from customer",
    );
    let fewer = run("select count(nullif(c_nationkey, 1)) as n from customer");
    assert_ne!(one, fewer, "the second argument's nulls must count");
    assert_refused(
        &c,
        &[(
            "select count(distinct c_name, c_phone) from customer",
            "count(DISTINCT ..) of several arguments",
        )],
    );
}

/// Names that a statement defines or removes twice, or removals that leave
/// nothing, are errors rather than silently accepted.
#[test]
fn duplicate_cte_names_and_exclusions_are_refused() {
    let c = ctx(OptimizerOptions::default());
    assert_refused(
        &c,
        &[
            (
                "with a as (select 1 as x), a as (select 2 as x) select * from a",
                "WITH defines 'a' twice",
            ),
            (
                "select * exclude (r_name, r_name) from region",
                "EXCLUDE names column 'r_name' twice",
            ),
            (
                "select * exclude (r_regionkey, r_name, r_comment) from region",
                "EXCLUDE removes every column of *",
            ),
        ],
    );
    let kept = c.sql("select * exclude (r_comment) from region").unwrap();
    assert_eq!(kept.schema().unwrap().fields().len(), 2);
}

/// An untyped NULL before a column in coalesce gives one value per row
/// (it failed with an internal array-length error).
#[test]
fn coalesce_with_a_null_constant_before_a_column() {
    let c = ctx(OptimizerOptions::default());
    let df = c
        .sql("select coalesce(NULL, nullif(n_name, 'ALGERIA'), 'x') as v from nation order by n_nationkey limit 2")
        .unwrap()
        .collect()
        .unwrap();
    assert_eq!(df.to_sorted_csv().unwrap(), "v\nARGENTINA\nx\n");
}

/// A JOIN without ON or USING is an error (PostgreSQL's and DuckDB's), not
/// a cross join; so is position 0 in ORDER BY or GROUP BY.
#[test]
fn join_without_a_condition_and_position_zero_are_refused() {
    let c = ctx(OptimizerOptions::default());
    assert_refused(
        &c,
        &[
            (
                "select count(*) from nation right join region",
                "JOIN needs ON or USING",
            ),
            (
                "select count(*) from nation join region",
                "JOIN needs ON or USING",
            ),
            (
                "select n_name from nation order by 0",
                "position 0 is not in the select list",
            ),
            (
                "select n_name, count(*) from nation group by 0",
                "position 0 is not in the select list",
            ),
        ],
    );
    let cross = c
        .sql("select count(*) as n from nation cross join region")
        .unwrap();
    assert_eq!(
        cross.collect().unwrap().to_sorted_csv().unwrap(),
        "n\n125\n"
    );
}

/// Generated SQL with very long chains: AND, OR and || chains of any
/// length plan as balanced trees; other operator chains run up to their
/// documented length and are refused past it, never exhausting the stack.
#[test]
fn long_operator_chains_plan_or_are_refused_cleanly() {
    let c = ctx(OptimizerOptions::default());
    let count = |sql: String| sorted_csv(&c, &sql);
    let ors: Vec<String> = (0..20_000).map(|i| format!("n_nationkey = {i}")).collect();
    let sql = format!(
        "select count(*) as n from nation where {}",
        ors.join(" or ")
    );
    assert_eq!(count(sql), "n\n25\n");
    let ands: Vec<String> = (0..20_000)
        .map(|i| format!("n_nationkey >= -{i}"))
        .collect();
    let sql = format!(
        "select count(*) as n from nation where {}",
        ands.join(" and ")
    );
    assert_eq!(count(sql), "n\n25\n");
    let text = vec!["'a'"; 5_000].join(" || ");
    let sql = format!("select length({text}) as n");
    assert_eq!(count(sql), "n\n5000\n");
    let sum = vec!["1"; 501].join(" + ");
    assert_eq!(count(format!("select {sum} as n")), "n\n501\n");
    let too_long = vec!["1"; 1_002].join(" + ");
    assert_refused(
        &c,
        &[(&format!("select {too_long}"), "a chain of 1001 operators")],
    );
}

/// `SHOW TABLES`, `DESCRIBE table` and `DESCRIBE query` answer with rows;
/// a misspelt name gets a suggestion.
#[test]
fn show_tables_describe_and_suggestions() {
    let c = ctx(OptimizerOptions::default());
    let frame = |sql: &str| match c.execute(sql).unwrap() {
        sloth::sql::SqlOutput::Frame(df) => df.to_sorted_csv().unwrap(),
        sloth::sql::SqlOutput::Text(t) => panic!("{sql}: text {t}"),
        sloth::sql::SqlOutput::Done => panic!("{sql}: no output"),
    };
    let tables = frame("show tables");
    assert!(
        tables.starts_with("name\ncustomer\n") && tables.contains("\nregion\n"),
        "{tables}"
    );
    let region = frame("describe region");
    assert!(region.contains("r_regionkey,Int64"), "{region}");
    assert_eq!(
        frame("describe select r_name, 1 as one from region"),
        "column_name,column_type\none,Int64\nr_name,Utf8View\n"
    );
    assert_refused(
        &c,
        &[
            ("select n_nme from nation", "did you mean 'nation.n_name'?"),
            ("select 1 from natoin", "did you mean 'nation'?"),
        ],
    );
}

/// Null-safe comparisons, IS UNKNOWN, and IN lists with expressions keep
/// SQL's three values.
#[test]
fn null_safe_comparisons_and_in_lists_of_expressions() {
    let c = ctx(OptimizerOptions::default());
    let row = |sql: &str| sorted_csv(&c, sql);
    assert_eq!(
        row(
            "select null is not distinct from null as a, 1 is distinct from null as b, \
             1 is not distinct from 2 as c, (1 = null) is unknown as d"
        ),
        "a,b,c,d\ntrue,true,false,true\n"
    );
    assert_eq!(
        row(
            "select 2 in (1, 1 + 1) as a, 3 not in (1, 1 + 1) as b, null in (1, 1 + 0) as c, \
             5 in (1, null + 0) as d"
        ),
        "a,b,c,d\ntrue,true,,\n"
    );
    let by_column = row(
        "select count(*) as n from nation where n_regionkey in (n_nationkey - 1, 0 + n_nationkey)",
    );
    let spelled_out = row("select count(*) as n from nation \
         where n_regionkey = n_nationkey - 1 or n_regionkey = n_nationkey");
    assert_eq!(by_column, spelled_out);
}

/// `-0.0 = 0.0` everywhere a float is compared, grouped, made distinct or
/// joined on, columnar and row-wise; the expected counts are DuckDB's
/// (`select count(*) filter (where x = 0) ...` over the same three values).
#[test]
fn negative_zero_equals_zero() {
    use std::sync::Arc;
    let x: arrow::array::ArrayRef =
        Arc::new(arrow::array::Float64Array::from(vec![-0.0, 0.0, 1.5]));
    let batch = RecordBatch::try_from_iter([("x", x)]).unwrap();
    let mut c = SqlContext::new();
    c.register(
        "t",
        LazyFrame::from_batches(common::split(&batch, 1)).unwrap(),
    );
    c.register(
        "u",
        LazyFrame::from_batches(vec![batch.slice(1, 1)]).unwrap(),
    );
    for (sql, want) in [
        ("select count(*) from t where x = 0", "2"),
        ("select count(*) from t where x < 0", "0"),
        ("select count(*) from t where x in (0.0, 7.0)", "2"),
        ("select count(distinct x) from t", "2"),
        ("select count(*) from (select x from t group by x)", "2"),
        ("select count(*) from (select distinct x from t)", "2"),
        ("select count(*) from t join u on t.x = u.x", "2"),
    ] {
        let lf = c.sql(sql).unwrap();
        assert_eq!(common::rows(&lf), vec![want], "{sql}");
        let plan = lf.physical_plan().unwrap();
        let (batches, _) = sloth::exec::rowwise::execute_rowwise(&plan).unwrap();
        let rowwise = DataFrame::new(plan.schema(), batches);
        assert_eq!(common::rows_of(&rowwise), vec![want], "{sql}: row-wise");
    }
}

/// NaN with its sign bit set (what `-x` and x86 arithmetic make of a NaN)
/// is the one SQL NaN: equal to every NaN and above every number, in
/// comparisons (fused and not), joins, groups, sorts and min/max; columnar
/// and row-wise. The expected answers are DuckDB's over the same column
/// (`select count(*) filter (where -x > -1.5) ...`).
#[test]
fn a_negated_nan_is_the_one_nan_above_every_number() {
    use std::sync::Arc;
    let x: arrow::array::ArrayRef = Arc::new(arrow::array::Float64Array::from(vec![
        f64::NAN,
        f64::NAN,
        -0.0,
        1.5,
        -1.5,
        f64::INFINITY,
    ]));
    let batch = RecordBatch::try_from_iter([("x", x)]).unwrap();
    let mut c = SqlContext::new();
    c.register("t", LazyFrame::from_batches(vec![batch]).unwrap());
    for (sql, want) in [
        ("select count(*) from t where -x > -1.5", "4"),
        ("select count(*) from t where -(x * 1) > -1.5", "4"),
        ("select count(*) from t where -x = 'nan'::double", "2"),
        ("select count(*) from t a join t b on a.x = -b.x", "7"),
        ("select count(distinct -x) from t", "5"),
        (
            "select cast(max(-x) as varchar) || ' ' || cast(min(-x) as varchar) from t",
            "NaN -inf",
        ),
        (
            "select cast(g as varchar) from (select -x as g from t order by g desc limit 1)",
            "NaN",
        ),
        (
            "select cast(g as varchar) from (select -x as g from t order by g limit 1)",
            "-inf",
        ),
    ] {
        let lf = c.sql(sql).unwrap();
        assert_eq!(common::rows(&lf), vec![want], "{sql}");
        let plan = lf.physical_plan().unwrap();
        let (batches, _) = sloth::exec::rowwise::execute_rowwise(&plan).unwrap();
        let rowwise = DataFrame::new(plan.schema(), batches);
        assert_eq!(common::rows_of(&rowwise), vec![want], "{sql}: row-wise");
    }
}

/// `date + n`, `n + date` and `date - n` shift by days (PostgreSQL and
/// DuckDB), over columns as over constants, columnar and row-wise; the
/// same shift spelt with an interval gives the same dates.
#[test]
fn a_date_plus_an_integer_is_that_many_days_later() {
    let c = ctx(OptimizerOptions::default());
    assert_eq!(
        sorted_csv(
            &c,
            "select date '2024-02-27' + 3 as a, 2 + date '2024-02-27' as b, \
             date '2024-03-01' - 1 as c"
        ),
        "a,b,c\n2024-03-01,2024-02-29,2024-02-29\n"
    );
    let by_days = "select o_orderkey, o_orderdate + o_shippriority + 30 as d, \
                   o_orderdate - 7 as e from orders where o_orderkey < 200";
    let by_interval = "select o_orderkey, o_orderdate + interval '30' day as d, \
                       o_orderdate - interval '7' day as e from orders where o_orderkey < 200";
    assert_eq!(sorted_csv(&c, by_days), sorted_csv(&c, by_interval));
    let lf = c.sql(by_days).unwrap();
    let plan = lf.physical_plan().unwrap();
    let (batches, _) = sloth::exec::rowwise::execute_rowwise(&plan).unwrap();
    let rowwise = DataFrame::new(plan.schema(), batches)
        .to_sorted_csv()
        .unwrap();
    assert_eq!(rowwise, sorted_csv(&c, by_interval));
    assert_refused(
        &c,
        &[
            ("select date '2024-01-01' * 2", "cannot apply '*' to Date32"),
            ("select 1 - date '2024-01-01'", "cannot apply '-'"),
        ],
    );
}

/// Each (window query, spelling without that window function) pair gives
/// the same rows, on the columnar and the row-wise executor.
fn assert_windows_equal_spellings(c: &SqlContext, pairs: &[(&str, &str)]) {
    for &(window, spelled) in pairs {
        let want = sorted_csv(c, spelled);
        assert_eq!(sorted_csv(c, window), want, "{window}");
        let plan = c.sql(window).unwrap().physical_plan().unwrap();
        let (batches, _) = sloth::exec::rowwise::execute_rowwise(&plan).unwrap();
        let rowwise = DataFrame::new(plan.schema(), batches)
            .to_sorted_csv()
            .unwrap();
        assert_eq!(rowwise, want, "{window}: row-wise");
    }
}

/// first_value / last_value / nth_value over default, whole-partition and
/// ROWS frames equal their spellings with group-bys, lead and CASE, on
/// both executors.
#[test]
fn value_window_functions_equal_their_spellings_without_them() {
    let c = ctx(OptimizerOptions::default());
    let pairs = [
        (
            "select n_nationkey, first_value(n_name) over (partition by n_regionkey \
             order by n_nationkey) as x from nation",
            "select n.n_nationkey, f.n_name as x from nation n \
             join (select n_regionkey, min(n_nationkey) as m from nation group by 1) g \
             on n.n_regionkey = g.n_regionkey join nation f on f.n_nationkey = g.m",
        ),
        (
            "select n_nationkey, last_value(n_name) over (partition by n_regionkey \
             order by n_nationkey rows between unbounded preceding and unbounded following) as x \
             from nation",
            "select n.n_nationkey, f.n_name as x from nation n \
             join (select n_regionkey, max(n_nationkey) as m from nation group by 1) g \
             on n.n_regionkey = g.n_regionkey join nation f on f.n_nationkey = g.m",
        ),
        (
            "select n_nationkey, last_value(n_nationkey) over (partition by n_regionkey \
             order by n_nationkey) as x from nation",
            "select n_nationkey, n_nationkey as x from nation",
        ),
        (
            "select n_nationkey, nth_value(n_name, 2) over (partition by n_regionkey \
             order by n_nationkey rows between 1 preceding and 1 following) as x from nation",
            "select n_nationkey, case when row_number() over (partition by n_regionkey \
             order by n_nationkey) = 1 then lead(n_name) over (partition by n_regionkey \
             order by n_nationkey) else n_name end as x from nation",
        ),
        (
            "select n_nationkey, nth_value(n_name, 9) over (partition by n_regionkey \
             order by n_nationkey) as x from nation",
            "select n_nationkey, cast(null as varchar) as x from nation",
        ),
    ];
    assert_windows_equal_spellings(&c, &pairs);
    assert_refused(
        &c,
        &[
            (
                "select nth_value(n_name, 0) over (order by n_nationkey) from nation",
                "positive integer constant",
            ),
            (
                "select first_value(n_name, 2) over (order by n_nationkey) from nation",
                "takes one value",
            ),
        ],
    );
}

/// percent_rank, cume_dist and ntile equal their spellings with rank,
/// row_number, window counts and CASE, with ties, uneven buckets and more
/// buckets than rows, on both executors.
#[test]
fn distribution_window_functions_equal_their_spellings_without_them() {
    let c = ctx(OptimizerOptions::default());
    let pairs = [
        (
            "select n_nationkey, percent_rank() over (partition by n_regionkey \
             order by n_nationkey) as x from nation",
            "select n_nationkey, cast(rank() over (partition by n_regionkey \
             order by n_nationkey) - 1 as double) / 4 as x from nation",
        ),
        (
            // Ties: five nations a region, so each region is one peer group.
            "select n_nationkey, percent_rank() over (order by n_regionkey) as x, \
             cume_dist() over (order by n_regionkey) as y from nation",
            "select n_nationkey, cast(n_regionkey * 5 as double) / 24 as x, \
             cast(n_regionkey + 1 as double) / 5 as y from nation",
        ),
        (
            "select n_nationkey, cume_dist() over (partition by n_regionkey) as x, \
             percent_rank() over () as y from nation",
            "select n_nationkey, cast(1 as double) as x, cast(0 as double) as y from nation",
        ),
        (
            // 25 rows in 4 buckets: 7, 6, 6, 6.
            "select n_nationkey, ntile(4) over (order by n_nationkey) as x from nation",
            "select n_nationkey, case when n_nationkey < 7 then 1 when n_nationkey < 13 then 2 \
             when n_nationkey < 19 then 3 else 4 end as x from nation",
        ),
        (
            "select n_nationkey, ntile(30) over (partition by n_regionkey \
             order by n_nationkey desc) as x from nation",
            "select n_nationkey, row_number() over (partition by n_regionkey \
             order by n_nationkey desc) as x from nation",
        ),
    ];
    assert_windows_equal_spellings(&c, &pairs);
    assert_refused(
        &c,
        &[
            (
                "select ntile(0) over (order by n_nationkey) from nation",
                "positive integer constant",
            ),
            (
                "select ntile(n_nationkey) over (order by n_nationkey) from nation",
                "positive integer constant",
            ),
        ],
    );
}

#[test]
fn values_lists_equal_their_union_all_spelling() {
    let c = ctx(OptimizerOptions::default());
    let pairs = [
        (
            "select * from (values (1, 'one'), (2, null), (null, 'x')) as v(a, b)",
            "select 1 as a, 'one' as b union all select 2, null union all select null, 'x'",
        ),
        (
            "values (1, 2.5), (2, 3)",
            "select 1 as column1, 2.5 as column2 union all select 2, 3",
        ),
        (
            "with v(k) as (values (1), (3)) select n_name from nation join v on n_nationkey = k",
            "select n_name from nation where n_nationkey in (1, 3)",
        ),
        (
            "select n_name from nation where n_nationkey in (values (1), (3))",
            "select n_name from nation where n_nationkey in (1, 3)",
        ),
        // Names past the alias list keep theirs.
        (
            "select * from (select 1 as a, 2 as b) as t(x)",
            "select 1 as x, 2 as b",
        ),
    ];
    for (values, union) in pairs {
        assert_eq!(sorted_csv(&c, values), sorted_csv(&c, union), "{values}");
    }
    assert_refused(
        &c,
        &[
            ("select * from (values (1, 2), (3))", "row 2 has 1 values"),
            ("select * from (values (1), ('a'))", "mixes Int64 and Utf8"),
            ("select * from (values (n_name))", "cannot read columns"),
            (
                "select * from (select 1 as a) as t(x, y)",
                "2 column names for 1",
            ),
        ],
    );
}

#[test]
fn population_variance_and_boolean_aggregates_equal_their_definitions() {
    let c = ctx(OptimizerOptions::default());
    let round = |sql: &str| format!("select round(v, 6) from ({sql}) as q(v)");
    // var_pop: the mean squared distance from the mean.
    assert_eq!(
        sorted_csv(&c, &round("select var_pop(l_quantity) from lineitem")),
        sorted_csv(
            &c,
            &round(
                "select sum((l_quantity - m) * (l_quantity - m)) / count(*) \
                 from lineitem, (select avg(l_quantity) as m from lineitem) as a"
            )
        )
    );
    assert_eq!(
        sorted_csv(&c, &round("select stddev_pop(n_nationkey) from nation")),
        sorted_csv(&c, &round("select sqrt(var_pop(n_nationkey)) from nation"))
    );
    // One value: no spread.
    assert_eq!(
        sorted_csv(
            &c,
            "select var_pop(r_regionkey) as v from region where r_regionkey = 2"
        ),
        sorted_csv(&c, "select 0.0 as v")
    );
    // bool_and / every: no false; bool_or: some true; nulls take no part.
    for (agg, naive) in [
        (
            "bool_and(n_regionkey < 3)",
            "min(case when n_regionkey < 3 then 1 else 0 end) = 1",
        ),
        (
            "every(n_regionkey < 5)",
            "min(case when n_regionkey < 5 then 1 else 0 end) = 1",
        ),
        (
            "bool_or(n_regionkey = 4)",
            "max(case when n_regionkey = 4 then 1 else 0 end) = 1",
        ),
    ] {
        assert_eq!(
            sorted_csv(
                &c,
                &format!("select n_regionkey % 2 as k, {agg} as v from nation group by 1")
            ),
            sorted_csv(
                &c,
                &format!("select n_regionkey % 2 as k, {naive} as v from nation group by 1")
            ),
            "{agg}"
        );
    }
    assert_refused(&c, &[("select var_pop(1, 2)", "takes one argument")]);
}

/// A query's rows on both executors: the columnar one's, after checking
/// that the row-wise one gives the same.
fn rows_on_both_executors(c: &SqlContext, sql: &str) -> Vec<String> {
    let lf = c.sql(sql).unwrap();
    let columnar = common::sorted_rows(&lf);
    let plan = lf.physical_plan().unwrap();
    let (batches, _) = sloth::exec::rowwise::execute_rowwise(&plan).unwrap();
    let mut rowwise = common::rows_of(&DataFrame::new(plan.schema(), batches));
    rowwise.sort();
    assert_eq!(columnar, rowwise, "{sql}: row-wise");
    columnar
}

#[test]
fn bivariate_statistics_equal_their_definitions_over_pairs_with_nulls() {
    let c = ctx(OptimizerOptions::default());
    // y null on first lines, x null on second lines: the pairs are the rows
    // where both are present.
    let pairs = "(select l_returnflag as g, \
                   case when l_linenumber = 1 then null else l_quantity end as y, \
                   case when l_linenumber = 2 then null else l_extendedprice / 1000 end as x \
                 from lineitem)";
    let both = format!("(select * from {pairs} as p where y is not null and x is not null)");
    let definitions = [
        (
            "corr(y, x)",
            "covar_pop(y, x) / (stddev_pop(y) * stddev_pop(x))",
        ),
        (
            "covar_pop(y, x)",
            "(sum(x * y) - sum(x) * sum(y) / count(*)) / count(*)",
        ),
        (
            "covar_samp(y, x)",
            "(sum(x * y) - sum(x) * sum(y) / count(*)) / (count(*) - 1)",
        ),
        ("regr_slope(y, x)", "covar_pop(y, x) / var_pop(x)"),
        (
            "regr_intercept(y, x)",
            "avg(y) - covar_pop(y, x) / var_pop(x) * avg(x)",
        ),
        ("regr_r2(y, x)", "power(corr(y, x), 2)"),
        ("regr_avgx(y, x)", "avg(x)"),
        ("regr_avgy(y, x)", "avg(y)"),
        ("regr_sxx(y, x)", "var_pop(x) * count(*)"),
        ("regr_syy(y, x)", "var_pop(y) * count(*)"),
        ("regr_sxy(y, x)", "covar_pop(y, x) * count(*)"),
        ("regr_count(y, x)", "count(*)"),
    ];
    for (stat, definition) in definitions {
        let close = format!(
            "select s.g, abs(s.v - d.v) <= 1e-9 * greatest(abs(d.v), 1) \
             from (select g, {stat} as v from {pairs} as p group by g) as s \
             join (select g, {definition} as v from {both} as b group by g) as d on s.g = d.g"
        );
        assert_eq!(
            rows_on_both_executors(&c, &close),
            ["A|true", "N|true", "R|true"],
            "{stat}"
        );
    }
    // No pairs: null (regr_count 0); one pair: no spread to divide by.
    assert_eq!(
        rows_on_both_executors(
            &c,
            "select corr(n_nationkey, n_regionkey), covar_pop(n_nationkey, n_regionkey), \
             regr_count(n_nationkey, n_regionkey) from nation where n_nationkey < 0"
        ),
        ["null|null|0"]
    );
    assert_eq!(
        rows_on_both_executors(
            &c,
            "select covar_pop(n_nationkey, n_regionkey), covar_samp(n_nationkey, n_regionkey), \
             regr_slope(n_nationkey, n_regionkey), regr_avgx(n_nationkey, n_regionkey) \
             from nation where n_nationkey = 7"
        ),
        ["0.0|null|null|3.0"]
    );
    assert_refused(
        &c,
        &[
            (
                "select regr_slope(n_name, n_nationkey) from nation",
                "two numeric",
            ),
            (
                "select regr_count(n_nationkey) from nation",
                "takes 2 arguments",
            ),
        ],
    );
}

#[test]
fn bit_aggregates_equal_the_bits_computed_row_by_row() {
    let c = ctx(OptimizerOptions::default());
    // Negative values too: two's complement bits, as PostgreSQL's.
    let value = "l_orderkey * 7 - 30000";
    let mut want: std::collections::BTreeMap<String, [i64; 3]> = Default::default();
    for row in common::rows(
        &c.sql(&format!("select l_returnflag, {value} from lineitem"))
            .unwrap(),
    ) {
        let (g, v) = row.split_once('|').unwrap();
        let v: i64 = v.parse().unwrap();
        let acc = want.entry(g.to_string()).or_insert([-1, 0, 0]);
        *acc = [acc[0] & v, acc[1] | v, acc[2] ^ v];
    }
    let want: Vec<String> = (want.iter())
        .map(|(g, [and, or, xor])| format!("{g}|{and}|{or}|{xor}"))
        .collect();
    let sql = format!(
        "select l_returnflag, bit_and({value}), bit_or({value}), bit_xor({value}) \
         from lineitem group by 1"
    );
    assert_eq!(rows_on_both_executors(&c, &sql), want);
    // DISTINCT: each value once (x ^ x = 0); a group of nulls is null; the
    // argument's type is kept.
    assert_eq!(
        rows_on_both_executors(
            &c,
            "select bit_xor(distinct n_regionkey), bit_xor(n_regionkey), \
             bit_or(cast(null as int)) from nation"
        ),
        [format!(
            "{}|{}|null",
            4 ^ 3 ^ 2 ^ 1,
            [0i64, 1, 2, 3, 4].repeat(5).iter().fold(0, |a, b| a ^ b)
        )]
    );
    let lf = c
        .sql("select bit_and(cast(n_nationkey as smallint)) as b from nation")
        .unwrap();
    assert_eq!(
        common::column_type(&lf, "b"),
        arrow::datatypes::DataType::Int16
    );
    assert_refused(
        &c,
        &[("select bit_or(n_name) from nation", "needs an integer")],
    );
}

#[test]
fn grouping_sets_rollup_and_cube_equal_their_union_all_spellings() {
    let on = ctx(OptimizerOptions::default());
    let off = ctx(OptimizerOptions::none());
    // Key, a second key that ties, and an aggregate that sums.
    let from = "from nation where n_nationkey < 20";
    let a = "n_regionkey";
    let b = "n_nationkey % 2";
    let aggs = "count(*), sum(n_nationkey)";
    let by = |keys: &str, a_out: &str, b_out: &str, g: i64| {
        let group = if keys.is_empty() {
            String::new()
        } else {
            format!(" group by {keys}")
        };
        format!("select {a_out}, {b_out}, {aggs}, {g} as g {from}{group}")
    };
    let union = |branches: &[String]| branches.join(" union all ");
    let cases = [
        (
            format!(
                "select {a}, {b}, {aggs}, grouping({a}, {b}) as g {from} group by rollup ({a}, {b})"
            ),
            union(&[
                by(&format!("{a}, {b}"), a, b, 0),
                by(a, a, "null", 1),
                by("", "null", "null", 3),
            ]),
        ),
        (
            format!(
                "select {a}, {b}, {aggs}, grouping({a}, {b}) as g {from} group by cube ({a}, {b})"
            ),
            union(&[
                by(&format!("{a}, {b}"), a, b, 0),
                by(a, a, "null", 1),
                by(b, "null", b, 2),
                by("", "null", "null", 3),
            ]),
        ),
        // Repeated sets are kept, as PostgreSQL's; a plain key joins every set.
        (
            format!(
                "select {a}, {b}, {aggs}, grouping({b}) as g {from} \
                 group by {a}, grouping sets (({b}), ({b}), ())"
            ),
            union(&[
                by(&format!("{a}, {b}"), a, b, 0),
                by(&format!("{a}, {b}"), a, b, 0),
                by(a, a, "null", 1),
            ]),
        ),
        (
            format!("select {a}, {b}, {aggs}, 0 as g {from} group by {a}, {b} with rollup"),
            union(&[
                by(&format!("{a}, {b}"), a, b, 0),
                by(a, a, "null", 0),
                by("", "null", "null", 0),
            ]),
        ),
    ];
    for (sets, spelled) in &cases {
        let want = sorted_csv(&on, spelled);
        assert_eq!(sorted_csv(&on, sets), want, "{sets}");
        assert_eq!(sorted_csv(&off, sets), want, "{sets}: optimizer off");
        let rows = rows_on_both_executors(&on, sets);
        assert_eq!(rows.len(), want.lines().count() - 1, "{sets}: row-wise");
    }
    // HAVING filters and ORDER BY sorts the rows of every set; an empty
    // input still has its grand total.
    assert_eq!(
        common::rows(
            &on.sql(&format!(
                "select {a}, count(*) as n {from} group by rollup ({a}) \
                 having count(*) > 3 order by n desc, {a}"
            ))
            .unwrap()
        ),
        ["null|20", "0|5", "1|4", "2|4", "4|4"]
    );
    assert_eq!(
        common::rows(
            &on.sql(
                "select n_regionkey, count(*) from nation where false group by rollup (n_regionkey)"
            )
            .unwrap()
        ),
        ["null|0"]
    );
    assert_refused(
        &on,
        &[
            (
                "select grouping(n_name) from nation",
                "GROUPING() belongs in",
            ),
            (
                "select n_regionkey, grouping(n_name) from nation group by rollup (n_regionkey)",
                "'n_name' is not one of GROUP BY's",
            ),
            (
                "select n_name, count(*) from nation group by rollup (n_regionkey)",
                "must appear in GROUP BY",
            ),
        ],
    );
}

#[test]
fn recursive_ctes_iterate_to_a_fixpoint() {
    let c = ctx(OptimizerOptions::default());
    let q = |sql: &str| common::rows(&c.sql(sql).unwrap());
    // Counting: 1..=100.
    assert_eq!(
        q(
            "with recursive r(n) as (select 1 union all select n + 1 from r where n < 100) \
           select count(*), sum(n) from r"
        ),
        [format!("100|{}", (1..=100).sum::<i64>())]
    );
    // UNION ends on a cycle: the orbit of 0 under x -> (7x + 3) mod 25.
    let mut orbit = vec![0i64];
    while let Some(next) = orbit
        .last()
        .map(|x| (x * 7 + 3) % 25)
        .filter(|n| !orbit.contains(n))
    {
        orbit.push(next);
    }
    orbit.sort();
    assert_eq!(
        q(
            "with recursive o(x) as (select 0 union select (x * 7 + 3) % 25 from o) \
           select x from o order by x"
        ),
        orbit.iter().map(|x| x.to_string()).collect::<Vec<_>>()
    );
    // A step that joins a table: the nations reachable from nation 0 by
    // edges n -> m where m's region is n's key mod 5, walked in Rust too.
    let edges: Vec<(i64, i64)> = q("select a.n_nationkey, b.n_nationkey from nation a \
                                    join nation b on b.n_regionkey = a.n_nationkey % 5")
    .iter()
    .map(|r| {
        let (a, b) = r.split_once('|').unwrap();
        (a.parse().unwrap(), b.parse().unwrap())
    })
    .collect();
    let mut reached = vec![0i64];
    let mut i = 0;
    while i < reached.len() {
        for &(a, b) in &edges {
            if a == reached[i] && !reached.contains(&b) {
                reached.push(b);
            }
        }
        i += 1;
    }
    reached.sort();
    assert_eq!(
        q(
            "with recursive reach(k) as (select 0 union select b.n_nationkey from reach \
           join nation a on a.n_nationkey = reach.k join nation b on b.n_regionkey = a.n_nationkey % 5) \
           select k from reach order by k"
        ),
        reached.iter().map(|x| x.to_string()).collect::<Vec<_>>()
    );
    // A CTE of WITH RECURSIVE that does not read itself is an ordinary one.
    assert_eq!(
        q("with recursive one as (select 1 as n union all select 2) select sum(n) from one"),
        ["3"]
    );
    assert_refused(
        &c,
        &[
            (
                "with recursive r(n) as (select 1 union all select n + 1 from r) select * from r",
                "still gave rows after 10000 steps (SET max_recursion",
            ),
            (
                "with recursive r(n) as (select 1 union all select n, n from r) select * from r",
                "gives 2 columns, its base term 1",
            ),
        ],
    );
}

#[test]
fn max_recursion_is_a_setting() {
    let mut c = ctx(OptimizerOptions::default());
    let sql = "with recursive r(n) as (select 1 union all select n + 1 from r where n < 50) \
               select count(*) from r";
    assert_eq!(run_mut(&mut c, sql), "count(*)\n50\n");
    run_mut(&mut c, "set max_recursion = 10");
    assert!(run_mut(&mut c, sql).contains("after 10 steps"));
}

#[test]
fn order_by_all_sorts_by_every_output_column() {
    let c = ctx(OptimizerOptions::default());
    let q = |sql: &str| common::rows(&c.sql(sql).unwrap());
    for (all, spelled) in [
        (
            "select n_regionkey, n_name from nation order by all",
            "select n_regionkey, n_name from nation order by 1, 2",
        ),
        (
            "select n_regionkey, n_name from nation order by all desc",
            "select n_regionkey, n_name from nation order by 1 desc, 2 desc",
        ),
        (
            "select n_regionkey % 3 as r from nation union select null order by all nulls first",
            "select n_regionkey % 3 as r from nation union select null order by 1 nulls first",
        ),
    ] {
        assert_eq!(q(all), q(spelled), "{all}");
    }
    // A column that is really called "all" is still a column when quoted.
    assert_eq!(
        q("select n_nationkey as \"all\" from nation where n_nationkey < 3 order by \"all\" desc"),
        ["2", "1", "0"]
    );
}

#[test]
fn parameters_read_as_the_literals_they_stand_for() {
    use sloth::expr::ScalarValue;
    let c = ctx(OptimizerOptions::default());
    let date = ScalarValue::Date32(Some(9131)); // 1995-01-01
    let cases: [(&str, Vec<ScalarValue>, &str); 4] = [
        (
            "select count(*) from lineitem where l_shipdate >= $1 and l_quantity < $2",
            vec![date, 24i64.into()],
            "select count(*) from lineitem where l_shipdate >= date '1995-01-01' and l_quantity < 24",
        ),
        // One parameter read twice, a string, a float.
        (
            "select n_name from nation where n_name < $1 or n_name = $1 or n_nationkey * 1.5 > $2",
            vec!["CHINA".into(), 30.0f64.into()],
            "select n_name from nation where n_name < 'CHINA' or n_name = 'CHINA' or n_nationkey * 1.5 > 30.0",
        ),
        (
            "select coalesce($1, 'none') as v",
            vec![ScalarValue::Null],
            "select coalesce(null, 'none') as v",
        ),
        (
            "select r_name from region where r_regionkey in (select n_regionkey from nation where n_nationkey = $1)",
            vec![7i64.into()],
            "select r_name from region where r_regionkey in (select n_regionkey from nation where n_nationkey = 7)",
        ),
    ];
    for (sql, params, literal) in cases {
        let with_params = c.sql_with_params(sql, &params).unwrap().collect().unwrap();
        assert_eq!(
            with_params.to_sorted_csv().unwrap(),
            sorted_csv(&c, literal),
            "{sql}"
        );
    }
    let e = c
        .sql_with_params("select $1 + $3", &[1i64.into()])
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("no value for parameter $3 (1 given)"),
        "{e}"
    );
    let e = c.sql("select ?").unwrap_err();
    assert!(e.to_string().contains("parameters are $1, $2"), "{e}");
}

#[test]
fn prepared_statements_run_with_each_execute_s_values() {
    let mut c = ctx(OptimizerOptions::default());
    assert_eq!(
        run_mut(
            &mut c,
            "prepare by_region as select count(*) as n from nation where n_regionkey = $1"
        ),
        ""
    );
    for region in 0..5 {
        assert_eq!(
            run_mut(&mut c, &format!("execute by_region({region})")),
            run_mut(
                &mut c,
                &format!("select count(*) as n from nation where n_regionkey = {region}")
            )
        );
    }
    // Values are constant expressions.
    assert_eq!(
        run_mut(&mut c, "execute by_region(1 + 1)"),
        run_mut(&mut c, "execute by_region(2)")
    );
    assert!(run_mut(&mut c, "execute by_region(n_name)").contains("is not a constant"));
    assert_eq!(run_mut(&mut c, "deallocate by_region"), "");
    assert!(
        run_mut(&mut c, "execute by_region(1)").contains("no prepared statement named 'by_region'")
    );
    assert!(run_mut(&mut c, "prepare p as select $2").is_empty());
    assert!(run_mut(&mut c, "execute p(1)").contains("no value for parameter $2 (1 given)"));
}

#[test]
fn untyped_nulls_and_quoted_constants_type_as_in_postgresql() {
    let c = ctx(OptimizerOptions::default());
    // A null argument of a strict function makes its value null.
    assert_eq!(
        rows_on_both_executors(
            &c,
            "select abs(null), -null, upper(null), substr(n_name, cast(null as int)), \
             round(n_nationkey, null), md5(null), null & 1, coalesce(null, n_nationkey) \
             from nation where n_nationkey = 3"
        ),
        ["null|null|null|null|null|null|null|3"]
    );
    // Quoted constants take the other side's type.
    for (quoted, typed) in [
        (
            "select n_name from nation where n_nationkey in ('1', '15') or n_regionkey = '4'",
            "select n_name from nation where n_nationkey in (1, 15) or n_regionkey = 4",
        ),
        (
            "select coalesce(case when n_nationkey > 20 then n_nationkey end, '-1') from nation",
            "select coalesce(case when n_nationkey > 20 then n_nationkey end, -1) from nation",
        ),
        (
            "select case when 'true' then n_regionkey else '9' end from nation",
            "select case when true then n_regionkey else 9 end from nation",
        ),
    ] {
        assert_eq!(
            rows_on_both_executors(&c, quoted),
            rows_on_both_executors(&c, typed),
            "{quoted}"
        );
    }
    assert_refused(
        &c,
        &[(
            "select count(*) from nation where n_nationkey in ('x')",
            "'x'",
        )],
    );
}

#[test]
fn bitwise_and_pattern_operators_equal_their_functions() {
    let c = ctx(OptimizerOptions::default());
    let keys: Vec<i64> = (0..25).collect();
    let want: Vec<String> = keys
        .iter()
        .map(|&k| {
            format!(
                "{k}|{}|{}|{}|{}|{}",
                k & 6,
                k | 9,
                k ^ 5,
                k << 3,
                (k - 12) >> 1
            )
        })
        .collect();
    assert_eq!(
        rows_on_both_executors(
            &c,
            "select n_nationkey, n_nationkey & 6, n_nationkey | 9, xor(n_nationkey, 5), \
             n_nationkey << 3, (n_nationkey - 12) >> 1 from nation"
        ),
        {
            let mut w = want;
            w.sort();
            w
        }
    );
    for (operator, function) in [
        ("n_name ~ 'AN'", "regexp_matches(n_name, 'AN')"),
        ("n_name !~ '^[A-C]'", "not regexp_matches(n_name, '^[A-C]')"),
        ("n_name ~* 'an'", "regexp_matches(lower(n_name), 'an')"),
        ("n_name ~~ '%IA'", "n_name like '%IA'"),
        ("n_name !~~* '%ia'", "n_name not ilike '%ia'"),
        ("2 ^ n_regionkey", "power(2, n_regionkey)"),
    ] {
        assert_eq!(
            sorted_csv(&c, &format!("select n_name, {operator} as v from nation")),
            sorted_csv(&c, &format!("select n_name, {function} as v from nation")),
            "{operator}"
        );
    }
    assert_refused(
        &c,
        &[
            ("select 1 << 64", "overflows"),
            ("select 1.5 & 1", "needs integers"),
        ],
    );
}

#[test]
fn replace_named_windows_constant_limits_and_exists_with_limit_equal_their_spellings() {
    let c = ctx(OptimizerOptions::default());
    let pairs = [
        (
            "select * exclude (n_comment) replace (n_nationkey * 10 as n_nationkey, lower(n_name) as n_name) from nation",
            "select n_nationkey * 10 as n_nationkey, lower(n_name) as n_name, n_regionkey from nation",
        ),
        (
            "select n_name, sum(n_nationkey) over w as s, rank() over w as r, \
             count(*) over (w rows between 1 preceding and current row) as c \
             from nation window w as (partition by n_regionkey order by n_name)",
            "select n_name, sum(n_nationkey) over (partition by n_regionkey order by n_name) as s, \
             rank() over (partition by n_regionkey order by n_name) as r, \
             count(*) over (partition by n_regionkey order by n_name rows between 1 preceding and current row) as c \
             from nation",
        ),
        (
            "select n_name, first_value(n_name) over v as f from nation \
             window w as (partition by n_regionkey), v as (w order by n_name desc)",
            "select n_name, first_value(n_name) over (partition by n_regionkey order by n_name desc) as f from nation",
        ),
        (
            "select n_name from nation order by n_name limit 1 + 2 offset 2 * 2",
            "select n_name from nation order by n_name limit 3 offset 4",
        ),
        (
            "select n_name from nation limit null",
            "select n_name from nation",
        ),
        // A quoted qualifier keeps its case.
        (
            "select \"T\".* exclude (n_comment) from nation as \"T\"",
            "select n_nationkey, n_name, n_regionkey from nation",
        ),
        (
            "select n_name from nation n where exists \
             (select * from region r where r.r_regionkey = n.n_regionkey and r.r_name like 'A%' order by 1 limit 1)",
            "select n_name from nation n where exists \
             (select * from region r where r.r_regionkey = n.n_regionkey and r.r_name like 'A%')",
        ),
    ];
    for (written, spelled) in pairs {
        assert_eq!(
            sorted_csv(&c, written),
            sorted_csv(&c, spelled),
            "{written}"
        );
    }
    assert_refused(
        &c,
        &[
            (
                "select * replace (1 as nope) from nation",
                "REPLACE names column 'nope'",
            ),
            ("select rank() over w from nation", "unknown window 'w'"),
            ("select 1 limit n_name", "LIMIT must be a constant"),
            ("select 1 limit -1", "non-negative integer"),
        ],
    );
}

#[test]
fn overlay_and_unsigned_types_follow_their_definitions() {
    let c = ctx(OptimizerOptions::default());
    // PostgreSQL's documented example, and the definition by substrings.
    assert_eq!(
        common::rows(
            &c.sql("select overlay('Txxxxas' placing 'hom' from 2 for 4)")
                .unwrap()
        ),
        ["Thomas"]
    );
    assert_eq!(
        sorted_csv(
            &c,
            "select overlay(n_name placing '--' from 3) as v from nation"
        ),
        sorted_csv(
            &c,
            "select substr(n_name, 1, 2) || '--' || substr(n_name, 5) as v from nation"
        )
    );
    for (name, arrow_type) in [
        ("utinyint", "UInt8"),
        ("usmallint", "UInt16"),
        ("uinteger", "UInt32"),
        ("ubigint", "UInt64"),
        ("int unsigned", "UInt32"),
        ("bigint unsigned", "UInt64"),
    ] {
        let lf = c
            .sql(&format!(
                "select cast(n_nationkey as {name}) as u from nation"
            ))
            .unwrap();
        assert_eq!(
            common::column_type(&lf, "u").to_string(),
            arrow_type,
            "{name}"
        );
        assert_eq!(
            sorted_csv(
                &c,
                &format!("select cast(n_nationkey as {name}) as u from nation")
            ),
            sorted_csv(&c, "select n_nationkey as u from nation"),
            "{name}"
        );
    }
    assert_refused(
        &c,
        &[("select cast(-1 as uinteger)", "Can't cast value -1")],
    );
}

#[test]
fn correlated_scalar_subqueries_read_their_value_over_no_rows() {
    let c = ctx(OptimizerOptions::default());
    // Regions 2 and 3 have no nation below 5: count(*) + 2 is 2 there and
    // coalesce(sum, 0) is 0, as the outer-join spelling with the empty
    // group's values says.
    let subqueries = "select r_regionkey, \
        (select count(*) + 2 from nation n where n.n_regionkey = r.r_regionkey and n_nationkey < 5) as a, \
        (select coalesce(sum(n_nationkey), 0) from nation n where n.n_regionkey = r.r_regionkey and n_nationkey < 5) as b, \
        (select max(n_nationkey) from nation n where n.n_regionkey = r.r_regionkey and n_nationkey < 5) as m \
        from region r";
    let joined = "select r_regionkey, count(n_nationkey) + 2 as a, coalesce(sum(n_nationkey), 0) as b, \
        max(n_nationkey) as m from region r \
        left join nation n on n.n_regionkey = r.r_regionkey and n_nationkey < 5 group by r_regionkey";
    assert_eq!(
        rows_on_both_executors(&c, subqueries),
        rows_on_both_executors(&c, joined)
    );
    assert_eq!(
        rows_on_both_executors(&c, subqueries),
        ["0|3|0|0", "1|5|6|3", "2|2|0|null", "3|2|0|null", "4|3|4|4"]
    );
    // A value that is null over no rows (typed: 0.2 * avg) reads the join's
    // column as it is, with no CASE around it: TPC-H Q17 and Q20 keep
    // their plans (a CASE there doubled their time).
    let q17 = query("q17");
    let plan = c.sql(&q17).unwrap().explain(false).unwrap();
    assert!(!plan.contains("CASE"), "{plan}");
}

#[test]
fn array_agg_collects_each_group_s_values_in_order() {
    let c = ctx(OptimizerOptions::default());
    // Against the same values joined by string_agg (which skips nulls,
    // so the values here have none), in key order and in both directions.
    for direction in ["", " desc"] {
        let lists = format!(
            "select n_regionkey, array_agg(n_name order by n_name{direction}) as v from nation group by 1"
        );
        let texts = format!(
            "select n_regionkey, '[' || string_agg(n_name, ', ' order by n_name{direction}) || ']' as v \
             from nation group by 1"
        );
        assert_eq!(
            sorted_csv(&c, &lists),
            sorted_csv(&c, &texts),
            "{direction}"
        );
    }
    // Nulls are kept; a group of no rows is null; list() is DuckDB's name.
    assert_eq!(
        common::rows(
            &c.sql(
                "select list(case when n_nationkey % 2 = 0 then n_nationkey end order by n_nationkey) \
                 from nation where n_regionkey = 1"
            )
            .unwrap()
        ),
        ["[null, 2, null, null, 24]"]
    );
    assert_eq!(
        common::rows(
            &c.sql("select array_agg(n_name) from nation where false")
                .unwrap()
        ),
        ["null"]
    );
    // Lists reach every output: CSV as text.
    let df = c
        .sql("select array_agg(r_regionkey order by r_regionkey) as l from region")
        .unwrap()
        .collect()
        .unwrap();
    assert_eq!(df.to_sorted_csv().unwrap(), "l\n\"[0, 1, 2, 3, 4]\"\n");
    // The row-wise executor says it cannot, rather than answering wrong.
    let plan = c
        .sql("select array_agg(n_name) from nation")
        .unwrap()
        .physical_plan()
        .unwrap();
    let e = sloth::exec::rowwise::execute_rowwise(&plan).unwrap_err();
    assert!(
        e.to_string().contains("row-wise execution of array_agg()"),
        "{e}"
    );
}

#[test]
fn ignore_nulls_fills_from_the_nearest_present_value() {
    let c = ctx(OptimizerOptions::default());
    // A series with gaps: nation keys, null where the key is odd.
    let series = "(select n_nationkey as k, case when n_nationkey % 2 = 0 then n_nationkey end as v from nation)";
    let filled = format!(
        "select k, last_value(v ignore nulls) over (order by k) as f, \
         first_value(v ignore nulls) over (order by k rows between current row and unbounded following) as b \
         from {series} as s"
    );
    // Forward fill: the last even key up to k; backward: the next one from k.
    let want: Vec<String> = (0..25i64)
        .map(|k| {
            let back = if k % 2 == 0 {
                k.to_string()
            } else if k < 24 {
                (k + 1).to_string()
            } else {
                "null".into()
            };
            format!("{k}|{}|{back}", k - k % 2)
        })
        .collect();
    let mut want = want;
    want.sort();
    assert_eq!(rows_on_both_executors(&c, &filled), want);
    assert_refused(
        &c,
        &[(
            "select nth_value(n_name, 2 ignore nulls) over (order by n_name) from nation",
            "IGNORE NULLS",
        )],
    );
    // lag / lead count rows with a value only: the previous even key, the
    // second one after.
    let shifted = format!(
        "select k, lag(v) ignore nulls over (order by k) as p, \
         lead(v, 2 ignore nulls) over (order by k) as n from {series} as s"
    );
    let mut want: Vec<String> = (0..25i64)
        .map(|k| {
            let before = (k - 1 - (k - 1).rem_euclid(2)).to_string();
            let before = if k == 0 { "null".to_string() } else { before };
            let after = k + 1 + (k + 1) % 2 + 2;
            let after = if after <= 24 {
                after.to_string()
            } else {
                "null".into()
            };
            format!("{k}|{before}|{after}")
        })
        .collect();
    want.sort();
    assert_eq!(rows_on_both_executors(&c, &shifted), want);
}

#[test]
fn subqueries_correlated_by_non_equalities_read_per_row_values() {
    let c = ctx(OptimizerOptions::default());
    // Each against its spelling as an outer join with the condition in
    // ON, grouped per outer row (regions 3 and 4 have no nation above
    // their key * 5 .. some do: counts of 0 included).
    let pairs = [
        (
            "select r_regionkey, (select count(*) from nation n where n.n_nationkey > r.r_regionkey * 5) as c \
             from region r",
            "select r_regionkey, count(n_nationkey) as c from region r \
             left join nation n on n.n_nationkey > r.r_regionkey * 5 group by r_regionkey",
        ),
        (
            "select r_regionkey, (select max(n_name) from nation n \
             where n.n_regionkey = r.r_regionkey and n.n_nationkey < r.r_regionkey * 6) as m from region r",
            "select r_regionkey, max(n_name) as m from region r left join nation n \
             on n.n_regionkey = r.r_regionkey and n.n_nationkey < r.r_regionkey * 6 group by r_regionkey",
        ),
        (
            "select r_regionkey, r_regionkey * 5 > all (select n_nationkey from nation n \
             where n.n_regionkey < r.r_regionkey) as a from region r",
            "select r_regionkey, not exists (select 1 from nation n where n.n_regionkey < r.r_regionkey \
             and n.n_nationkey >= r.r_regionkey * 5) as a from region r",
        ),
        (
            "select n_nationkey from nation o where n_regionkey < \
             (select count(*) from region r where r.r_regionkey * 5 > o.n_nationkey)",
            "select n_nationkey from nation o where n_regionkey < 4 - n_nationkey / 5",
        ),
    ];
    for (subquery, spelled) in pairs {
        let rows = rows_on_both_executors(&c, subquery);
        assert_eq!(rows, rows_on_both_executors(&c, spelled), "{subquery}");
        assert!(rows.len() > 1, "{subquery}: {rows:?}");
    }
    // A condition that can hold for a NULL outer value would need the
    // outer rows joined null-safely: refused, not answered wrong.
    assert_refused(
        &c,
        &[(
            "select r_regionkey, (select count(*) from nation n \
             where n.n_nationkey > coalesce(r.r_regionkey, 0)) from region r",
            "can hold when outer column",
        )],
    );
}

#[test]
fn correlated_not_in_follows_three_valued_logic() {
    let c = ctx(OptimizerOptions::default());
    // Values with nulls on both sides: x is null for nations 0-4, and the
    // subquery's values hold a null for AMERICA.
    let from = "(select n_nationkey as k, case when n_nationkey >= 5 then n_nationkey % 7 end as x, \
                n_regionkey as g from nation) as o";
    let s = "(select r_regionkey as g, case when r_name like 'AM%' then null else r_regionkey end as v from region)";
    let not_in =
        format!("select k from {from} where x not in (select v from {s} as s where s.g = o.g % 3)");
    // True iff the set is empty, or x is not null, not in it, and it has no null.
    let spelled = format!(
        "select k from {from} where not exists (select 1 from {s} as s where s.g = o.g % 3 and s.v = o.x) \
         and (not exists (select 1 from {s} as s where s.g = o.g % 3) \
              or (o.x is not null and not exists (select 1 from {s} as s where s.g = o.g % 3 and s.v is null)))"
    );
    let rows = rows_on_both_executors(&c, &not_in);
    assert_eq!(rows, rows_on_both_executors(&c, &spelled));
    assert!(!rows.is_empty() && rows.len() < 25, "{rows:?}");
}

#[test]
fn distinct_on_keeps_the_first_row_of_each_group_in_order() {
    let c = ctx(OptimizerOptions::default());
    let pairs = [
        (
            "select distinct on (n_regionkey) n_regionkey, n_name from nation order by n_regionkey, n_name desc",
            "select n_regionkey, max(n_name) as n_name from nation group by 1",
        ),
        (
            "select distinct on (r) n_regionkey as r, n_nationkey, n_name from nation order by r, n_nationkey",
            "select n.n_regionkey as r, n.n_nationkey, n.n_name from nation n \
             join (select n_regionkey, min(n_nationkey) as k from nation group by 1) m \
             on n.n_nationkey = m.k",
        ),
    ];
    for (distinct_on, spelled) in pairs {
        assert_eq!(
            rows_on_both_executors(&c, distinct_on),
            rows_on_both_executors(&c, spelled),
            "{distinct_on}"
        );
    }
    // Without ORDER BY: one row per key, whichever.
    assert_eq!(
        rows_on_both_executors(
            &c,
            "select distinct on (n_regionkey) n_regionkey from nation"
        )
        .len(),
        5
    );
}

/// Runs `sql` as the shell does: its rows as sorted CSV, "" for a
/// statement with nothing to show, or the error's text.
fn run_mut(c: &mut SqlContext, sql: &str) -> String {
    match c.execute_mut(sql) {
        Ok(sloth::sql::SqlOutput::Frame(df)) => df.to_sorted_csv().unwrap(),
        Ok(sloth::sql::SqlOutput::Text(t)) => t,
        Ok(sloth::sql::SqlOutput::Done) => String::new(),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn create_table_view_drop_and_copy_change_the_context_and_write_files() {
    let c = &mut ctx(OptimizerOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let asia = "select n_name from nation where n_regionkey = 2";
    let expected = run_mut(c, asia);
    // A table holds the result; a view runs its plan when read.
    assert_eq!(run_mut(c, &format!("create table asia as {asia}")), "");
    assert_eq!(run_mut(c, "select * from asia"), expected);
    assert_eq!(run_mut(c, &format!("create view asia_view as {asia}")), "");
    assert_eq!(run_mut(c, "select * from asia_view"), expected);
    assert!(run_mut(c, "create table asia as select 1").contains("already exists"));
    assert_eq!(
        run_mut(c, "create table if not exists asia as select 1"),
        ""
    );
    assert_eq!(run_mut(c, "select * from asia"), expected);
    run_mut(c, "create or replace table asia as select 1 as one");
    assert_eq!(run_mut(c, "select * from asia"), "one\n1\n");
    // COPY writes each format; the files read back give the same rows.
    for ext in ["parquet", "csv", "arrow"] {
        let path = dir.path().join(format!("out.{ext}"));
        let copy = format!("copy (select * from asia_view) to '{}'", path.display());
        assert_eq!(run_mut(c, &copy), "");
        c.register_file("copied", &path).unwrap();
        assert_eq!(run_mut(c, "select n_name from copied"), expected, "{ext}");
    }
    let path = dir.path().join("nations.data");
    let copy = format!("copy nation (n_name) to '{}' (format csv)", path.display());
    assert_eq!(run_mut(c, &copy), "");
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 26);
    // DROP forgets names, never files.
    assert_eq!(run_mut(c, "drop table asia, copied"), "");
    assert_eq!(run_mut(c, "drop view asia_view"), "");
    assert!(run_mut(c, "select * from asia").contains("unknown table 'asia'"));
    assert!(run_mut(c, "drop table asia").contains("unknown table 'asia'"));
    assert_eq!(run_mut(c, "drop table if exists asia"), "");
    assert!(dir.path().join("out.parquet").exists());
    for (sql, what) in [
        ("copy (select 1) to 'x.txt'", "give (FORMAT ..)"),
        (
            "copy (select 1) to 'x.csv' (format xml)",
            "COPY format 'xml'",
        ),
        ("create table t (a int)", "CREATE TABLE without AS"),
        ("create table s.t as select 1", "qualified table name"),
    ] {
        let e = run_mut(c, sql);
        assert!(e.contains(what), "{sql}: {e}");
    }
}

#[test]
fn long_union_chains_stay_flat_and_keep_their_semantics() {
    let c = ctx(OptimizerOptions::default());
    let terms = 3_000;
    let chain: Vec<String> = (0..terms)
        .map(|i| format!("select {} as x", i % 1000))
        .collect();
    let values: Vec<String> = (0..terms).map(|i| format!("({})", i % 1000)).collect();
    assert_eq!(
        sorted_csv(&c, &chain.join(" union all ")),
        sorted_csv(
            &c,
            &format!("select column1 as x from (values {})", values.join(", "))
        )
    );
    assert_eq!(
        sorted_csv(&c, &chain.join(" union ")),
        sorted_csv(
            &c,
            &format!(
                "select distinct column1 as x from (values {})",
                values.join(", ")
            )
        )
    );
    // Mixed chains apply each operator to everything on its left.
    for (mixed, same) in [
        (
            "select 1 as x union select 1 union all select 1 union select 2",
            "select 1 as x union all select 2",
        ),
        (
            "select 1 as x union all select 1 union select 2 union all select 2",
            "select 1 as x union all select 2 union all select 2",
        ),
        (
            "(select 1 as x union all select 1) union all (select 1 union select 1)",
            "select 1 as x union all select 1 union all select 1",
        ),
    ] {
        assert_eq!(sorted_csv(&c, mixed), sorted_csv(&c, same), "{mixed}");
    }
}
