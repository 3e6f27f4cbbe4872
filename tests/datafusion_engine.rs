//! The DataFusion engine (feature `datafusion`): sloth's optimized plans
//! translated to DataFusion's give sloth's answers; what has no
//! translation is a clear error.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use arrow::record_batch::RecordBatch;
use sloth::config::Engine;
use sloth::prelude::*;
use sloth::sql::SqlContext;

use crate::common::{rows_of, split};

/// Rows of `lf` on sloth's engine and on DataFusion, sorted, cell by cell
/// equal (floats to 1e-9 relative: the engines add in different orders).
fn assert_same(lf: &LazyFrame, what: &str) {
    assert_same_on(Engine::DataFusion, lf, what)
}

/// Rows of `lf` on sloth's engine and on `engine`, compared as
/// [`assert_same`] does.
pub fn assert_same_on(engine: Engine, lf: &LazyFrame, what: &str) {
    let native = lf
        .clone()
        .with_config(lf.config().clone().with_engine(Engine::Sloth));
    let df = lf
        .clone()
        .with_config(lf.config().clone().with_engine(engine));
    let mut a = rows_of(
        &native
            .collect()
            .unwrap_or_else(|e| panic!("{what}: sloth: {e}")),
    );
    let mut b = rows_of(
        &df.collect()
            .unwrap_or_else(|e| panic!("{what}: {engine}: {e}")),
    );
    a.sort();
    b.sort();
    assert_eq!(a.len(), b.len(), "{what}: row counts");
    for (x, y) in a.iter().zip(&b) {
        assert!(same_cells(x, y, '|'), "{what}: sloth {x} vs {engine} {y}");
    }
}

/// Whether two rows of `separator`-separated cells are equal, floats to
/// 1e-9 relative (engines add in different orders).
pub fn same_cells(x: &str, y: &str, separator: char) -> bool {
    let (p, q) = (x.split(separator), y.split(separator));
    p.clone().count() == q.clone().count()
        && p.zip(q).all(|(p, q)| {
            p == q
                || matches!((p.parse::<f64>(), q.parse::<f64>()),
                    (Ok(u), Ok(v)) if (u - v).abs() <= 1e-9 * u.abs().max(v.abs()).max(1.0))
        })
}

#[test]
fn every_tpch_query_runs_on_datafusion_with_sloths_answers() {
    let ctx = crate::common::tpch_context(OptimizerOptions::default());
    let dir = env!("CARGO_MANIFEST_DIR");
    for q in 1..=22 {
        let sql = std::fs::read_to_string(format!("{dir}/queries/tpch/q{q:02}.sql")).unwrap();
        let lf = ctx.sql(sql.trim().trim_end_matches(';')).unwrap();
        assert_same(&lf, &format!("q{q:02}"));
    }
}

#[test]
fn tpch_over_parquet_files_reads_them_as_listing_tables() {
    let dir = tempfile::tempdir().unwrap();
    sloth::datagen::write_tpch(0.01, dir.path(), "parquet", |_| {}).unwrap();
    let mut ctx = SqlContext::new();
    ctx.register_dir(dir.path()).unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    for q in [1, 3, 9, 13, 18, 21] {
        let sql = std::fs::read_to_string(format!("{root}/queries/tpch/q{q:02}.sql")).unwrap();
        let lf = ctx.sql(sql.trim().trim_end_matches(';')).unwrap();
        assert_same(&lf, &format!("q{q:02} over Parquet"));
    }
    let mut df =
        SqlContext::new().with_config(SessionConfig::new().with_engine(Engine::DataFusion));
    df.register_dir(dir.path()).unwrap();
    let plan = df
        .sql("select n_name from nation where n_regionkey = 1")
        .unwrap()
        .explain(true)
        .unwrap();
    assert!(
        plan.contains("Handed to DataFusion as:") && plan.contains("TableScan"),
        "{plan}"
    );
}

