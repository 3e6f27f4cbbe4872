//! Join output pruning: a join emits only the columns its parent reads.
//!
//! A join's output is every column of both inputs, and each one costs a
//! gather per matched row. After projection pushdown the inputs carry only
//! what the query uses *somewhere above*, which includes the join keys and
//! columns read only by a scan's filter; past the join many of them are
//! dead. This rule puts a column selection of what the parent reads on top
//! of each such join, and the physical planner folds that selection into
//! the join itself (`HashJoin ... output=[..]`), so dead columns are never
//! gathered. TPC-H Q9 carries 11 columns out of its lineitem join and
//! reads 6 of them.
//!
//! ```text
//! before: Aggregate keys=[] aggs=[sum(v) AS s]
//!           Join Inner on [k = k2]
//!             Scan memory (3 rows) columns=[k]
//!             Scan memory (3 rows) columns=[k2, v]
//! after:  Aggregate keys=[] aggs=[sum(v) AS s]
//!           Project [v]
//!             Join Inner on [k = k2]
//!               Scan memory (3 rows) columns=[k]
//!               Scan memory (3 rows) columns=[k2, v]
//! ```
//! It runs once, after the other rules reach their fixed point: a
//! selection between two joins would hide them from join reordering.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::projection_pushdown::Pruner;
use super::{ApplyOrder, OptimizerRule};
use crate::error::Result;
use crate::expr::{Expr, col};
use crate::plan::{Join, JoinType, LogicalPlan, Transformed};

/// See the module documentation.
pub struct JoinOutputPruning;

impl OptimizerRule for JoinOutputPruning {
    fn name(&self) -> &'static str {
        "join_output_pruning"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::WholePlan
    }
    fn rewrite(&self, plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        let pruned = Pruner { join_outputs: true }.prune(&plan, None)?;
        Ok(Transformed::compared(&plan, pruned))
    }
}

/// `join` under a selection of the `needed` columns of its output, when it
/// has others (the pruning walk of
/// [`projection_pushdown`](super::projection_pushdown) calls this for every
/// join it rewrites). A cross join has no gather to narrow.
pub(super) fn narrow(join: LogicalPlan, needed: &BTreeSet<String>) -> Result<LogicalPlan> {
    if matches!(
        join,
        LogicalPlan::Join(Join {
            how: JoinType::Cross,
            ..
        })
    ) {
        return Ok(join);
    }
    let outputs = join.schema()?;
    let kept: Vec<Expr> = outputs
        .fields()
        .iter()
        .filter(|f| needed.contains(f.name()))
        .map(|f| col(f.name().as_str()))
        .collect();
    Ok(if kept.is_empty() || kept.len() == outputs.fields().len() {
        join
    } else {
        LogicalPlan::project(Arc::new(join), kept)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::LazyFrame;
    use crate::optimizer::apply_rule;
    use crate::optimizer::projection_pushdown::ProjectionPushdown;
    use crate::optimizer::test_util::{rewritten, table};

    fn joined() -> LazyFrame {
        table(&["k"]).join(
            &table(&["k2", "v"]),
            [col("k")],
            [col("k2")],
            crate::plan::JoinType::Inner,
        )
    }

    #[test]
    fn a_join_emits_only_what_its_parent_reads() {
        let lf = joined().agg([col("v").sum().alias("s")]);
        let pushed = LazyFrame::from(
            apply_rule(&ProjectionPushdown, lf.logical_plan())
                .unwrap()
                .data,
        );
        assert_eq!(
            rewritten(&JoinOutputPruning, &pushed),
            "Aggregate keys=[] aggs=[sum(v) AS s]\n  Project [v]\n    Join Inner on [k = k2]\n      \
             Scan memory (3 rows) columns=[k]\n      Scan memory (3 rows) columns=[k2, v]\n"
        );
    }

    #[test]
    fn a_join_whose_outputs_are_all_read_is_left_alone() {
        let lf = joined().select([col("k"), col("k2"), col("v")]);
        assert_eq!(
            rewritten(&JoinOutputPruning, &lf),
            "Project [k, k2, v]\n  Join Inner on [k = k2]\n    Scan memory (3 rows) columns=[k]\n    \
             Scan memory (3 rows) columns=[k2, v]\n"
        );
    }

    #[test]
    fn the_physical_join_gathers_only_the_selected_columns_and_results_agree() {
        let lf = joined().agg([col("v").sum().alias("s")]);
        let physical = lf.physical_plan().unwrap().to_string();
        assert!(
            physical.contains("HashJoin Inner left=[#0] right=[#0] build=Smaller output=[#2]"),
            "{physical}"
        );
        let off = lf.clone().with_optimizer(
            crate::optimizer::OptimizerOptions::default().disable("join_output_pruning"),
        );
        assert!(!off.physical_plan().unwrap().to_string().contains("output="));
        let (on, off) = (lf.collect().unwrap(), off.collect().unwrap());
        assert_eq!(on.to_sorted_csv().unwrap(), off.to_sorted_csv().unwrap());
        assert_eq!(on.to_sorted_csv().unwrap(), "s\n6\n");
    }
}
