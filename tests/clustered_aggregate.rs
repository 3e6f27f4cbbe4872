//! Group-by over a Parquet file whose row groups hold disjoint ranges of a
//! key (`src/exec/columnar/aggregate/clustered.rs`): each row group is
//! aggregated alone and only the groups on values two row groups share are
//! merged. Every answer must equal the same query over the same rows in
//! memory, where no statistics exist. Keys run across row-group ends, one
//! key's rows fill several whole row groups, and order-sensitive
//! aggregates (`first`, `last`, `string_agg`) see the rows in file order.
//! A HAVING filter runs on each unit's groups as they are emitted, except
//! where the aggregate's result is shared by two uses of one subplan.

use crate::common;

use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Int32Array, Int64Array, RecordBatch, StringArray};
use parquet::file::properties::WriterProperties;
use sloth::prelude::*;
use sloth::sql::{SqlContext, SqlOutput};

const ROW_GROUP: usize = 1_000;

/// Rows sorted by `k` (runs of 1 to 7 rows, one of 3,500 from 400 on), `d` a date
/// rising with `k`, `u` in no order, `n` sorted with nulls.
fn batch() -> RecordBatch {
    let mut x = 0x2545_F491_4F6C_DD1D_u64;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let (mut k, mut d, mut u, mut n, mut s, mut v) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let (mut key, mut long_run) = (0i64, false);
    while k.len() < 20_000 {
        key += 1 + next(3) as i64;
        let run = match key >= 400 && !long_run {
            true => 3_500,
            false => 1 + next(7) as usize,
        };
        long_run |= run == 3_500;
        for _ in 0..run {
            k.push(key);
            d.push((key / 9) as i32);
            u.push(next(50) as i32);
            n.push((next(10) != 0).then_some(key / 3));
            s.push(format!("s{}", next(1000)));
            v.push(next(100) as i64 - 20);
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(k)),
        Arc::new(Date32Array::from(d)),
        Arc::new(Int32Array::from(u)),
        Arc::new(Int64Array::from(n)),
        Arc::new(StringArray::from(s)),
        Arc::new(Int64Array::from(v)),
    ];
    common::named_batch(&["k", "d", "u", "n", "s", "v"], columns, "n")
}

fn contexts() -> (tempfile::TempDir, SqlContext, SqlContext) {
    let b = batch();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .build();
    common::write_parquet(&path, &b, props);
    let mut file = SqlContext::new();
    file.register_file("t", &path).unwrap();
    let mut memory = SqlContext::new();
    let frame = LazyFrame::from_batches(common::split(&b, 3_000)).unwrap();
    memory.register("t", frame);
    (dir, file, memory)
}

fn sorted_rows(ctx: &SqlContext, sql: &str) -> Vec<String> {
    let mut rows = common::rows(&ctx.sql(sql).unwrap());
    rows.sort();
    rows
}

fn explain_analyze(ctx: &SqlContext, sql: &str) -> String {
    let SqlOutput::Text(plan) = ctx.execute(&format!("explain analyze {sql}")).unwrap() else {
        panic!("EXPLAIN gives text");
    };
    plan
}

/// How many units EXPLAIN ANALYZE says were aggregated one at a time.
fn units_alone(ctx: &SqlContext, sql: &str) -> Option<usize> {
    let plan = explain_analyze(ctx, sql);
    let (before, _) = plan.split_once(" units aggregated one at a time")?;
    before.rsplit(' ').next()?.parse().ok()
}

#[test]
fn aggregates_of_clustered_row_groups_equal_those_in_memory() {
    let (_dir, file, memory) = contexts();
    let row_groups = batch().num_rows().div_ceil(ROW_GROUP);
    let clustered = [
        "select k, sum(v), count(*), min(s), max(v) from t group by k",
        "select k, avg(v), count(distinct u) from t group by k having count(*) > 3",
        "select k, first(s), last(s), string_agg(s, ',') from t group by k",
        "select d, count(*), sum(v) from t group by d",
        // Several keys, the clustered one not first.
        "select u, k, sum(v) from t group by u, k",
        "select s, d, count(*) from t group by s, d",
        // The scan's filter keeps some rows of each row group.
        "select k, sum(v) from t where v > 40 group by k",
    ];
    for q in clustered {
        let ours = sorted_rows(&file, q);
        assert!(ours.len() > 100, "{q}: {}", ours.len());
        assert_eq!(ours, sorted_rows(&memory, q), "{q}");
        assert_eq!(units_alone(&file, q), Some(row_groups), "{q}");
        assert_eq!(units_alone(&memory, q), None, "{q}");
    }
    // Not clustered: a key in no order, one with nulls, an expression.
    for q in [
        "select u, sum(v) from t group by u",
        "select n, count(*), sum(v) from t group by n",
        "select k % 100, count(*) from t group by k % 100",
    ] {
        assert_eq!(sorted_rows(&file, q), sorted_rows(&memory, q), "{q}");
        assert_eq!(units_alone(&file, q), None, "{q}");
    }
}

#[test]
fn a_key_filling_whole_row_groups_is_one_group() {
    let (_dir, file, memory) = contexts();
    let q = "select k, count(*), first(s), last(s) from t where k between 390 and 410 group by k";
    let ours = sorted_rows(&file, q);
    assert_eq!(ours, sorted_rows(&memory, q));
    assert!(ours.iter().any(|r| r.contains("|3500|")), "{ours:?}");
}

#[test]
fn an_aggregate_used_twice_runs_once_whatever_its_parents_stages() {
    let (_dir, file, memory) = contexts();
    // Both uses of `r` are a projection over one aggregate.
    let q = "with r as (select k, sum(v) as s from t group by k) \
             select k, s from r where s = (select max(s) from r)";
    let ours = sorted_rows(&file, q);
    assert!(!ours.is_empty());
    assert_eq!(ours, sorted_rows(&memory, q));
    for ctx in [&file, &memory] {
        let plan = explain_analyze(ctx, q);
        assert!(
            plan.contains("reused: an identical subplan ran earlier"),
            "{plan}"
        );
    }
}
