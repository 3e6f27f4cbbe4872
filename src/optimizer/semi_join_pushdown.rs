//! Semi-join pushdown: a semi or anti join whose keys all come from one
//! input of a join below it filters that input instead of the join's
//! output.
//!
//! Whether a row of `A ⋈ B` has a match in `S` depends only on its `A`
//! columns when the keys are `A`'s, so filtering `A` first keeps exactly
//! the same rows, and the join below then works on fewer of them. This is
//! what decorrelated `IN (subquery)` predicates (TPC-H Q18, Q20) need: the
//! SQL front end puts the semi join above the whole `FROM` clause.
//!
//! ```text
//! before: Join Semi on [o_orderkey = k]       after: Join Inner on [o_orderkey = l_orderkey]
//!           Join Inner on [o_orderkey = l_orderkey]    Join Semi on [o_orderkey = k]
//!             Scan orders                                Scan orders
//!             Scan lineitem                              Scan S
//!           Scan S                                     Scan lineitem
//! ```
//!
//! Valid below inner joins (either input) and into the preserved input of
//! a left or right join (never into a side padded with nulls), also
//! through projections that pass the keys on. Taken only when the
//! filtered input is estimated no larger than the join's output, and the
//! semi join has no extra filter (its column names would shift).

use std::sync::Arc;

use super::{ApplyOrder, OptimizerRule, column_passed_on};
use crate::error::Result;
use crate::expr::{Expr, col};
use crate::plan::cardinality::{estimate, join_rows};
use crate::plan::{Join, JoinType, LogicalPlan, Project, Transformed, join_schema};

/// See the module documentation.
pub struct SemiJoinPushdown;

impl OptimizerRule for SemiJoinPushdown {
    fn name(&self) -> &'static str {
        "semi_join_pushdown"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::BottomUp
    }
    fn rewrite(&self, node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        let pushed = match &node {
            LogicalPlan::Join(Join {
                left,
                right,
                left_on,
                right_on,
                how: how @ (JoinType::Semi | JoinType::Anti),
                filter: None,
                ..
            }) => push(left, right, left_on, right_on, *how)?,
            _ => None,
        };
        Ok(match pushed {
            Some(p) => Transformed::yes(p),
            None => Transformed::no(node),
        })
    }
}

