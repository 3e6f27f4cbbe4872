//! The row-wise (tuple-at-a-time) executor gives the same results as the
//! columnar one on every TPC-H query and the db-benchmark questions, and the
//! per-operator metrics of both agree on rows.

use crate::common;

use sloth::datagen::h2o_groupby;
use sloth::exec::rowwise::execute_rowwise;
use sloth::exec::{ExecContext, execute_with};
use sloth::prelude::*;
use sloth::sql::SqlContext;

fn ctx() -> SqlContext {
    let mut c = common::tpch_context(OptimizerOptions::default());
    let x = LazyFrame::from_batches(h2o_groupby(5_000, 10).unwrap()).unwrap();
    c.register("x", x);
    // Lineitem in 2,048-row batches: operators see many morsels per thread.
    let (schema, batches) = sloth::datagen::tpch_table("lineitem", 0.01).unwrap();
    let all = arrow::compute::concat_batches(&schema, &batches).unwrap();
    c.register(
        "lineitem_small",
        LazyFrame::from_batches_with_schema(schema, common::split(&all, 2048)).unwrap(),
    );
    c
}

fn close(a: &str, b: &str) -> bool {
    a == b
        || match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
            _ => false,
        }
}

/// Runs `sql` both ways and compares rows (sorted: ties may order differently).
fn check(sql: &str, label: &str) {
    check_with(sql, label, ExecContext::unfused())
}

/// As [`check`], the columnar side run with `ctx`.
fn check_with(sql: &str, label: &str, ctx: ExecContext) {
    let lf = self::ctx()
        .sql(sql)
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    let plan = lf.physical_plan().unwrap();
    let columnar = execute_with(&plan, &ctx).unwrap();
    let (rowwise, row_metrics) = execute_rowwise(&plan).unwrap_or_else(|e| panic!("{label}: {e}"));
    let schema = plan.schema();
    let mut a = common::rows_of(&DataFrame::new(schema.clone(), columnar));
    let mut b = common::rows_of(&DataFrame::new(schema, rowwise));
    a.sort();
    b.sort();
    assert_eq!(a.len(), b.len(), "{label}: row counts");
    for (x, y) in a.iter().zip(&b) {
        let (xs, ys): (Vec<&str>, Vec<&str>) = (x.split('|').collect(), y.split('|').collect());
        assert!(
            xs.iter().zip(&ys).all(|(p, q)| close(p, q)),
            "{label}: columnar {x} vs row-wise {y}"
        );
    }
    // Both executors agree on how many rows every operator produced.
    let col_metrics = ctx.metrics();
    assert_eq!(col_metrics.len(), row_metrics.len(), "{label}");
    for (c, r) in col_metrics.iter().zip(&row_metrics) {
        assert_eq!(c.id, r.id);
        assert_eq!(c.rows_out, r.rows_out, "{label}: {}", c.name);
    }
}

