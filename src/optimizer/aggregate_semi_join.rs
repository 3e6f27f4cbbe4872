//! Semi-join reduction of aggregates: an aggregate joined on its grouping
//! keys only needs the groups whose keys the other side has, so its input
//! is first reduced to those keys.
//!
//! Grouping by `k` means each group's value depends only on the rows with
//! that `k`; dropping rows whose `k` the join can never match drops whole
//! groups the inner join would drop anyway, and changes no other group.
//! Decorrelated subqueries (TPC-H Q17's `avg(l_quantity)` per part, Q20's
//! `sum(l_quantity)` per part and supplier) aggregate a whole table and
//! then keep a few hundred groups; reduced, they aggregate a few thousand
//! rows.
//!
//! ```text
//! before: Join Inner on [p_partkey = l_partkey]
//!           Scan part filters=[p_brand = 'Brand#23']
//!           Aggregate keys=[l_partkey] aggs=[avg(l_quantity)]
//!             Scan lineitem
//! after:  Join Inner on [p_partkey = l_partkey]
//!           Scan part filters=[p_brand = 'Brand#23']
//!           Aggregate keys=[l_partkey] aggs=[avg(l_quantity)]
//!             Join Semi on [l_partkey = p_partkey]
//!               Scan lineitem
//!               Scan part filters=[p_brand = 'Brand#23']
//! ```
//!
//! Applies to inner joins (aggregate on either side) and semi joins
//! (aggregate on the right), through projections above the aggregate
//! that pass the keys on, on the join keys of the aggregate's side that
//! are grouping columns (a join that also compares an aggregate value, as
//! TPC-H Q2's `ps_supplycost = min(ps_supplycost)`, is reduced on the
//! others; one on aggregate values alone is left as it is). Taken only when the other side is estimated smaller
//! than the aggregate's input (the semi join then probes a small table)
//! and filtered to at most half its relation (an unfiltered side has every
//! key of a foreign-key join, so it would drop nothing).
//! The other side is evaluated twice unless the executor finds the two
//! copies identical (see `exec::shared`).

use std::sync::Arc;

use super::{ApplyOrder, OptimizerRule, column_names, column_passed_on};
use crate::error::Result;
use crate::expr::{Expr, col};
use crate::plan::cardinality::estimate;
use crate::plan::{Aggregate, Filter, Join, JoinType, LogicalPlan, Project, Transformed};

/// The reducing side must be estimated at most this fraction of its
/// unfiltered relation: a filter must have dropped keys.
const MAX_REDUCER_FRACTION: f64 = 0.5;

/// See the module documentation.
pub struct AggregateSemiJoin;

impl OptimizerRule for AggregateSemiJoin {
    fn name(&self) -> &'static str {
        "aggregate_semi_join"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::BottomUp
    }
    fn rewrite(&self, node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        {
            let LogicalPlan::Join(join) = &node else {
                return Ok(Transformed::no(node));
            };
            let (left, right, how) = (&join.left, &join.right, join.how);
            let (left_on, right_on) = (&join.left_on, &join.right_on);
            let rebuilt = |left, right| LogicalPlan::Join(join.with_inputs(left, right));
            if matches!(how, JoinType::Inner | JoinType::Semi)
                && let Some(r) = reduce(right, right_on, left, left_on)?
            {
                return Ok(Transformed::yes(rebuilt(left.clone(), Arc::new(r))));
            }
            if how == JoinType::Inner
                && let Some(l) = reduce(left, left_on, right, right_on)?
            {
                return Ok(Transformed::yes(rebuilt(Arc::new(l), right.clone())));
            }
        }
        Ok(Transformed::no(node))
    }
}

