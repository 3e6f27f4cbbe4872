//! All 22 TPC-H queries at SF 0.01 against DuckDB's answers on the same data
//! (stored in tests/data/tpch-sf0.01, made by scripts/tpch_reference.py),
//! with the optimizer on, off, and with each rule off; and once more read
//! from Parquet files, through the Parquet readers.

use crate::common;

use sloth::prelude::*;
use sloth::sql::SqlContext;

fn ctx(options: OptimizerOptions) -> SqlContext {
    common::tpch_context(options)
}

/// Splits one CSV line, honouring double quotes.
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                out.last_mut().unwrap().push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

fn same_cell(got: &str, want: &str) -> bool {
    if got == want || (got == "null" && want.is_empty()) {
        return true;
    }
    match (got.parse::<f64>(), want.parse::<f64>()) {
        (Ok(a), Ok(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
        _ => false,
    }
}

fn check(q: &str, options: OptimizerOptions, label: &str) {
    check_in(ctx(options), q, label)
}

fn check_in(ctx: SqlContext, q: &str, label: &str) {
    let dir = env!("CARGO_MANIFEST_DIR");
    let sql = std::fs::read_to_string(format!("{dir}/queries/tpch/{q}.sql")).unwrap();
    let reference =
        std::fs::read_to_string(format!("{dir}/tests/data/tpch-sf0.01/{q}.csv")).unwrap();
    let df = ctx
        .sql(sql.trim().trim_end_matches(';'))
        .unwrap_or_else(|e| panic!("{q} ({label}): {e}"))
        .collect()
        .unwrap_or_else(|e| panic!("{q} ({label}): {e}"));
    let got = common::rows_of(&df);
    let mut lines = reference.lines();
    let header = csv_fields(lines.next().unwrap());
    assert_eq!(df.column_names().len(), header.len(), "{q}: column count");
    let want: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert_eq!(got.len(), want.len(), "{q} ({label}): row count");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let g: Vec<&str> = g.split('|').collect();
        assert!(
            g.len() == w.len() && g.iter().zip(w).all(|(a, b)| same_cell(a, b)),
            "{q} ({label}) row {i}: got {g:?}, DuckDB {w:?}"
        );
    }
}

macro_rules! tpch_tests {
    ($($name:ident => $q:literal),*) => {$(
        #[test]
        fn $name() {
            check($q, OptimizerOptions::default(), "optimized");
            check($q, OptimizerOptions::none(), "unoptimized");
            for rule in OptimizerOptions::rule_names() {
                check($q, OptimizerOptions::default().disable(rule), rule);
            }
        }
    )*};
}

tpch_tests! {
    q01 => "q01", q02 => "q02", q03 => "q03", q04 => "q04", q05 => "q05", q06 => "q06",
    q07 => "q07", q08 => "q08", q09 => "q09", q10 => "q10", q11 => "q11", q12 => "q12",
    q13 => "q13", q14 => "q14", q15 => "q15", q16 => "q16", q17 => "q17", q18 => "q18",
    q19 => "q19", q20 => "q20", q21 => "q21", q22 => "q22"
}

/// The optimizer's rules reach a fixed point on every query: a rule that
/// keeps rewriting its own output would be cut off at `MAX_PASSES` with a
/// plan that grew each pass.
#[test]
fn the_optimizer_converges_on_every_query() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let c = ctx(OptimizerOptions::default());
    for q in 1..=22 {
        let sql = std::fs::read_to_string(format!("{dir}/queries/tpch/q{q:02}.sql")).unwrap();
        let lf = c.sql(sql.trim().trim_end_matches(';')).unwrap();
        let traced =
            sloth::optimizer::optimize_traced(lf.logical_plan(), &OptimizerOptions::default())
                .unwrap();
        assert!(traced.converged, "q{q:02}:\n{}", traced.plan);
    }
}

/// The tables written as Parquet files (once per test binary), so the scans
/// decode pages: fixed-width columns in `io/page_decode.rs`, the rest in
/// arrow-rs.
fn parquet_ctx() -> SqlContext {
    use std::sync::OnceLock;
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        sloth::datagen::write_tpch(0.01, dir.path(), "parquet", |_| {}).unwrap();
        dir
    });
    let mut c = SqlContext::new();
    assert_eq!(c.register_dir(dir.path()).unwrap(), 8);
    c
}

#[test]
fn every_query_over_parquet_files() {
    for q in 1..=22 {
        check_in(parquet_ctx(), &format!("q{q:02}"), "parquet");
    }
}

/// Scans that read the same columns of a file (Q2's and Q11's `partsupp`,
/// Q17's and Q21's `lineitem`) share their decompressed pages
/// (`io/shared_pages.rs`): the later scans say so, the answers stay
/// DuckDB's, and a second execution of the same plan, whose pages start
/// afresh, returns the same rows.
#[test]
fn repeated_scans_share_pages_and_keep_their_answers() {
    use sloth::exec::{ExecContext, execute_with};
    let dir = env!("CARGO_MANIFEST_DIR");
    for q in ["q02", "q11", "q17", "q21"] {
        check_in(parquet_ctx(), q, "parquet, shared pages");
        let sql = std::fs::read_to_string(format!("{dir}/queries/tpch/{q}.sql")).unwrap();
        let plan = parquet_ctx()
            .sql(sql.trim().trim_end_matches(';'))
            .unwrap()
            .physical_plan()
            .unwrap();
        let ctx = ExecContext::default();
        let rows = |ctx: &ExecContext| {
            let batches = execute_with(&plan, ctx).unwrap();
            common::rows_of(&DataFrame::new(plan.schema(), batches))
        };
        let first = rows(&ctx);
        let shared: Vec<String> = ctx
            .metrics()
            .into_iter()
            .map(|m| m.extra)
            .filter(|n| n.contains("pages_shared="))
            .collect();
        assert!(!shared.is_empty(), "{q}: no scan shared pages");
        assert_eq!(rows(&ctx), first, "{q}: second execution");
    }
}