#[test]
fn db_benchmark_questions_run_on_datafusion_with_sloths_answers() {
    let mut ctx = SqlContext::new();
    let x = sloth::datagen::h2o_groupby(20_000, 10).unwrap();
    ctx.register("x", LazyFrame::from_batches(x).unwrap());
    let root = env!("CARGO_MANIFEST_DIR");
    for q in 1..=10 {
        let sql =
            std::fs::read_to_string(format!("{root}/queries/h2o/groupby-q{q:02}.sql")).unwrap();
        assert_same(
            &ctx.sql(sql.trim().trim_end_matches(';')).unwrap(),
            &format!("groupby q{q}"),
        );
    }
    let mut ctx = SqlContext::new();
    for (name, batches) in sloth::datagen::h2o_join(20_000).unwrap() {
        ctx.register(name, LazyFrame::from_batches(batches).unwrap());
    }
    for q in 1..=5 {
        let sql = std::fs::read_to_string(format!("{root}/queries/h2o/join-q{q:02}.sql")).unwrap();
        assert_same(
            &ctx.sql(sql.trim().trim_end_matches(';')).unwrap(),
            &format!("join q{q}"),
        );
    }
}

fn table() -> LazyFrame {
    let k: ArrayRef = Arc::new(StringArray::from(vec![
        Some("a"),
        Some("b"),
        None,
        Some("a"),
        Some("c"),
        Some("b"),
        Some("a"),
    ]));
    let x: ArrayRef = Arc::new(Int64Array::from(vec![
        Some(1),
        Some(2),
        Some(3),
        None,
        Some(5),
        Some(6),
        Some(7),
    ]));
    let f: ArrayRef = Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5, 3.5, -4.5, 5.5, 6.5]));
    let batch = RecordBatch::try_from_iter([("k", k), ("x", x), ("f", f)]).unwrap();
    LazyFrame::from_batches(split(&batch, 3)).unwrap()
}

#[test]
fn every_node_and_expression_kind_translates() {
    let t = table();
    let mut ctx = SqlContext::new();
    ctx.register("t", t.clone());
    ctx.register("u", t);
    let queries = [
        // Filter, projection, arithmetic, comparisons, three-valued logic.
        "select k, x * 2 + 1 as y, -f as g from t where x > 1 and (k = 'a' or k is null)",
        "select not (x > 3) as n, x is null as z, x is not null as nz from t",
        // CASE, IN, CAST, LIKE, functions (sloth's own, run inside DataFusion).
        "select case when x < 3 then 'low' when x < 6 then 'mid' else 'high' end as c, \
         x in (1, 5, 7) as i, cast(x as double) / 2 as h, k like 'a%' as l, k not like '%b' as nl, \
         upper(k) as u, coalesce(k, 'none') as co, substring(k, 1, 1) as s, round(f, 0) as r from t",
        // Aggregates, DISTINCT and COUNT(DISTINCT), HAVING.
        "select k, count(*) as n, count(x) as cx, sum(x) as s, avg(f) as a, min(f) as mi, \
         max(x) as ma, count(distinct x) as d, stddev(f) as sd, median(f) as me from t group by k",
        "select k, corr(f, x) as c, covar_pop(f, x) as cp, covar_samp(x, f) as cs, \
         regr_slope(f, x) as rs, regr_intercept(f, x) as ri, regr_r2(f, x) as r2, \
         regr_count(f, x) as rc, regr_sxy(f, x) as sxy from t group by k",
        "select k, bit_and(x) as ba, bit_or(x) as bo, bit_xor(x) as bx, md5(k) as h, \
         make_date(2000, 1, 1) as md from t group by k",
        "select k, x % 2 as p, count(*) as n, grouping(k, x % 2) as g from t \
         group by cube (k, x % 2)",
        "select x, array_agg(k) as ks from t where x is not null group by x",
        "select distinct k from t",
        "select k, sum(x) as s from t group by k having sum(x) > 5",
        // Every join kind, with and without a condition beyond the keys.
        "select t.k, t.x, u.x as ux from t join u on t.k = u.k",
        "select t.k, t.x, u.f from t left join u on t.k = u.k and u.x > t.x",
        "select t.x, u.k from t right join u on t.x = u.x",
        "select t.x, u.x from t full join u on t.x = u.x + 1",
        "select k, x from t where exists (select 1 from u where u.k = t.k and u.x > 5)",
        "select k, x from t where not exists (select 1 from u where u.x = t.x + 1)",
        "select t.x, u.x from t cross join u where t.x < 3",
        // Sort with nulls, LIMIT / OFFSET, UNION ALL, UNION.
        "select k, x from t order by k nulls first, x desc limit 4 offset 1",
        "select x from t union all select x + 10 from u",
        "select k from t union select k from u",
        // Windows: ranking, shifts, whole-partition and framed aggregates, values.
        "select k, x, row_number() over (partition by k order by x) as rn, \
         rank() over (order by k) as rk, dense_rank() over (order by k) as dr from t",
        "select k, x, percent_rank() over (partition by k order by x) as pr, \
         cume_dist() over (order by k) as cd, ntile(3) over (order by k, x) as nt from t",
        "select k, x, lag(x, 1) over (partition by k order by f) as lg, \
         lead(x, 2) over (order by f) as ld from t",
        "select k, x, sum(x) over (partition by k) as total, \
         sum(f) over (order by f rows between 1 preceding and current row) as run from t",
        "select k, x, first_value(x) over (partition by k order by f, x) as fv, \
         last_value(x) over (partition by k order by f, x rows between unbounded preceding \
         and unbounded following) as lv, nth_value(x, 2) over (partition by k order by f, x \
         rows between 1 preceding and 1 following) as nv from t",
        "select k, x, sum(x) over (order by f range between 1.5 preceding and current row) as rs, \
         count(*) over (order by x groups between 1 preceding and 1 following) as gc from t",
        // Scalar subqueries (decorrelated into joins).
        "select k, x from t where x > (select avg(x) from u)",
        "select k, x, (select max(u.x) from u where u.k = t.k) as m from t",
    ];
    for sql in queries {
        assert_same(&ctx.sql(sql).unwrap(), sql);
    }
}