/// `agg_side` (an aggregate, maybe under a projection) with its input
/// reduced by a semi join on `other`; `None` when no join key is a
/// grouping column, it would not pay, or it was done already.
fn reduce(
    agg_side: &Arc<LogicalPlan>,
    agg_keys: &[Expr],
    other: &Arc<LogicalPlan>,
    other_keys: &[Expr],
) -> Result<Option<LogicalPlan>> {
    // Projections above the aggregate, outermost first.
    let mut projects: Vec<&Vec<Expr>> = Vec::new();
    let mut aggregate = agg_side;
    while let LogicalPlan::Project(Project { input, exprs, .. }) = aggregate.as_ref() {
        projects.push(exprs);
        aggregate = input;
    }
    let LogicalPlan::Aggregate(Aggregate {
        input, keys, aggs, ..
    }) = aggregate.as_ref()
    else {
        return Ok(None);
    };
    if agg_keys.is_empty() {
        return Ok(None);
    }
    // Each join key → through the projections, the aggregate output column
    // it is → the input column that grouping key is.
    // Join keys that are not grouping columns (an aggregate's value, TPC-H
    // Q2's `min(ps_supplycost)`) are left out: equal grouping keys are
    // still needed for a match, so the others reduce as well.
    let grouping_column = |k: &Expr| {
        let Expr::Column(name) = k else {
            return None;
        };
        let mut name = name.as_str();
        for exprs in &projects {
            name = column_passed_on(exprs, name)?;
        }
        column_passed_on(keys, name)
    };
    let (input_keys, other_keys): (Vec<Expr>, Vec<Expr>) = agg_keys
        .iter()
        .zip(other_keys)
        .filter_map(|(k, o)| Some((col(grouping_column(k)?), o.clone())))
        .unzip();
    if input_keys.is_empty() {
        return Ok(None);
    }
    let (used, other, other_keys) = cheapest_owner(other, &other_keys)?;
    let input_keys: Vec<Expr> = used.iter().map(|&i| input_keys[i].clone()).collect();
    // Later rules reshape the copy of `other` (fewer columns) and move the
    // semi join down (`semi_join_pushdown`), so a done reduction is
    // recognized by the reducer's keys alone, anywhere below.
    let already = reduced_by(input, &other_keys);
    // An unfiltered side holds every key of a foreign-key join (TPC-H Q15:
    // all suppliers): reducing by it drops nothing, and would keep the
    // aggregate from being shared with an identical unreduced copy.
    let reducer = estimate(&other);
    if already
        || reducer.rows >= estimate(input).rows
        || reducer.rows > MAX_REDUCER_FRACTION * reducer.base
    {
        return Ok(None);
    }
    let reduced = LogicalPlan::aggregate(
        Arc::new(LogicalPlan::Join(Join::new(
            input.clone(),
            other.clone(),
            input_keys,
            other_keys,
            JoinType::Semi,
            None,
        ))),
        keys.clone(),
        aggs.clone(),
    );
    Ok(Some(
        projects.into_iter().rev().fold(reduced, |plan, exprs| {
            LogicalPlan::project(Arc::new(plan), exprs.clone())
        }),
    ))
}

/// Whether a semi join on `reducer_keys` (its right side's keys) is in
/// `plan`, down through projections, filters and the inputs of joins.
fn reduced_by(plan: &LogicalPlan, reducer_keys: &[Expr]) -> bool {
    match plan {
        LogicalPlan::Join(Join {
            how: JoinType::Semi,
            right_on,
            ..
        }) if right_on == reducer_keys => true,
        LogicalPlan::Join(Join { left, right, .. }) => {
            reduced_by(left, reducer_keys) || reduced_by(right, reducer_keys)
        }
        LogicalPlan::Project(Project { input, .. }) | LogicalPlan::Filter(Filter { input, .. }) => {
            reduced_by(input, reducer_keys)
        }
        _ => false,
    }
}

