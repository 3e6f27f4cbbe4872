//! The benchmark questions of `queries/` written with the [`LazyFrame`] API
//! instead of SQL: what an embedding Rust program would write.
//!
//! `sloth bench --api lazy queries/tpch/q01.sql` runs [`tpch::q01`] in place
//! of the file's SQL (the file names the question), so the peer comparison
//! (`benches/compare`) times both front ends on the same data; the tests check
//! that each program gives the same rows as its SQL twin.
//!
//! Tables come from a [`SqlContext`]'s catalog (`register_dir`), so both
//! front ends read the very same scans.

pub mod gpu_sweep;
pub mod h2o;
pub mod tpch;

use std::path::Path;

use crate::error::{Result, SlothError};
use crate::frame::LazyFrame;
use crate::sql::SqlContext;

/// Builds one question's lazy frame from the registered tables.
pub type QueryFn = fn(&SqlContext) -> Result<LazyFrame>;

/// Every question that has a LazyFrame version: `(suite, name, builder)`,
/// where `queries/<suite>/<name>.sql` is its SQL twin.
pub const QUERIES: &[(&str, &str, QueryFn)] = &[
    ("tpch", "q01", tpch::q01),
    ("tpch", "q03", tpch::q03),
    ("tpch", "q05", tpch::q05),
    ("tpch", "q06", tpch::q06),
    ("tpch", "q10", tpch::q10),
    ("h2o", "groupby-q01", h2o::groupby_q01),
    ("h2o", "groupby-q02", h2o::groupby_q02),
    ("h2o", "groupby-q03", h2o::groupby_q03),
    ("h2o", "groupby-q04", h2o::groupby_q04),
    ("h2o", "groupby-q05", h2o::groupby_q05),
    ("h2o", "groupby-q06", h2o::groupby_q06),
    ("h2o", "groupby-q07", h2o::groupby_q07),
    ("h2o", "groupby-q08", h2o::groupby_q08),
    ("h2o", "groupby-q09", h2o::groupby_q09),
    ("h2o", "groupby-q10", h2o::groupby_q10),
    ("h2o", "join-q01", h2o::join_q01),
    ("h2o", "join-q02", h2o::join_q02),
    ("h2o", "join-q03", h2o::join_q03),
    ("h2o", "join-q04", h2o::join_q04),
    ("h2o", "join-q05", h2o::join_q05),
];

/// The LazyFrame version of `queries/<suite>/<name>.sql`.
pub fn lazy_query(ctx: &SqlContext, suite: &str, name: &str) -> Result<LazyFrame> {
    match QUERIES.iter().find(|(s, n, _)| *s == suite && *n == name) {
        Some((_, _, build)) => build(ctx),
        None => Err(SlothError::unsupported(format!(
            "no LazyFrame version of {suite}/{name}; there are: {}",
            QUERIES
                .iter()
                .map(|(s, n, _)| format!("{s}/{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The LazyFrame version of the question a SQL file holds, found by the
/// file's folder and name (`queries/tpch/q01.sql` → `tpch`, `q01`).
pub fn lazy_query_for_file(ctx: &SqlContext, file: &Path) -> Result<LazyFrame> {
    let part = |p: Option<&std::ffi::OsStr>| p.and_then(|s| s.to_str()).unwrap_or("").to_string();
    let name = part(file.file_stem());
    let suite = part(file.parent().and_then(|p| p.file_name()));
    lazy_query(ctx, &suite, &name)
}

/// A registered table, as a lazy frame to build on, with the context's
/// settings (every frame built on it inherits them).
fn table(ctx: &SqlContext, name: &str) -> Result<LazyFrame> {
    Ok(ctx.table(name)?.clone().with_config(ctx.config().clone()))
}
