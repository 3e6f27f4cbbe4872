//! The user-facing frames: [`LazyFrame`] (a plan) and [`DataFrame`] (a result).

mod dataframe;
mod lazy;

pub use dataframe::DataFrame;
pub use lazy::{GroupBy, LazyFrame, plan_aggregate};