#[test]
fn tpch_rowwise_equals_columnar() {
    for i in 1..=22 {
        let name = format!("q{i:02}");
        let sql = std::fs::read_to_string(format!(
            "{}/queries/tpch/{name}.sql",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        check(sql.trim().trim_end_matches(';'), &name);
    }
}

#[test]
fn h2o_rowwise_equals_columnar() {
    for i in 1..=10 {
        let name = format!("groupby-q{i:02}");
        let sql = std::fs::read_to_string(format!(
            "{}/queries/h2o/{name}.sql",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let sql: String = sql
            .lines()
            .filter(|l| !l.starts_with("--"))
            .collect::<Vec<_>>()
            .join("\n");
        check(sql.trim().trim_end_matches(';'), &name);
    }
}

/// Window aggregates: the columnar executor's accumulators per partition
/// against the row-wise executor's own per-row aggregate states.
#[test]
fn window_aggregates_over_partitions_with_null_keys_and_values() {
    let nullable_key = "case when c_custkey % 7 = 0 then null else c_nationkey end";
    let nullable_value = "case when c_custkey % 5 = 0 then null else c_acctbal end";
    for (agg, label) in [
        ("sum", "sum"),
        ("avg", "avg"),
        ("min", "min"),
        ("max", "max"),
        ("count", "count"),
        ("stddev_samp", "stddev"),
        ("median", "median"),
    ] {
        check(
            &format!(
                "select c_custkey, {agg}({nullable_value}) over (partition by {nullable_key}, c_mktsegment) w, count(*) over () n from customer"
            ),
            label,
        );
    }
}

/// Running aggregates: ties on the order key are peers and share a value,
/// so the answer is the same whatever order ties come in.
#[test]
fn running_aggregates_over_peers_with_nulls() {
    let nullable_value = "case when o_orderkey % 5 = 0 then null else o_totalprice end";
    check(
        &format!(
            "select o_orderkey, sum({nullable_value}) over (partition by o_orderpriority order by o_orderdate) s, count({nullable_value}) over (order by o_orderstatus) c, avg({nullable_value}) over (partition by o_custkey order by o_orderdate desc) a, min(o_clerk) over (partition by o_orderstatus order by o_shippriority, o_orderdate) lo, max({nullable_value}) over (order by case when o_custkey % 3 = 0 then null else o_custkey end) hi from orders"
        ),
        "running aggregates",
    );
}

/// A scalar subquery that is no aggregate is grouped and checked to give
/// at most one row per key, in both executors.
#[test]
fn scalar_subqueries_that_are_not_aggregates() {
    check(
        "select c_custkey, (select n_name from nation where n_nationkey = c_nationkey) n, (select count(*) from orders where o_custkey = c_custkey) k from customer",
        "scalar subqueries",
    );
}

/// lag / lead over a total order (ties would let the executors differ).
#[test]
fn lag_and_lead_read_neighbours_within_partitions() {
    check(
        "select o_orderkey, lag(o_totalprice) over (partition by o_custkey order by o_orderdate, o_orderkey) p, lead(o_orderstatus, 2) over (partition by case when o_custkey % 3 = 0 then null else o_custkey end order by o_orderkey desc) n from orders",
        "lag/lead",
    );
    // With a default (an expression of the row itself), where the offset
    // leaves the partition; a null neighbour stays null.
    check(
        "select o_orderkey, lag(case when o_orderkey % 4 = 0 then null else o_totalprice end, 1, o_orderkey * 2) over (partition by o_custkey order by o_orderdate, o_orderkey) p, lead(o_orderstatus, 3, 'none') over (partition by o_orderpriority order by o_orderkey) n from orders",
        "lag/lead with defaults",
    );
}

#[test]
fn keys_that_stop_fitting_a_packed_key_midway_give_the_same_groups() {
    // Short strings first (packed keys), then long ones: each thread's table
    // moves to byte rows part way, and the merge must still unite the keys.
    let key = "case when l_orderkey < 30000 then l_shipmode else substr(l_comment, 1, 20) end";
    check(
        &format!(
            "select {key} k, l_linestatus, count(*), sum(l_quantity) from lineitem group by {key}, l_linestatus"
        ),
        "group by short-then-long strings",
    );
    check(
        &format!(
            "select count(*) from lineitem l join (select distinct {key} k from lineitem where l_orderkey < 40000) s on {key} = s.k"
        ),
        "join on short-then-long strings",
    );
    check(
        "select p_type, p_size, count(*) from part group by p_type, p_size",
        "long strings from the start",
    );
}

#[test]
fn keys_too_wide_to_pack_group_in_fixed_width_rows_then_byte_rows() {
    // A string and two Int64s: past 16 bytes, so 64-byte key rows.
    check(
        "select l_shipmode, l_orderkey, l_partkey, count(*), sum(l_quantity) from lineitem group by l_shipmode, l_orderkey, l_partkey",
        "wide keys",
    );
    // Null strings and integers among them form groups of their own.
    check(
        "select case when l_linenumber = 1 then null else l_shipmode end m, \
                case when l_linenumber = 2 then null else l_suppkey end s, l_returnflag, \
                l_linestatus, count(*), min(l_shipdate) from lineitem group by m, s, l_returnflag, l_linestatus",
        "wide keys with nulls",
    );
    // Strings that outgrow their slot (22 bytes beside another string and
    // two Int64s) part way: the tables move to byte rows.
    let key = "case when l_orderkey < 30000 then l_shipmode else l_comment end";
    check(
        &format!(
            "select {key} k, l_returnflag, l_orderkey, l_suppkey, count(*) from lineitem group by {key}, l_returnflag, l_orderkey, l_suppkey"
        ),
        "wide keys, then too long",
    );
}

#[test]
fn high_cardinality_groups_split_into_partitions_with_the_same_results() {
    // 60k groups: past a split threshold lowered to 16k, so thread tables
    // split into hash partitions and merge partition by partition.
    let check = |sql: &str, label: &str| {
        check_with(
            sql,
            label,
            ExecContext::unfused().with_agg_split_groups(1 << 14),
        )
    };
    check(
        "select l_orderkey, l_linenumber, count(*), sum(l_extendedprice), min(l_shipdate) from lineitem_small group by l_orderkey, l_linenumber",
        "split int keys",
    );
    // Short keys (packed) for 54k groups, then long ones: the split tables
    // move to byte rows and are dealt out again by their new hashes.
    let key = "case when l_orderkey < 54000 then cast(l_orderkey * 10 + l_linenumber as varchar) else l_comment end";
    check(
        &format!("select {key} k, count(*), avg(l_quantity) from lineitem_small group by {key}"),
        "split, then keys too long to pack",
    );
    check(
        "select l_orderkey, l_linenumber, l_shipmode, count(*), sum(l_quantity) from lineitem_small group by l_orderkey, l_linenumber, l_shipmode",
        "split wide keys",
    );
    let key = "case when l_orderkey < 54000 then l_shipmode else l_comment end";
    check(
        &format!(
            "select {key} k, l_returnflag, l_orderkey, l_linenumber, count(*) from lineitem_small group by {key}, l_returnflag, l_orderkey, l_linenumber"
        ),
        "split wide keys, then too long",
    );
}

#[test]
fn large_build_sides_are_built_in_hash_partitions_with_the_same_results() {
    // 180k build rows (past the parallel-build threshold of 128k): the build
    // is split by key hash into tables built in parallel. Every key repeats
    // three times on both sides, and a sixth of the keys are null.
    let three = "(select case when l_linenumber = 1 then null else l_orderkey end k, l_linenumber n, l_quantity q from lineitem \
                 union all select case when l_linenumber = 1 then null else l_orderkey end, l_linenumber, l_quantity from lineitem \
                 union all select case when l_linenumber = 1 then null else l_orderkey end, l_linenumber, l_quantity from lineitem)";
    check(
        &format!(
            "select count(*), sum(a.q), sum(b.q) from {three} a join {three} b on a.k = b.k and a.n = b.n"
        ),
        "partitioned build, inner, two keys",
    );
    check(
        &format!(
            "select a.n, count(*), count(b.k) from {three} a left join {three} b on a.k = b.k and a.n = b.n group by a.n"
        ),
        "partitioned build, left join with null keys",
    );
    check(
        &format!(
            "select count(*) from {three} a where a.k in (select k from {three} b where b.n = 2)"
        ),
        "partitioned build, semi join",
    );
}

/// date_trunc (each unit, null dates) and concat (nulls read as '') in
/// both executors.
#[test]
fn date_trunc_and_concat() {
    let nullable_date = "case when o_orderkey % 7 = 0 then null else o_orderdate end";
    check(
        &format!(
            "select o_orderkey, date_trunc('year', {nullable_date}), date_trunc('quarter', o_orderdate), date_trunc('month', o_orderdate), date_trunc('week', {nullable_date}), date_trunc('day', o_orderdate), concat(o_orderpriority, '/', case when o_orderkey % 3 = 0 then null else o_custkey end, o_orderdate) from orders"
        ),
        "date_trunc and concat",
    );
}

/// ROWS frames of every shape, over decimals, floats and integers with
/// nulls: the columnar folds against the row-wise executor's aggregate
/// state per row over its frame.
#[test]
fn rows_frames_of_every_shape() {
    let price = "case when o_orderkey % 6 = 0 then null else o_totalprice end";
    let window = "partition by o_custkey order by o_orderdate, o_orderkey";
    for (frame, label) in [
        ("rows between 2 preceding and 1 following", "bounded"),
        ("rows 3 preceding", "preceding to current"),
        (
            "rows between unbounded preceding and 1 preceding",
            "running, excluding",
        ),
        ("rows between 1 following and unbounded following", "suffix"),
        ("rows between 2 following and 4 following", "ahead only"),
        (
            "rows between unbounded preceding and unbounded following",
            "whole",
        ),
    ] {
        check(
            &format!(
                "select o_orderkey, sum({price}) over ({window} {frame}) s, avg({price}) over ({window} {frame}) a, count({price}) over ({window} {frame}) c, count(*) over ({window} {frame}) n, min(o_shippriority + o_orderkey % 7) over ({window} {frame}) lo, max(cast({price} as double)) over ({window} {frame}) hi, min(case when o_orderkey % 5 = 0 then null else o_clerk end) over ({window} {frame}) first_clerk, max(o_orderpriority) over ({window} {frame}) best from orders"
            ),
            label,
        );
    }
}

/// RANGE frames with offsets over date, decimal and nullable keys, in
/// either direction, and GROUPS frames: the columnar folds against the
/// row-wise executor's aggregate state per row over its frame (an eighth
/// of the orders: the row-wise side folds each frame afresh).
#[test]
fn range_and_groups_frames() {
    let price = "case when o_orderkey % 6 = 0 then null else o_totalprice end";
    let day = "case when o_orderkey % 9 = 0 then null else o_orderdate end";
    for (window, label) in [
        (
            "partition by o_orderstatus order by o_orderdate range between 30 preceding and current row"
                .to_string(),
            "days before",
        ),
        (
            format!(
                "order by {day} desc nulls first range between interval '10 days' preceding and interval '5 days' following"
            ),
            "interval, descending, null keys",
        ),
        (
            format!(
                "partition by o_orderpriority order by {price} range between 1000.5 preceding and 500 following"
            ),
            "decimal key",
        ),
        (
            "order by o_orderdate groups between 1 preceding and 1 following".to_string(),
            "groups",
        ),
        (
            format!("order by {day} range between interval '1 month' preceding and interval '1 month 3 days' following"),
            "calendar months",
        ),
        (
            format!(
                "partition by o_orderstatus order by {day} nulls first groups between 2 following and unbounded following"
            ),
            "groups ahead",
        ),
        (
            "order by o_orderpriority range between current row and unbounded following"
                .to_string(),
            "string key, peers",
        ),
    ] {
        check(
            &format!(
                "select o_orderkey, sum({price}) over ({window}) s, count(*) over ({window}) n, min(o_clerk) over ({window}) lo, max(o_shippriority + o_orderkey % 7) over ({window}) hi from orders where o_orderkey % 8 = 1"
            ),
            label,
        );
    }
}

/// INTERSECT ALL / EXCEPT ALL (copies numbered by a window, then grouped)
/// in both executors.
#[test]
fn intersect_all_and_except_all() {
    for op in ["intersect all", "except all"] {
        check(
            &format!(
                "select o_orderstatus, o_orderpriority from orders {op} select o_orderstatus, o_orderpriority from orders where o_orderkey % 3 = 0"
            ),
            op,
        );
    }
}

/// Several integer/date order keys, packed into one integer per row, with
/// nulls, mixed directions and null placements: ranks, peers of running
/// aggregates and ROWS frames agree across the executors.
#[test]
fn packed_order_keys_with_nulls_and_mixed_directions() {
    let k1 = "case when o_orderkey % 4 = 0 then null else o_shippriority + o_orderkey % 3 end";
    let k3 = "case when o_custkey % 5 = 0 then null else o_custkey end";
    let window = format!(
        "partition by o_orderstatus order by {k1} desc nulls first, o_orderdate, {k3} nulls last"
    );
    check(
        &format!(
            "select o_orderkey, rank() over ({window}) r, dense_rank() over ({window}) d, sum(o_totalprice) over ({window}) s, count(*) over ({window} rows between 3 preceding and 1 following) c from orders"
        ),
        "packed order keys",
    );
}

#[test]
fn outer_joins_with_pair_filters_and_no_equality() {
    for (i, sql) in [
        "select n_name, r_name from nation left join region on n_regionkey = r_regionkey and n_nationkey < r_regionkey * 3",
        "select n_name, r_name from nation full join region on n_regionkey = r_regionkey and r_name like 'A%'",
        "select n_name, r_name from region right join nation on r_regionkey = n_regionkey and n_name > r_name",
        "select n_nationkey, r_regionkey from nation left join region on n_nationkey < r_regionkey",
        "select n_nationkey, r_regionkey from nation full join region on n_nationkey + 20 < r_regionkey * 5",
        "select n_name from nation where exists (select 1 from region where r_regionkey > n_nationkey)",
        "select n_name from nation where not exists (select 1 from region where r_regionkey > n_nationkey)",
    ]
    .iter()
    .enumerate()
    {
        check(sql, &format!("outer join {i}"));
    }
}

#[test]
fn aggregates_over_distinct_values() {
    check(
        "select l_returnflag, sum(distinct l_quantity), avg(distinct l_discount), stddev(distinct l_tax), median(distinct l_extendedprice), count(distinct l_shipmode) from lineitem_small group by 1",
        "distinct aggregates",
    );
    check(
        "select x.id1, sum(distinct x.v1), avg(distinct x.v3) from x group by 1",
        "distinct aggregates with nulls",
    );
}

#[test]
fn quantified_comparisons_and_row_values() {
    for (i, sql) in [
        "select c_custkey, c_acctbal > all (select s_acctbal from supplier where s_nationkey = c_nationkey), c_acctbal <= any (select s_acctbal from supplier where s_nationkey = c_nationkey) from customer",
        "select n_name from nation where n_regionkey = all (select r_regionkey from region where r_name like 'A%')",
        "select o_orderkey from orders where (o_custkey, o_orderstatus) in (select c_custkey, 'F' from customer where c_acctbal > 5000)",
    ]
    .iter()
    .enumerate()
    {
        check(sql, &format!("quantified {i}"));
    }
}

#[test]
fn math_and_string_functions() {
    check(
        "select c_custkey, floor(c_acctbal), ceil(c_acctbal), sign(c_acctbal), sqrt(abs(c_acctbal)), greatest(c_acctbal, c_nationkey), lpad(c_name, 20, '.'), split_part(c_phone, '-', 2), strpos(c_name, '0') from customer",
        "functions",
    );
}

#[test]
fn first_in_an_order_and_min_by_with_nulls() {
    check(
        "select id1, first(v1 order by v3), last(id3 order by v3 nulls first), first(v2 order by v3 desc), min_by(v1, v3), max_by(id4, v3) from x group by 1",
        "ordered picks",
    );
}

#[test]
fn string_agg_in_key_order() {
    check(
        "select o_custkey, string_agg(o_orderpriority, ',' order by o_orderkey), string_agg(o_orderstatus, '' order by o_totalprice desc) from orders group by 1",
        "string_agg",
    );
}

#[test]
fn exists_and_in_as_values() {
    check(
        "select c_custkey, exists (select 1 from orders where o_custkey = c_custkey and o_totalprice > 300000), c_nationkey in (select s_nationkey from supplier where s_acctbal > 9000) from customer",
        "exists and in as values",
    );
}

/// Integer sums never wrap, on either executor and in every window shape:
/// past `i64::MAX` they fail with sum()'s overflow error, and sums that
/// come back into range (running totals through negative values) are
/// exact. avg() of the same values goes on in floats.
#[test]
fn integer_sums_in_windows_fail_on_overflow_on_both_executors() {
    let values = "(values (9223372036854775807), (1), (-5)) t(x)";
    let overflowing = [
        "sum(x) over ()",
        "sum(x) over (order by x rows between 1 preceding and current row)",
        "sum(x) over (order by x rows between current row and unbounded following)",
        "sum(x) over (order by x groups between 1 preceding and current row)",
        "sum(x) over (order by x desc)",
    ];
    for window in overflowing {
        let lf = ctx()
            .sql(&format!("select {window} from {values}"))
            .unwrap();
        let plan = lf.physical_plan().unwrap();
        let columnar = execute_with(&plan, &ExecContext::unfused()).unwrap_err();
        let rowwise = execute_rowwise(&plan).unwrap_err();
        for err in [columnar.to_string(), rowwise.to_string()] {
            assert!(err.contains("sum() overflowed Int64"), "{window}: {err}");
        }
    }
    // Ascending, the running sum passes -5, -4, then i64::MAX - 4: in range.
    check(
        &format!("select x, sum(x) over (order by x) s, avg(x) over () a from {values}"),
        "running sum in range",
    );
    let rows = ctx()
        .sql(&format!("select sum(x) over (order by x) s from {values}"))
        .unwrap()
        .collect()
        .unwrap()
        .to_sorted_csv()
        .unwrap();
    assert_eq!(rows, "s\n-5\n-4\n9223372036854775803\n");
}
