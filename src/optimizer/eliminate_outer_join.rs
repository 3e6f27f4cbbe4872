//! Outer join elimination: a filter above an outer join that rejects the
//! rows the join pads with nulls turns the join into a stricter one.
//!
//! A conjunct *rejects nulls* on a set of columns when it is NULL or false
//! whenever all those columns are NULL (`y > 1`, `y + x = 3`,
//! `y IS NOT NULL`, `a OR b` when both reject). Rows a left join pads with
//! nulls on its right side can then never pass, so the left join returns
//! what an inner join returns:
//!
//! ```text
//! before: Filter (y > 1)              after: Filter (y > 1)
//!           Join Left on [a = b]               Join Inner on [a = b]
//!             Scan l                             Scan l
//!             Scan r                             Scan r
//! ```
//! The filter stays; predicate pushdown then moves it into the right input,
//! which the left join forbade. A full join becomes a left, right or inner
//! join depending on which sides the filter rejects nulls on.

use std::collections::HashSet;
use std::sync::Arc;

use super::{ApplyOrder, OptimizerRule};
use crate::error::Result;
use crate::plan::{Filter, Join, JoinType, LogicalPlan, Transformed, join_schema};

/// See the module documentation.
pub struct EliminateOuterJoin;

impl OptimizerRule for EliminateOuterJoin {
    fn name(&self) -> &'static str {
        "eliminate_outer_join"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::BottomUp
    }
    fn rewrite(&self, node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        {
            let LogicalPlan::Filter(Filter {
                input, predicate, ..
            }) = &node
            else {
                return Ok(Transformed::no(node));
            };
            let LogicalPlan::Join(join) = input.as_ref() else {
                return Ok(Transformed::no(node));
            };
            let Join {
                left, right, how, ..
            } = join;
            if !matches!(how, JoinType::Left | JoinType::Right | JoinType::Full) {
                return Ok(Transformed::no(node));
            }
            let (ls, rs) = (left.schema()?, right.schema()?);
            let out = join_schema(&ls, &rs, *how);
            let n_left = ls.fields().len();
            let names = |r: std::ops::Range<usize>| -> HashSet<String> {
                out.fields()[r].iter().map(|f| f.name().clone()).collect()
            };
            let (left_cols, right_cols) = (names(0..n_left), names(n_left..out.fields().len()));
            let conjuncts = predicate.clone().split_conjunction();
            let rejects_left = conjuncts.iter().any(|c| c.rejects_nulls(&left_cols));
            let rejects_right = conjuncts.iter().any(|c| c.rejects_nulls(&right_cols));
            let new_how = match (how, rejects_left, rejects_right) {
                (JoinType::Left, _, true) | (JoinType::Right, true, _) => JoinType::Inner,
                (JoinType::Full, true, true) => JoinType::Inner,
                (JoinType::Full, true, false) => JoinType::Left,
                (JoinType::Full, false, true) => JoinType::Right,
                _ => return Ok(Transformed::no(node)),
            };
            Ok(Transformed::yes(LogicalPlan::filter(
                Arc::new(LogicalPlan::Join(join.with_how(new_how))),
                predicate.clone(),
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{col, lit};
    use crate::optimizer::test_util::{rewritten, table};

    fn joined(how: JoinType) -> crate::frame::LazyFrame {
        table(&["a", "x"]).join(&table(&["b", "y"]), [col("a")], [col("b")], how)
    }

    #[test]
    fn left_join_with_a_null_rejecting_filter_becomes_inner() {
        let lf = joined(JoinType::Left).filter(col("y").gt(lit(1)));
        assert_eq!(
            lf.logical_plan().to_string(),
            "Filter (y > 1)\n  Join Left on [a = b]\n    Scan memory (3 rows)\n    Scan memory (3 rows)\n"
        );
        assert_eq!(
            rewritten(&EliminateOuterJoin, &lf),
            "Filter (y > 1)\n  Join Inner on [a = b]\n    Scan memory (3 rows)\n    Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn is_null_test_keeps_the_outer_join() {
        // `y IS NULL` is how anti joins are written by hand: it must keep the padded rows.
        let lf = joined(JoinType::Left).filter(col("y").is_null());
        assert!(rewritten(&EliminateOuterJoin, &lf).contains("Join Left"));
        // `y > 1 OR x > 1` passes padded rows whose x > 1.
        let lf = joined(JoinType::Left).filter(col("y").gt(lit(1)).or(col("x").gt(lit(1))));
        assert!(rewritten(&EliminateOuterJoin, &lf).contains("Join Left"));
    }

    #[test]
    fn full_join_narrows_by_side() {
        let lf = joined(JoinType::Full).filter(col("x").gt(lit(1)));
        assert!(rewritten(&EliminateOuterJoin, &lf).contains("Join Left"));
        let lf = joined(JoinType::Full).filter(col("y").is_not_null());
        assert!(rewritten(&EliminateOuterJoin, &lf).contains("Join Right"));
        let lf = joined(JoinType::Full).filter(col("x").eq(col("y")));
        assert!(rewritten(&EliminateOuterJoin, &lf).contains("Join Inner"));
    }
}
