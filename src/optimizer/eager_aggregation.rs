//! Eager aggregation: an aggregate over a join, grouped by columns of the
//! left side and aggregating columns of the right side only, aggregates the
//! right side by its join keys first.
//!
//! Every right row joins the same left rows as every other right row with
//! its key, so the rows of one group of the aggregate are, for each left
//! row in it, all right rows with that row's key. Counting (or summing,
//! or taking the extremes of) each key's right rows once, before the join,
//! and then summing those partial counts (sums, extremes) over the group's
//! joined rows gives the same values, and the join emits one row per left
//! row and key instead of one per right row. A left join's unmatched rows
//! carry a null partial: `count` becomes `sum(coalesce(partial, 0))`, so
//! they still count 0, and `count(*)` `sum(coalesce(partial, 1))`, since
//! each is one row.
//!
//! TPC-H Q13 counts each customer's orders: 1.5M orders joined to 150K
//! customers, then grouped back to 150K; aggregated first, 100K partial
//! counts are joined.
//!
//! ```text
//! before: Aggregate keys=[c_custkey] aggs=[count(o_orderkey) AS n]
//!           Join Left on [c_custkey = o_custkey]
//!             Scan customer
//!             Scan orders
//! after:  Aggregate keys=[c_custkey] aggs=[sum(coalesce(__eager0, 0)) AS n]
//!           Join Left on [c_custkey = o_custkey]
//!             Scan customer
//!             Aggregate keys=[o_custkey] aggs=[count(o_orderkey) AS __eager0]
//!               Scan orders
//! ```
//!
//! Applies to inner and left joins without an extra join condition, with
//! plain column keys, when every grouping key is a left column and every
//! aggregate is `count(*)`, `count`, `min` or `max` of a right column, or
//! `sum` of an integer or decimal one (a float sum added up in another
//! order could differ in its last bits). Taken unless the right side's key
//! columns are known (from statistics) to have more than half as many
//! distinct values as the side has rows: grouping would then save little.

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema};

use super::{ApplyOrder, OptimizerRule, column_names};
use crate::error::Result;
use crate::expr::{AggFunc, Expr, col, lit};
use crate::functions;
use crate::plan::cardinality::{distinct_bound, estimate};
use crate::plan::{Aggregate, Filter, Join, JoinType, LogicalPlan, Project, Transformed};

/// The right side's keys must be estimated to have at most this many
/// distinct values per right row.
const MAX_DISTINCT_FRACTION: f64 = 0.5;

/// Names of the partial aggregates.
const PARTIAL: &str = "__eager";

/// See the module documentation.
pub struct EagerAggregation;

impl OptimizerRule for EagerAggregation {
    fn name(&self) -> &'static str {
        "eager_aggregation"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::BottomUp
    }
    fn rewrite(&self, node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        Ok(match eager(&node)? {
            Some(rewritten) => Transformed::yes(rewritten),
            None => Transformed::no(node),
        })
    }
}

