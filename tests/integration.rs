//! The integration tests, one module per file beside this one, built as one
//! test binary (`autotests = false` in Cargo.toml): every test binary links
//! all of arrow and parquet, so one binary instead of eleven saves ten links
//! and most of the test build's disk.
//!
//! Run one file's tests with its module name as the filter, e.g.
//! `cargo test --test integration tpch::`.

mod common;

/// The Ballista engine: the same plans on an in-process cluster and on a
/// cluster of `sloth scheduler` / `sloth executor` processes.
#[cfg(feature = "ballista")]
mod ballista_engine;
/// A CancelToken stops a running query from another thread.
mod cancel;
/// The `sloth` binary: exit codes, one-line errors, formats, and the REPL.
mod cli;
/// Group-by over Parquet row groups whose key ranges are disjoint.
mod clustered_aggregate;
/// The DataFusion engine: sloth's plans translated and run there.
#[cfg(feature = "datafusion")]
mod datafusion_engine;
/// Group-by over Parquet columns whose dictionary codes the scan hands on.
mod dictionary_codes;
/// Files named in SQL, Hive partitions read and written, JSON input.
mod files_in_sql;
/// GPU offload: the kernels' CPU port, the fallback, and (with a GPU) the device.
mod gpu;
/// db-benchmark questions against a naive reference.
mod h2o;
/// Tables from globs and directories, and the errors of bad inputs.
mod inputs;
/// Join build keys that filter the probe side's Parquet scan.
mod join_key_filter;
/// The source tree's layers import downward only.
mod layers;
/// The LazyFrame programs of `sloth::queries` against their SQL twins.
mod lazy_queries;
/// Sorts and aggregates under memory limits: spilling, streaming writes.
mod memory_limit;
/// Every operator family on a small table with nulls, in several batches.
mod operators;
/// Random plans: the optimizer never changes results.
mod optimizer_equivalence;
/// sloth ↔ Polars through the Arrow C Data Interface.
#[cfg(feature = "polars")]
mod polars_interop;
/// The row-wise executor against the columnar one.
mod rowwise;
/// The SQL front end on TPC-H SF 0.01 generated in memory.
mod sql;
/// All 22 TPC-H queries against DuckDB's answers.
mod tpch;
