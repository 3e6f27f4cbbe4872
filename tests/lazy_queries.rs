//! Each LazyFrame program in `sloth::queries` against its SQL twin in
//! `queries/`: the same column names and types, the same rows.

use crate::common;

use arrow::record_batch::RecordBatch;
use sloth::datagen::{h2o_groupby, h2o_join};
use sloth::prelude::*;
use sloth::queries::{QUERIES, lazy_query};
use sloth::sql::SqlContext;

fn sql_text(suite: &str, name: &str) -> String {
    let path = format!("{}/queries/{suite}/{name}.sql", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with("--")).collect();
    body.join("\n").trim().trim_end_matches(';').to_string()
}

/// Cells equal as text, or as numbers within a relative 1e-9 (float sums
/// may add in another order on another run).
fn same_cell(a: &str, b: &str) -> bool {
    a == b
        || matches!((a.parse::<f64>(), b.parse::<f64>()),
            (Ok(x), Ok(y)) if (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0))
}

/// Runs one question both ways and compares; returns its row count.
fn check(ctx: &SqlContext, suite: &str, name: &str, ordered: bool) -> usize {
    let lazy = lazy_query(ctx, suite, name).unwrap();
    let sql = ctx.sql(&sql_text(suite, name)).unwrap();
    let fields = |lf: &LazyFrame| -> Vec<(String, arrow::datatypes::DataType)> {
        let s = lf.schema().unwrap();
        s.fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect()
    };
    assert_eq!(
        fields(&lazy),
        fields(&sql),
        "{suite}/{name}: schemas differ"
    );
    let (mut a, mut b) = (common::rows(&lazy), common::rows(&sql));
    if !ordered {
        a.sort();
        b.sort();
    }
    assert_eq!(a.len(), b.len(), "{suite}/{name}: row counts differ");
    for (x, y) in a.iter().zip(&b) {
        let same = x.split('|').zip(y.split('|')).all(|(p, q)| same_cell(p, q));
        assert!(same, "{suite}/{name}: lazy row {x} vs SQL row {y}");
    }
    a.len()
}

fn names(suite: &str) -> impl Iterator<Item = &'static str> {
    QUERIES
        .iter()
        .filter(move |(s, _, _)| *s == suite)
        .map(|(_, n, _)| *n)
}

#[test]
fn tpch_programs_give_their_sql_twins_rows() {
    let ctx = common::tpch_context(OptimizerOptions::default());
    let mut checked = 0;
    for name in names("tpch") {
        let rows = check(&ctx, "tpch", name, true);
        assert!(rows > 0, "tpch/{name} returned no rows at SF 0.01");
        checked += 1;
    }
    assert_eq!(checked, 5);
}

#[test]
fn h2o_programs_give_their_sql_twins_rows() {
    let small = |batches: Vec<RecordBatch>| {
        let split: Vec<RecordBatch> = batches
            .iter()
            .flat_map(|b| common::split(b, 1000))
            .collect();
        LazyFrame::from_batches(split).unwrap()
    };
    let mut groupby = SqlContext::new();
    groupby.register("x", small(h2o_groupby(20_000, 10).unwrap()));
    let mut join = SqlContext::new();
    for (table, batches) in h2o_join(20_000).unwrap() {
        join.register(table, small(batches));
    }
    let mut checked = 0;
    for name in names("h2o") {
        let ctx = if name.starts_with("join") {
            &join
        } else {
            &groupby
        };
        let rows = check(ctx, "h2o", name, false);
        assert!(rows > 0, "h2o/{name} returned no rows");
        checked += 1;
    }
    assert_eq!(checked, 15);
}

#[test]
fn an_unknown_question_names_the_ones_there_are() {
    let ctx = common::tpch_context(OptimizerOptions::default());
    let err = lazy_query(&ctx, "tpch", "q02").unwrap_err().to_string();
    assert!(err.contains("no LazyFrame version of tpch/q02"), "{err}");
    assert!(
        err.contains("tpch/q01") && err.contains("h2o/join-q05"),
        "{err}"
    );
}

#[test]
fn the_programs_inherit_the_contexts_optimizer_options() {
    let off = common::tpch_context(OptimizerOptions::none());
    let lf = lazy_query(&off, "tpch", "q06").unwrap();
    let on = common::tpch_context(OptimizerOptions::default());
    let lf_on = lazy_query(&on, "tpch", "q06").unwrap();
    // Unoptimized, the filter stays above the scan; optimized, it is pushed in.
    assert_ne!(lf.explain(true).unwrap(), lf_on.explain(true).unwrap());
    assert_eq!(common::rows(&lf), common::rows(&lf_on));
}
