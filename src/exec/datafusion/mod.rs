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
//! A node or expression without a translation is an error naming it;
//! results come back as the same arrow `RecordBatch`es, cast to the types
//! of sloth's plan.

mod expr;
mod plan;
mod udf;

use arrow::record_batch::RecordBatch;
use datafusion::prelude::{SessionConfig as DfConfig, SessionContext};

use crate::config::SessionConfig;
use crate::error::{Result, SlothError};
use crate::plan::LogicalPlan;

/// Runs `plan` (optimized by sloth) on DataFusion.
pub fn collect(plan: &LogicalPlan, config: &SessionConfig) -> Result<Vec<RecordBatch>> {
    let ctx = context(config);
    let df_plan = plan::Translator::new(&ctx).translate_root(plan)?;
    runtime(config)?.block_on(async {
        let frame = ctx.execute_logical_plan(df_plan).await.map_err(df_error)?;
        frame.collect().await.map_err(df_error)
    })
}

/// The DataFusion plan `plan` translates to, indented, as `explain` shows it.
pub fn explain(plan: &LogicalPlan, config: &SessionConfig) -> Result<String> {
    let ctx = context(config);
    let df_plan = plan::Translator::new(&ctx).translate_root(plan)?;
    Ok(df_plan.display_indent().to_string())
}

/// A DataFusion context running on `config`'s threads.
fn context(config: &SessionConfig) -> SessionContext {
    let threads = match config.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    SessionContext::new_with_config(DfConfig::new().with_target_partitions(threads))
}

fn runtime(config: &SessionConfig) -> Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if config.threads > 0 {
        builder.worker_threads(config.threads);
    }
    builder
        .thread_stack_size(crate::config::WORKER_STACK_BYTES)
        .build()
        .map_err(SlothError::Io)
}

/// DataFusion's error as sloth's, on one line.
pub(crate) fn df_error(e: datafusion::error::DataFusionError) -> SlothError {
    let text = e.to_string();
    SlothError::DataFusion(text.lines().next().unwrap_or_default().to_string())
}