/// `node` with its join's right side aggregated first, if it qualifies.
fn eager(node: &LogicalPlan) -> Result<Option<LogicalPlan>> {
    let LogicalPlan::Aggregate(Aggregate {
        input, keys, aggs, ..
    }) = node
    else {
        return Ok(None);
    };
    // A projection that only selects columns may sit between the two.
    let join = match input.as_ref() {
        LogicalPlan::Project(Project { input, exprs, .. })
            if exprs.iter().all(|e| matches!(e, Expr::Column(_))) =>
        {
            input
        }
        _ => input,
    };
    let LogicalPlan::Join(
        join @ Join {
            left,
            right,
            right_on,
            how: JoinType::Inner | JoinType::Left,
            filter: None,
            ..
        },
    ) = join.as_ref()
    else {
        return Ok(None);
    };
    // Aggregated already, maybe under projections and filters later rules
    // put there (or an aggregate by other keys: grouping it again would not
    // shrink it much either).
    if aggregated(right) || keys.is_empty() {
        return Ok(None);
    }
    let (ls, rs) = (left.schema()?, right.schema()?);
    // Names only one side has, so the join output keeps them unsuffixed.
    let only = |name: &str, this: &Schema, other: &Schema| {
        this.index_of(name).is_ok() && other.index_of(name).is_err()
    };
    let Some(right_keys) = column_names(right_on) else {
        return Ok(None);
    };
    let keys_on_left = keys.iter().all(|k| match k.unalias() {
        Expr::Column(c) => only(c, &ls, &rs),
        _ => false,
    });
    if right_keys.is_empty() || !keys_on_left {
        return Ok(None);
    }
    // Each aggregate as (function, the aggregate itself, output name): it
    // reads right columns only, so it is also its own partial aggregate.
    let mut parts = Vec::with_capacity(aggs.len());
    for a in aggs {
        let Expr::Agg {
            func,
            args,
            distinct: false,
        } = a.unalias()
        else {
            return Ok(None);
        };
        if ls.index_of(&format!("{PARTIAL}{}", parts.len())).is_ok() {
            return Ok(None);
        }
        match (func, args.as_slice()) {
            (AggFunc::CountStar, []) => {}
            (_, [Expr::Column(c)]) if only(c, &rs, &ls) => {
                let t = rs.field_with_name(c)?.data_type();
                let exact_sum = t.is_integer() || matches!(t, DataType::Decimal128(..));
                match func {
                    AggFunc::Count | AggFunc::Min | AggFunc::Max => {}
                    AggFunc::Sum if exact_sum => {}
                    _ => return Ok(None),
                }
            }
            _ => return Ok(None),
        }
        parts.push((*func, a.unalias().clone(), a.output_name()));
    }
    if !pays(right, &right_keys) {
        return Ok(None);
    }
    let partial = |i: usize| format!("{PARTIAL}{i}");
    let partials = LogicalPlan::aggregate(
        right.clone(),
        right_keys.iter().map(|k| col(k.as_str())).collect(),
        parts
            .iter()
            .enumerate()
            .map(|(i, (_, a, _))| a.clone().alias(partial(i)))
            .collect(),
    );
    let finals = parts
        .iter()
        .enumerate()
        .map(|(i, (func, _, name))| {
            let p = col(partial(i).as_str());
            // A left join's unmatched row has no partial: it counts 0
            // non-null right values, and 1 row.
            let unmatched = |n: i64| Expr::Function(functions::COALESCE, vec![p.clone(), lit(n)]);
            match (func, join.how) {
                (AggFunc::Count, JoinType::Left) => agg(AggFunc::Sum, unmatched(0)),
                (AggFunc::CountStar, JoinType::Left) => agg(AggFunc::Sum, unmatched(1)),
                (AggFunc::Count | AggFunc::CountStar, _) => agg(AggFunc::Sum, p),
                (f, _) => agg(*f, p),
            }
            .alias(name.as_str())
        })
        .collect();
    Ok(Some(LogicalPlan::aggregate(
        Arc::new(LogicalPlan::Join(
            join.with_inputs(left.clone(), Arc::new(partials)),
        )),
        keys.clone(),
        finals,
    )))
}

/// Whether `plan` is an aggregate, under projections and filters if any.
fn aggregated(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Aggregate(Aggregate { .. }) => true,
        LogicalPlan::Project(Project { input, .. }) | LogicalPlan::Filter(Filter { input, .. }) => {
            aggregated(input)
        }
        _ => false,
    }
}

fn agg(func: AggFunc, arg: Expr) -> Expr {
    Expr::Agg {
        func,
        args: vec![arg],
        distinct: false,
    }
}