#[test]
fn what_has_no_translation_is_a_clear_error() {
    let mut ctx =
        SqlContext::new().with_config(SessionConfig::new().with_engine(Engine::DataFusion));
    ctx.register("t", table());
    let e = ctx
        .sql("select k, string_agg(k, ',') from t group by k")
        .unwrap()
        .collect()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("has no DataFusion translation") && !e.contains('\n'),
        "{e}"
    );
    // A scalar subquery of more than one row fails as on sloth's engine.
    let e = ctx
        .sql("select k, (select x from t as u where u.k = t.k) as m from t")
        .unwrap()
        .collect()
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than one row"), "{e}");
    // EXPLAIN ANALYZE profiles sloth's operators only.
    let e = ctx
        .sql("select k from t")
        .unwrap()
        .profile()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("EXPLAIN ANALYZE on the datafusion engine"),
        "{e}"
    );
}

#[test]
fn the_memory_limit_and_spill_settings_reach_datafusion() {
    // 200K distinct keys: megabytes of group state.
    let n = 200_000i64;
    let k: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
    let v: ArrayRef = Arc::new(Int64Array::from_iter_values((0..n).map(|i| i % 7)));
    let batch = RecordBatch::try_from_iter([("k", k), ("v", v)]).unwrap();
    let sql = "select count(*) from (select k, sum(v) from t group by k) g";
    let run = |config: SessionConfig| {
        let mut ctx = SqlContext::new().with_config(config.with_engine(Engine::DataFusion));
        ctx.register("t", LazyFrame::from_batches(split(&batch, 8192)).unwrap());
        ctx.sql(sql).unwrap().collect().map(|df| rows_of(&df))
    };
    let mut zstd = SessionConfig::new().with_spill_compression("zstd".parse().unwrap());
    zstd.set("temp_dir", std::env::temp_dir().to_str().unwrap())
        .unwrap();
    assert_eq!(run(zstd).unwrap(), ["200000"]);
    // Under a 1 KiB limit DataFusion's own memory pool refuses.
    let e = run(SessionConfig::new().with_memory_limit(1024))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Resources exhausted") && !e.contains('\n'),
        "{e}"
    );
}
