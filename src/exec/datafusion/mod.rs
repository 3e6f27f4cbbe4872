//! The DataFusion engine (feature `datafusion`): sloth's optimized logical
//! plan translated into Apache DataFusion's, node by node and expression
//! by expression, and run there.
//!
//! - `plan.rs` translates the nodes. Columns are matched by position: every
//!   translated node yields its columns in the order of the sloth node's
//!   schema, so a sloth column (a name, unique in its input) becomes the
//!   DataFusion column at the same index, whatever qualifier DataFusion
//!   gave it. Scans become file-backed listing tables over the same
//!   Parquet, CSV and Arrow files (batches in memory become a `MemTable`),
//!   each under a name of its own so that a table read twice stays two
//!   relations.
//! - `expr.rs` translates expressions; aggregate and window functions map
//!   to DataFusion's by name.
//! - `udf.rs` runs sloth's scalar functions inside DataFusion as
//!   user-defined functions, so every function of the registry means there
//!   exactly what it means in sloth (`substring` on a negative start, the
//!   checks of a scalar subquery's row count).
//!
//! - `ballista.rs` (feature `ballista`) runs the same DataFusion plan on a
//!   Ballista cluster: the one at the configured scheduler, or one started
//!   in this process for the query.
//!
//! A node or expression without a translation is an error naming it;
//! results come back as the same arrow `RecordBatch`es, cast to the types
//! of sloth's plan.

#[cfg(feature = "ballista")]
pub mod ballista;
mod expr;
mod plan;
mod udf;

use std::sync::Arc;

use arrow::record_batch::RecordBatch;
use datafusion::common::config::SpillCompression as DfSpillCompression;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::{FunctionRegistry, SessionState, SessionStateBuilder};
use datafusion::logical_expr::LogicalPlan as DfPlan;
use datafusion::prelude::{SessionConfig as DfConfig, SessionContext};

use crate::config::SessionConfig;
use crate::error::{Result, SlothError};
use crate::memory::SpillCompression;
use crate::plan::LogicalPlan;

/// Runs `plan` (optimized by sloth) on DataFusion, or on Ballista when
/// `config.engine` says so.
pub fn collect(plan: &LogicalPlan, config: &SessionConfig) -> Result<Vec<RecordBatch>> {
    let runtime = runtime(config)?;
    let batches = runtime.block_on(async {
        #[cfg(feature = "ballista")]
        if config.engine == crate::config::Engine::Ballista {
            return ballista::collect(plan, config).await;
        }
        let ctx = SessionContext::new_with_state(state(config)?);
        let df_plan = translate(&ctx, plan, config)?;
        let frame = ctx.execute_logical_plan(df_plan).await.map_err(df_error)?;
        frame.collect().await.map_err(df_error)
    });
    // An in-process Ballista cluster's servers are tasks of this runtime:
    // they stop here, without waiting on a connection left open.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    batches
}

/// Where `plan` goes and the DataFusion plan it translates to, indented,
/// as `explain` shows them.
pub fn explain(plan: &LogicalPlan, config: &SessionConfig) -> Result<String> {
    let ctx = SessionContext::new_with_state(state(config)?);
    let df_plan = translate(&ctx, plan, config)?;
    let target = match (config.engine, &config.scheduler) {
        (crate::config::Engine::Ballista, Some(url)) => format!("Ballista at {url}"),
        (crate::config::Engine::Ballista, None) => "Ballista (a cluster in this process)".into(),
        _ => "DataFusion".into(),
    };
    Ok(format!("{target} as:\n{}\n", df_plan.display_indent()))
}

/// `plan` as a DataFusion plan calling `ctx`'s functions; for a cluster
/// (`--engine ballista`) only plans whose every table the executors can
/// read themselves.
fn translate(ctx: &SessionContext, plan: &LogicalPlan, config: &SessionConfig) -> Result<DfPlan> {
    let distributed = config.engine == crate::config::Engine::Ballista;
    plan::Translator::new(ctx)
        .distributed(distributed)
        .translate_root(plan)
}

/// A DataFusion planning state (`SessionState`) running on `config`'s threads
/// under its memory limit, spilling to its temp directory with its spill
/// compression, sloth's scalar functions registered by their `sloth_`
/// names (a plan sent to a Ballista scheduler names them; the scheduler
/// and executors look them up).
fn state(config: &SessionConfig) -> Result<SessionState> {
    let mut df_config = DfConfig::new().with_target_partitions(partitions(config));
    df_config.options_mut().execution.spill_compression = match config.spill_compression {
        SpillCompression::None => DfSpillCompression::Uncompressed,
        SpillCompression::Lz4 => DfSpillCompression::Lz4Frame,
        SpillCompression::Zstd => DfSpillCompression::Zstd,
    };
    let limit = usize::try_from(config.memory_limit_bytes()).unwrap_or(usize::MAX);
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_limit(limit, 1.0)
        .with_temp_file_path(config.temp_dir_path())
        .build_arc()
        .map_err(df_error)?;
    let mut state = SessionStateBuilder::new()
        .with_config(df_config)
        .with_runtime_env(runtime)
        .with_default_features()
        .build();
    register_functions(&mut state);
    Ok(state)
}

/// Partitions DataFusion splits a query's work into: one per thread.
fn partitions(config: &SessionConfig) -> usize {
    match config.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Registers every sloth scalar function in `registry`.
pub fn register_functions(registry: &mut dyn FunctionRegistry) {
    for func in crate::functions::all() {
        // Registering returns the function a name replaced: none here.
        let _ = registry.register_udf(Arc::new(udf::udf(func)));
    }
}

fn runtime(config: &SessionConfig) -> Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if config.threads > 0 {
        builder.worker_threads(config.threads);
    }
    // Timers and sockets: Ballista's client and in-process cluster use them.
    builder
        .enable_all()
        .thread_stack_size(crate::config::WORKER_STACK_BYTES)
        .build()
        .map_err(SlothError::Io)
}

/// DataFusion's error as sloth's, on one line.
pub(crate) fn df_error(e: datafusion::error::DataFusionError) -> SlothError {
    let text = e.to_string();
    SlothError::DataFusion(text.lines().next().unwrap_or_default().to_string())
}