/// Whether grouping `side` by `keys` is expected to shrink it: the product
/// of the keys' distinct-value bounds (when statistics give them all) at
/// most [`MAX_DISTINCT_FRACTION`] of its rows. Without statistics, as the
/// cardinality model assumes of every aggregate, it is expected to.
fn pays(side: &LogicalPlan, keys: &[String]) -> bool {
    let bounds: Option<Vec<f64>> = keys.iter().map(|k| distinct_bound(side, k)).collect();
    match bounds {
        Some(b) => b.iter().product::<f64>() <= MAX_DISTINCT_FRACTION * estimate(side).rows,
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::col;
    use crate::optimizer::apply_rule;
    use crate::optimizer::test_util::{rewritten, table};

    fn joined(how: JoinType) -> crate::frame::LazyFrame {
        table(&["a", "x"]).join(&table(&["b", "y"]), [col("a")], [col("b")], how)
    }

    #[test]
    fn left_join_counts_each_keys_right_rows_first() {
        let lf = joined(JoinType::Left)
            .group_by([col("a")])
            .agg([col("y").count().alias("n"), col("y").max().alias("m")]);
        assert_eq!(
            lf.logical_plan().to_string(),
            "Aggregate keys=[a] aggs=[count(y) AS n, max(y) AS m]\n  Join Left on [a = b]\n    Scan memory (3 rows)\n    Scan memory (3 rows)\n"
        );
        assert_eq!(
            rewritten(&EagerAggregation, &lf),
            "Aggregate keys=[a] aggs=[sum(coalesce(__eager0, 0)) AS n, max(__eager1) AS m]\n  Join Left on [a = b]\n    Scan memory (3 rows)\n    Aggregate keys=[b] aggs=[count(y) AS __eager0, max(y) AS __eager1]\n      Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn count_star_counts_a_left_joins_unmatched_rows_as_one() {
        let lf = joined(JoinType::Left)
            .group_by([col("a")])
            .agg([crate::expr::count_star().alias("rows")]);
        assert_eq!(
            rewritten(&EagerAggregation, &lf),
            "Aggregate keys=[a] aggs=[sum(coalesce(__eager0, 1)) AS rows]\n  Join Left on [a = b]\n    Scan memory (3 rows)\n    Aggregate keys=[b] aggs=[count(*) AS __eager0]\n      Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn inner_join_sums_partial_counts_and_sums() {
        let lf = joined(JoinType::Inner)
            .group_by([col("x")])
            .agg([col("y").sum().alias("s"), col("y").count().alias("n")]);
        assert_eq!(
            rewritten(&EagerAggregation, &lf),
            "Aggregate keys=[x] aggs=[sum(__eager0) AS s, sum(__eager1) AS n]\n  Join Inner on [a = b]\n    Scan memory (3 rows)\n    Aggregate keys=[b] aggs=[sum(y) AS __eager0, count(y) AS __eager1]\n      Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn the_whole_optimizer_aggregates_the_right_side_once() {
        let lf = joined(JoinType::Left)
            .group_by([col("a")])
            .agg([col("y").count().alias("n")]);
        let (plan, fired) =
            crate::optimizer::optimize(lf.logical_plan(), &Default::default()).unwrap();
        assert!(fired.iter().any(|f| f == "eager_aggregation"), "{fired:?}");
        assert_eq!(plan.to_string().matches("Aggregate").count(), 2, "{plan}");
    }

    #[test]
    fn aggregates_of_left_columns_means_and_right_keys_are_left_alone() {
        let cases = [
            // A left column is repeated once per matching right row.
            joined(JoinType::Inner)
                .group_by([col("a")])
                .agg([col("x").sum()]),
            // A mean is not a sum of partial means.
            joined(JoinType::Inner)
                .group_by([col("a")])
                .agg([col("y").mean()]),
            // Grouping by a right column.
            joined(JoinType::Inner)
                .group_by([col("y")])
                .agg([col("y").count()]),
            // A right join keeps unmatched right rows.
            joined(JoinType::Right)
                .group_by([col("a")])
                .agg([col("y").count()]),
        ];
        for lf in cases {
            assert!(
                !apply_rule(&EagerAggregation, lf.logical_plan())
                    .unwrap()
                    .transformed,
                "{}",
                lf.logical_plan()
            );
        }
    }

    #[test]
    fn rewritten_plans_give_the_same_rows() {
        use crate::frame::LazyFrame;
        use arrow::array::{ArrayRef, Int64Array};
        use arrow::record_batch::RecordBatch;
        let frame = |cols: Vec<(&str, Vec<Option<i64>>)>| {
            let cols: Vec<(&str, ArrayRef)> = cols
                .into_iter()
                .map(|(n, v)| (n, Arc::new(Int64Array::from(v)) as ArrayRef))
                .collect();
            LazyFrame::from_batches(vec![RecordBatch::try_from_iter(cols).unwrap()]).unwrap()
        };
        // Duplicate and null keys on both sides, unmatched rows on both.
        let l = frame(vec![
            ("a", vec![Some(1), Some(1), Some(2), Some(3), None, Some(7)]),
            (
                "x",
                vec![Some(10), Some(11), Some(10), Some(12), Some(13), Some(10)],
            ),
        ]);
        let r = frame(vec![
            (
                "b",
                vec![Some(1), Some(1), Some(1), Some(2), None, Some(9), Some(3)],
            ),
            (
                "y",
                vec![Some(5), None, Some(6), Some(7), Some(8), Some(9), None],
            ),
        ]);
        for how in [JoinType::Inner, JoinType::Left] {
            for key in ["a", "x"] {
                let lf = l
                    .join(&r, [col("a")], [col("b")], how)
                    .group_by([col(key)])
                    .agg([
                        col("y").count().alias("n"),
                        crate::expr::count_star().alias("rows"),
                        col("y").sum().alias("s"),
                        col("y").min().alias("lo"),
                        col("y").max().alias("hi"),
                    ]);
                let plan = lf.logical_plan();
                let eager = apply_rule(&EagerAggregation, plan).unwrap().data;
                assert_ne!(eager.to_string(), plan.to_string(), "{how:?} by {key}");
                let run = |p: &LogicalPlan| {
                    let physical = crate::physical::planner::create_physical_plan(p).unwrap();
                    let batches = crate::exec::execute(&physical).unwrap();
                    let df = crate::frame::DataFrame::new(physical.schema(), batches);
                    let mut rows: Vec<String> = df.to_string().lines().map(String::from).collect();
                    rows.sort();
                    rows
                };
                assert_eq!(run(&eager), run(plan), "{how:?} by {key}");
            }
        }
    }
}