/// `semi(input, sub)` with `input` a join, rewritten to filter one of the
/// join's inputs; `None` when no input owns every key or it would not pay.
fn push(
    input: &Arc<LogicalPlan>,
    sub: &Arc<LogicalPlan>,
    keys: &[Expr],
    sub_keys: &[Expr],
    how: JoinType,
) -> Result<Option<LogicalPlan>> {
    if let LogicalPlan::Project(Project {
        input: below,
        exprs,
        ..
    }) = input.as_ref()
    {
        // Through a projection that passes the keys on as columns.
        let Some(below_keys) = keys
            .iter()
            .map(|k| match k {
                Expr::Column(c) => column_passed_on(exprs, c).map(col),
                _ => None,
            })
            .collect::<Option<Vec<Expr>>>()
        else {
            return Ok(None);
        };
        return Ok(push(below, sub, &below_keys, sub_keys, how)?
            .map(|pushed| LogicalPlan::project(Arc::new(pushed), exprs.clone())));
    }
    let LogicalPlan::Join(inner) = input.as_ref() else {
        return Ok(None);
    };
    let Join {
        left,
        right,
        how: inner_how,
        ..
    } = inner;
    let (ls, rs) = (left.schema()?, right.schema()?);
    let out = join_schema(&ls, &rs, *inner_how);
    let n_left = ls.fields().len();
    // The key columns, by position in the join's output.
    let Some(positions) = keys
        .iter()
        .map(|k| match k {
            Expr::Column(c) => out.index_of(c).ok(),
            _ => None,
        })
        .collect::<Option<Vec<usize>>>()
    else {
        return Ok(None);
    };
    let all_left = positions.iter().all(|&p| p < n_left);
    let all_right = positions.iter().all(|&p| p >= n_left);
    let into_left = all_left && matches!(inner_how, JoinType::Inner | JoinType::Left);
    let into_right = all_right && matches!(inner_how, JoinType::Inner | JoinType::Right);
    let side = match (into_left, into_right) {
        (true, _) => left,
        (_, true) => right,
        _ => return Ok(None),
    };
    // A semi join keeps about the side's rows that the inner join with
    // `sub` would (a foreign key into a filtered `sub`: TPC-H Q2's
    // partsupp rows of 747 parts); an anti join is not estimated, so it
    // moves only into a side no larger than the join.
    let (s, j) = (estimate(side), estimate(sub));
    let kept = match how {
        JoinType::Semi => s.rows.min(join_rows(s.rows, j.rows, s.base.min(j.base))),
        _ => s.rows,
    };
    if kept > estimate(input).rows {
        return Ok(None);
    }
    // Keys renamed into the side's own names (a right column may carry a
    // suffix in the join's output).
    let side_schema = if into_left { &ls } else { &rs };
    let offset = if into_left { 0 } else { n_left };
    let side_keys = positions
        .iter()
        .map(|&p| col(side_schema.field(p - offset).name().as_str()))
        .collect();
    let filtered = Arc::new(LogicalPlan::Join(Join::new(
        side.clone(),
        sub.clone(),
        side_keys,
        sub_keys.to_vec(),
        how,
        None,
    )));
    let (new_left, new_right) = if into_left {
        (filtered, right.clone())
    } else {
        (left.clone(), filtered)
    };
    Ok(Some(LogicalPlan::Join(
        inner.with_inputs(new_left, new_right),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::LazyFrame;
    use crate::optimizer::test_util::{rewritten, table};

    fn join(l: &LazyFrame, r: &LazyFrame, on: (&str, &str), how: JoinType) -> LazyFrame {
        l.join(r, [col(on.0)], [col(on.1)], how)
    }

    fn orders_lineitem() -> LazyFrame {
        join(
            &table(&["o_key", "o_cust"]),
            &table(&["l_key", "l_qty"]),
            ("o_key", "l_key"),
            JoinType::Inner,
        )
    }

    #[test]
    fn semi_join_moves_into_the_side_that_owns_its_keys() {
        let lf = join(
            &orders_lineitem(),
            &table(&["k"]),
            ("o_key", "k"),
            JoinType::Semi,
        );
        assert_eq!(
            rewritten(&SemiJoinPushdown, &lf),
            "Join Inner on [o_key = l_key]\n  \
               Join Semi on [o_key = k]\n    \
                 Scan memory (3 rows)\n    \
                 Scan memory (3 rows)\n  \
               Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn anti_join_moves_into_the_right_input_too() {
        let lf = join(
            &orders_lineitem(),
            &table(&["k"]),
            ("l_qty", "k"),
            JoinType::Anti,
        );
        assert_eq!(
            rewritten(&SemiJoinPushdown, &lf),
            "Join Inner on [o_key = l_key]\n  \
               Scan memory (3 rows)\n  \
               Join Anti on [l_qty = k]\n    \
                 Scan memory (3 rows)\n    \
                 Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn semi_join_moves_through_a_projection_that_renames_its_key() {
        let projected = orders_lineitem().select([col("o_key").alias("key"), col("l_qty")]);
        let lf = join(&projected, &table(&["k"]), ("key", "k"), JoinType::Semi);
        assert_eq!(
            rewritten(&SemiJoinPushdown, &lf),
            "Project [o_key AS key, l_qty]\n  \
               Join Inner on [o_key = l_key]\n    \
                 Join Semi on [o_key = k]\n      \
                   Scan memory (3 rows)\n      \
                   Scan memory (3 rows)\n    \
                 Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn keys_computed_by_a_projection_stay() {
        let projected = orders_lineitem().select([(col("o_key") + col("l_qty")).alias("key")]);
        let lf = join(&projected, &table(&["k"]), ("key", "k"), JoinType::Semi);
        let before = lf.logical_plan().to_string();
        assert_eq!(rewritten(&SemiJoinPushdown, &lf), before);
    }

    #[test]
    fn keys_from_both_sides_or_a_padded_side_stay() {
        let both = orders_lineitem().join(
            &table(&["k", "q"]),
            [col("o_cust"), col("l_qty")],
            [col("k"), col("q")],
            JoinType::Semi,
        );
        let padded = join(
            &join(
                &table(&["o_key", "o_cust"]),
                &table(&["l_key", "l_qty"]),
                ("o_key", "l_key"),
                JoinType::Left,
            ),
            &table(&["k"]),
            ("l_qty", "k"),
            JoinType::Semi,
        );
        for lf in [both, padded] {
            let before = lf.logical_plan().to_string();
            assert_eq!(rewritten(&SemiJoinPushdown, &lf), before);
        }
    }
}
