//! Helpers for the rules' plan tests.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::record_batch::RecordBatch;

use super::{OptimizerRule, apply_rule};
use crate::frame::LazyFrame;

/// A three-row in-memory table with Int64 columns of the given names.
pub fn table(names: &[&str]) -> LazyFrame {
    let cols: Vec<(&str, ArrayRef)> = names
        .iter()
        .map(|n| (*n, Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef))
        .collect();
    LazyFrame::from_batches(vec![RecordBatch::try_from_iter(cols).unwrap()]).unwrap()
}

/// The plan of `lf` after one application of `rule`, as `explain` prints it.
pub fn rewritten(rule: &dyn OptimizerRule, lf: &LazyFrame) -> String {
    apply_rule(rule, lf.logical_plan())
        .unwrap()
        .data
        .to_string()
}
