//! # sloth
//!
//! A lazy, Arrow-native DataFrame engine with a query optimizer.
//!
//! A query is described with the [`LazyFrame`] API (or in SQL, see [`sql`]),
//! planned as a [`plan::LogicalPlan`], rewritten by the [`optimizer`], turned
//! into a [`physical::PhysicalPlan`] and run by the vectorized, multi-core
//! executor in [`exec`] over Apache Arrow record batches.
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
#[cfg(feature = "datagen")]
pub mod datagen;
pub mod error;
pub mod exec;
pub mod expr;
pub mod frame;
pub mod functions;
pub mod gpu;
pub mod io;
pub mod kernels;
pub mod optimizer;
pub mod physical;
pub mod physical_expr;
pub mod plan;
pub mod profile;
#[cfg(feature = "datagen")]
pub mod queries;
pub mod sql;

pub use config::SessionConfig;
pub use error::{Result, SlothError};
pub use frame::{DataFrame, LazyFrame};

/// The names most programs need.
pub mod prelude {
    pub use crate::config::{Device, SessionConfig};
    pub use crate::error::{Result, SlothError};
    pub use crate::expr::{
        Expr, MathFunc, RowsFrame, ScalarValue, SortKey, col, corr, count_star, lit, when,
    };
    pub use crate::frame::{DataFrame, LazyFrame};
    pub use crate::optimizer::OptimizerOptions;
    pub use crate::plan::JoinType;
}
