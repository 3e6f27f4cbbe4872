//! # sloth
//!
//! A lazy, Arrow-native DataFrame engine with a query optimizer.
//!
//! A query is described with the [`LazyFrame`] API (or in SQL, see [`sql`]),
//! planned as a [`plan::LogicalPlan`], optimized, and run by a vectorized,
//! multi-core executor over Apache Arrow record batches. A
//! [`SessionConfig`] holds the settings (device, threads, optimizer rules,
//! memory limit);
//! scalar functions live in the [`functions`] registry.
//!
//! ```
//! use sloth::prelude::*;
//! # use std::sync::Arc;
//! # use arrow::array::{Int64Array, StringArray};
//! # use arrow::record_batch::RecordBatch;
//! let batch = RecordBatch::try_from_iter(vec![
//!     ("id", Arc::new(StringArray::from(vec!["a", "b", "a"])) as _),
//!     ("v", Arc::new(Int64Array::from(vec![1, 2, 3])) as _),
//! ]).unwrap();
//! let out = LazyFrame::from_batches(vec![batch])?
//!     .group_by([col("id")])
//!     .agg([col("v").sum().alias("total")])
//!     .sort(vec![col("id")], vec![false], false)
//!     .collect()?;
//! println!("{out}");
//! # Ok::<(), sloth::SlothError>(())
//! ```

pub mod config;
pub mod error;
pub mod expr;
pub mod frame;
pub mod functions;
pub mod io;
pub mod plan;
pub mod profile;
pub mod sql;

// Benchmark material (feature `datagen`): data generators and the
// benchmark questions written with the LazyFrame API.
#[cfg(feature = "datagen")]
pub mod datagen;
#[cfg(feature = "datagen")]
pub mod queries;

// The engine's insides: crate-private. The crate's own tests and
// benchmarks reach them through the `internals` feature (a dev-dependency
// of the crate on itself), hidden from the documentation; a program that
// embeds sloth sees only the API above and below.
// Written out, not by a macro, so that rustfmt reaches their files.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod exec;
#[cfg(not(feature = "internals"))]
pub(crate) mod exec;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod gpu;
#[cfg(not(feature = "internals"))]
pub(crate) mod gpu;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod kernels;
#[cfg(not(feature = "internals"))]
pub(crate) mod kernels;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod optimizer;
#[cfg(not(feature = "internals"))]
pub(crate) mod optimizer;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod physical;
#[cfg(not(feature = "internals"))]
pub(crate) mod physical;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod physical_expr;
#[cfg(not(feature = "internals"))]
pub(crate) mod physical_expr;

pub mod memory;

/// The processes of a Ballista cluster (feature `ballista`): what `sloth
/// scheduler` and `sloth executor` run, for programs that start their own.
#[cfg(feature = "ballista")]
pub mod cluster {
    pub use crate::exec::datafusion::ballista::{
        ExecutorOptions, SchedulerOptions, serve_executor, serve_scheduler,
    };
}

pub use config::SessionConfig;
pub use error::{Result, SlothError};
pub use exec::{CancelToken, ScanProgress};
pub use frame::{DataFrame, LazyFrame};

/// The names most programs need.
pub mod prelude {
    pub use crate::config::{Device, Engine, OptimizerOptions, SessionConfig};
    pub use crate::error::{Result, SlothError};
    pub use crate::exec::CancelToken;
    pub use crate::expr::{
        Expr, FrameOffset, FramePick, MathFunc, ScalarValue, SortKey, WindowFrame, col, corr,
        count_star, lit, when,
    };
    pub use crate::frame::{DataFrame, LazyFrame};
    pub use crate::plan::JoinType;
}
