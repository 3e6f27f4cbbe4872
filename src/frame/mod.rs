//! The user-facing frames: [`LazyFrame`] (a plan) and [`DataFrame`] (a result).

mod dataframe;
mod files;
mod lazy;
#[cfg(feature = "polars")]
mod polars;

pub use dataframe::{DataFrame, MAX_CELL};
pub use lazy::{GroupBy, LazyFrame, plan_aggregate};