/// Every part of `plan` whose values of `keys` are a superset of `plan`'s
/// (so reducing by them keeps every group the join needs), `plan` itself
/// first: down through inner joins (and the preserved side of outer, semi
/// and anti joins) into the input the keys come from, across an inner or
/// semi join's key equality (`a = b`: the output's `a` values are among
/// `b`'s), and through projections that pass the keys on; never past a
/// filter, which would lose its reduction.
fn key_owners(
    plan: &Arc<LogicalPlan>,
    keys: Vec<Expr>,
) -> Result<Vec<(Arc<LogicalPlan>, Vec<Expr>)>> {
    let mut out = vec![(plan.clone(), keys.clone())];
    let Some(names) = column_names(&keys) else {
        return Ok(out);
    };
    let cols = |v: Vec<String>| v.iter().map(|n| col(n.as_str())).collect::<Vec<_>>();
    match plan.as_ref() {
        LogicalPlan::Project(Project { input, exprs, .. }) => {
            let below: Option<Vec<String>> = names
                .iter()
                .map(|n| column_passed_on(exprs, n).map(str::to_string))
                .collect();
            if let Some(below) = below {
                out.extend(key_owners(input, cols(below))?);
            }
        }
        LogicalPlan::Join(Join {
            left,
            right,
            left_on,
            right_on,
            how,
            ..
        }) => {
            let (ls, rs) = (left.schema()?, right.schema()?);
            // Right columns keep their names unless the left has them too.
            let in_left = names.iter().all(|n| ls.index_of(n).is_ok());
            let in_right = names
                .iter()
                .all(|n| rs.index_of(n).is_ok() && ls.index_of(n).is_err());
            let across = |from: &[Expr], to: &[Expr]| -> Option<Vec<String>> {
                names
                    .iter()
                    .map(|n| {
                        let i = from
                            .iter()
                            .position(|k| matches!(k, Expr::Column(c) if c == n))?;
                        match &to[i] {
                            Expr::Column(c) => Some(c.clone()),
                            _ => None,
                        }
                    })
                    .collect()
            };
            let matching = matches!(how, JoinType::Inner | JoinType::Semi);
            if in_left {
                if matches!(
                    how,
                    JoinType::Inner | JoinType::Left | JoinType::Semi | JoinType::Anti
                ) {
                    out.extend(key_owners(left, keys.clone())?);
                }
                if matching && let Some(r) = across(left_on, right_on) {
                    out.extend(key_owners(right, cols(r))?);
                }
            } else if in_right && matches!(how, JoinType::Inner | JoinType::Right) {
                out.extend(key_owners(right, keys.clone())?);
                if *how == JoinType::Inner
                    && let Some(l) = across(right_on, left_on)
                {
                    out.extend(key_owners(left, cols(l))?);
                }
            }
        }
        _ => {}
    }
    Ok(out)
}

