//! A hash join that streams its probe side from a Parquet scan pushes its
//! build keys into that scan as a filter (`exec/columnar/join_filter.rs`).
//! Every join kind, null keys, several keys, keys renamed by a projection
//! and a filter that keeps nothing give the same rows as the unfused
//! executor, which materializes both sides and never pushes the filter.

use crate::common;

use sloth::exec::{ExecContext, execute_with};
use sloth::prelude::*;
use sloth::sql::SqlContext;

/// TPC-H SF 0.01 as Parquet files, plus `li`, lineitem with a null
/// `l_partkey` in every seventh row (written once per test binary).
fn ctx() -> SqlContext {
    use std::sync::OnceLock;
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        sloth::datagen::write_tpch(0.01, dir.path(), "parquet", |_| {}).unwrap();
        let mut c = SqlContext::new();
        c.register_dir(dir.path()).unwrap();
        c.sql(
            "select l_orderkey, case when l_orderkey % 7 = 0 then null else l_partkey end l_partkey, \
             l_suppkey, l_quantity, l_extendedprice, l_comment from lineitem",
        )
        .unwrap()
        .sink_parquet(dir.path().join("li.parquet"))
        .unwrap();
        dir
    });
    let mut c = SqlContext::new();
    c.register_dir(dir.path()).unwrap();
    c
}

/// Runs `sql` fused (build keys pushed down where they can be) and unfused;
/// asserts the same rows, and that the fused run pushed the filter when
/// `pushed` says it should.
fn check(sql: &str, pushed: bool) {
    let plan = ctx().sql(sql).unwrap().physical_plan().unwrap();
    let fused = ExecContext::default();
    let got = execute_with(&plan, &fused).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let want = execute_with(&plan, &ExecContext::unfused()).unwrap();
    let schema = plan.schema();
    let mut a = common::rows_of(&DataFrame::new(schema.clone(), got));
    let mut b = common::rows_of(&DataFrame::new(schema, want));
    a.sort();
    b.sort();
    assert!(!b.is_empty() || sql.contains("nothing"), "{sql}: no rows");
    if a != b {
        let first = a.iter().zip(&b).position(|(x, y)| x != y);
        panic!(
            "{sql}: {} rows fused vs {} unfused; first difference at {first:?}: {:?} vs {:?}",
            a.len(),
            b.len(),
            first.map(|i| &a[i]),
            first.map(|i| &b[i])
        );
    }
    let notes: Vec<String> = fused.metrics().into_iter().map(|m| m.extra).collect();
    let was_pushed = notes
        .iter()
        .any(|n| n.contains("build keys filtered its scan"));
    assert_eq!(was_pushed, pushed, "{sql}: {notes:?}");
}

#[test]
fn inner_joins_filter_the_probe_scan_and_keep_their_rows() {
    // 1 part in 25 has this brand: lineitem's scan keeps ~4% of its rows.
    check(
        "select l_orderkey, l_quantity, p_name from lineitem, part \
         where l_partkey = p_partkey and p_brand = 'Brand#23'",
        true,
    );
    // Two keys, and a probe key that is null in every seventh row.
    check(
        "select ps_availqty, l_quantity, l_comment from li, partsupp \
         where l_partkey = ps_partkey and l_suppkey = ps_suppkey and ps_availqty < 500",
        true,
    );
    // The probe key comes through a projection under another name.
    check(
        "select k, q from (select l_partkey as k, l_extendedprice as q, l_comment from li) t \
         join part on k = p_partkey where p_size = 7",
        true,
    );
    // A build side that matches nothing.
    check(
        "select l_orderkey, l_comment from lineitem join part on l_partkey = p_partkey \
         where p_size = 1000 -- nothing",
        true,
    );
}

#[test]
fn semi_and_anti_joins_filter_only_where_unmatched_probe_rows_are_dropped() {
    // Semi join probed by orders: every column its scan reads is read by
    // its filter or the key, but the filter's `o_orderdate` is not a key,
    // so the key filter goes first and the dates are decoded for matches.
    check(
        "select o_orderkey, o_orderpriority from orders where o_orderkey in \
         (select l_orderkey from lineitem where l_quantity > 49) and o_orderdate < date '1993-01-01'",
        true,
    );
    // The probe scan reads its key alone: no column to spare, none to
    // decode later, so no filter is pushed.
    check(
        "select count(*) from lineitem where l_orderkey in \
         (select o_orderkey from orders where o_orderdate < date '1992-03-01')",
        false,
    );
    // Semi join with li probed: only its matches are emitted.
    check(
        "select l_orderkey, l_comment from li where l_partkey in (select p_partkey from part where p_size < 3)",
        true,
    );
    // Anti join with lineitem probed: its unmatched rows are the answer.
    check(
        "select count(*), sum(l_quantity) from li where l_partkey not in \
         (select p_partkey from part where p_size < 40)",
        false,
    );
}

#[test]
fn outer_joins_push_only_when_the_probe_side_is_not_preserved() {
    // The preserved side is probed: unmatched rows are emitted with nulls.
    check(
        "select l_orderkey, l_comment, p_name from li left join part \
         on l_partkey = p_partkey and p_size = 3",
        false,
    );
    // The preserved side is built: unmatched probe rows can go.
    check(
        "select p_partkey, p_name, l_quantity from (select * from part where p_size = 3) p \
         left join li on l_partkey = p_partkey",
        true,
    );
}
