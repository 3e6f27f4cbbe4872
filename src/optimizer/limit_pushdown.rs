//! Limit pushdown: move a slice below the row-wise steps above it, and give
//! each input of a union a limit of its own.
//!
//! ```text
//! before: Slice offset=0 len=10        after: Project [a, (b + 1) AS c]
//!           Project [a, (b + 1) AS c]           Slice offset=0 len=10
//!             Scan t                              Scan t
//! ```
//! Projections keep one output row per input row, so computing them for the
//! kept rows only gives the same result. Under a union, each input needs at
//! most `offset + len` rows. (Sort followed by a slice becomes a top-k in the
//! physical planner.)

use std::sync::Arc;

use super::{ApplyOrder, OptimizerRule};
use crate::error::Result;
use crate::plan::{LogicalPlan, Project, Slice, Transformed, Union};

/// See the module documentation.
pub struct LimitPushdown;

impl OptimizerRule for LimitPushdown {
    fn name(&self) -> &'static str {
        "limit_pushdown"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::BottomUp
    }
    fn rewrite(&self, node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Slice(Slice {
            input, offset, len, ..
        }) = &node
        else {
            return Ok(Transformed::no(node));
        };
        let (offset, len) = (*offset, *len);
        Ok(match input.as_ref() {
            LogicalPlan::Project(Project {
                input: below,
                exprs,
                ..
            }) if !exprs.iter().any(|e| e.contains_window()) => {
                let slice = LogicalPlan::slice(below.clone(), offset, len);
                Transformed::yes(LogicalPlan::project(Arc::new(slice), exprs.clone()))
            }
            LogicalPlan::Union(Union { inputs, .. }) if len.is_some() => {
                let keep = offset + len.expect("checked");
                let limited_already = |i: &Arc<LogicalPlan>| matches!(i.as_ref(), LogicalPlan::Slice(Slice { offset: 0, len: Some(n), .. }) if *n <= keep);
                if inputs.iter().all(limited_already) {
                    return Ok(Transformed::no(node));
                }
                let limited = inputs
                    .iter()
                    .map(|i| {
                        if limited_already(i) {
                            i.clone()
                        } else {
                            Arc::new(LogicalPlan::slice(i.clone(), 0, Some(keep)))
                        }
                    })
                    .collect();
                Transformed::yes(LogicalPlan::slice(
                    Arc::new(LogicalPlan::union(limited)),
                    offset,
                    len,
                ))
            }
            _ => Transformed::no(node),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{col, lit};
    use crate::frame::LazyFrame;
    use crate::optimizer::apply_rule;
    use arrow::array::{ArrayRef, Int64Array};
    use arrow::record_batch::RecordBatch;

    fn t() -> LazyFrame {
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("a", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
            ("b", Arc::new(Int64Array::from(vec![4, 5, 6])) as ArrayRef),
        ];
        LazyFrame::from_batches(vec![RecordBatch::try_from_iter(cols).unwrap()]).unwrap()
    }

    #[test]
    fn slice_moves_below_projection() {
        let lf = t()
            .select([col("a"), (col("b") + lit(1)).alias("c")])
            .slice(1, Some(1));
        let after = apply_rule(&LimitPushdown, lf.logical_plan()).unwrap().data;
        assert_eq!(
            after.to_string(),
            "Project [a, (b + 1) AS c]\n  Slice offset=1 len=1\n    Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn union_inputs_get_their_own_limit() {
        let lf = t().union(&[t()]).slice(1, Some(2));
        let after = apply_rule(&LimitPushdown, lf.logical_plan()).unwrap().data;
        assert_eq!(
            after.to_string(),
            "Slice offset=1 len=2\n  Union\n    Slice offset=0 len=3\n      Scan memory (3 rows)\n    Slice offset=0 len=3\n      Scan memory (3 rows)\n"
        );
    }
}