/// The cheapest reduction: over the whole key and each key column alone
/// (a subset of the keys still drops only groups the join drops), the
/// owner (see [`key_owners`]) with the fewest estimated rows, as (indices
/// of the keys used, owner, its keys).
#[allow(clippy::type_complexity)]
fn cheapest_owner(
    other: &Arc<LogicalPlan>,
    other_keys: &[Expr],
) -> Result<(Vec<usize>, Arc<LogicalPlan>, Vec<Expr>)> {
    let mut subsets: Vec<Vec<usize>> = vec![(0..other_keys.len()).collect()];
    if other_keys.len() > 1 {
        subsets.extend((0..other_keys.len()).map(|i| vec![i]));
    }
    let mut best: Option<(f64, Vec<usize>, Arc<LogicalPlan>, Vec<Expr>)> = None;
    for subset in subsets {
        let keys = subset.iter().map(|&i| other_keys[i].clone()).collect();
        for (plan, keys) in key_owners(other, keys)? {
            let rows = estimate(&plan).rows;
            // Ties go to the deeper owner (less to evaluate twice) of the
            // same keys, and to more keys (a stronger reduction).
            let better = best
                .as_ref()
                .is_none_or(|b| rows < b.0 || (rows == b.0 && subset == b.1));
            if better {
                best = Some((rows, subset.clone(), plan, keys));
            }
        }
    }
    let (_, subset, plan, keys) = best.expect("the whole key is a candidate");
    Ok((subset, plan, keys))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::lit;
    use crate::frame::LazyFrame;
    use crate::optimizer::apply_rule;
    use crate::optimizer::test_util::{rewritten, table};

    fn parts() -> LazyFrame {
        table(&["p_key", "p_brand"]).filter(col("p_brand").eq(lit(2i64)))
    }

    fn per_part() -> LazyFrame {
        table(&["l_key", "l_qty"])
            .group_by([col("l_key")])
            .agg([col("l_qty").sum().alias("total")])
    }

    #[test]
    fn aggregate_input_is_reduced_to_the_joined_keys() {
        let lf = parts().join(&per_part(), [col("p_key")], [col("l_key")], JoinType::Inner);
        let plan = rewritten(&AggregateSemiJoin, &lf);
        assert_eq!(
            plan,
            "Join Inner on [p_key = l_key]\n  \
               Filter (p_brand = 2)\n    \
                 Scan memory (3 rows)\n  \
               Aggregate keys=[l_key] aggs=[sum(l_qty) AS total]\n    \
                 Join Semi on [l_key = p_key]\n      \
                   Scan memory (3 rows)\n      \
                   Filter (p_brand = 2)\n        \
                     Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn the_reduction_uses_only_the_input_that_owns_the_keys() {
        let other = parts().join(
            &table(&["o_key", "o_part"]),
            [col("p_key")],
            [col("o_part")],
            JoinType::Inner,
        );
        let lf = other.join(&per_part(), [col("p_key")], [col("l_key")], JoinType::Inner);
        let plan = rewritten(&AggregateSemiJoin, &lf);
        assert!(
            plan.contains(
                "Join Semi on [l_key = p_key]\n      \
                   Scan memory (3 rows)\n      \
                   Filter (p_brand = 2)\n"
            ),
            "{plan}"
        );
    }

    #[test]
    fn joins_on_aggregate_values_are_left_alone() {
        let lf = parts().join(&per_part(), [col("p_key")], [col("total")], JoinType::Inner);
        let before = lf.logical_plan().to_string();
        assert_eq!(rewritten(&AggregateSemiJoin, &lf), before);
    }

    #[test]
    fn a_join_also_on_an_aggregate_value_reduces_on_the_grouping_key() {
        // TPC-H Q2's shape: `p_key = l_key and p_brand = total`.
        let lf = parts().join(
            &per_part(),
            [col("p_brand"), col("p_key")],
            [col("total"), col("l_key")],
            JoinType::Inner,
        );
        let plan = rewritten(&AggregateSemiJoin, &lf);
        assert!(
            plan.contains(
                "Aggregate keys=[l_key] aggs=[sum(l_qty) AS total]\n    \
                   Join Semi on [l_key = p_key]\n      \
                     Scan memory (3 rows)\n      \
                     Filter (p_brand = 2)\n"
            ),
            "{plan}"
        );
    }

    #[test]
    fn an_unfiltered_side_does_not_reduce() {
        let all_parts = table(&["p_key", "p_brand"]);
        let lf = all_parts.join(&per_part(), [col("p_key")], [col("l_key")], JoinType::Inner);
        let before = lf.logical_plan().to_string();
        assert_eq!(rewritten(&AggregateSemiJoin, &lf), before);
    }

    #[test]
    fn applies_once() {
        let lf = parts().join(&per_part(), [col("p_key")], [col("l_key")], JoinType::Inner);
        let once = apply_rule(&AggregateSemiJoin, lf.logical_plan()).unwrap();
        assert!(once.transformed);
        let twice = apply_rule(&AggregateSemiJoin, &once.data).unwrap();
        assert!(!twice.transformed, "{}", twice.data);
        assert_eq!(once.data.to_string(), twice.data.to_string());
    }

    #[test]
    fn applies_once_after_the_semi_join_moved_down() {
        use crate::optimizer::semi_join_pushdown::SemiJoinPushdown;
        // The aggregate's input is a join, into which the semi join moves.
        let per_part = table(&["l_key", "l_qty"])
            .join(
                &table(&["o_key", "o_day"]),
                [col("l_qty")],
                [col("o_key")],
                JoinType::Inner,
            )
            .group_by([col("l_key")])
            .agg([col("l_qty").sum().alias("total")]);
        let lf = parts().join(&per_part, [col("p_key")], [col("l_key")], JoinType::Inner);
        let mut plan = lf.logical_plan().clone();
        for _ in 0..3 {
            for rule in [&AggregateSemiJoin as &dyn OptimizerRule, &SemiJoinPushdown] {
                plan = apply_rule(rule, &plan).unwrap().data;
            }
        }
        let text = plan.to_string();
        assert_eq!(text.matches("Join Semi").count(), 1, "{text}");
        assert!(
            text.contains("Join Semi on [l_key = p_key]\n        Scan memory"),
            "{text}"
        );
    }
}
