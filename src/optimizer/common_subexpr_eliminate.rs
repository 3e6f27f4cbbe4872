//! Common subexpression elimination.
//!
//! An expression that occurs more than once among the expressions of one
//! projection or aggregation is computed once, as a column of a projection
//! below, and read by name:
//!
//! ```text
//! before: Aggregate aggs=[sum((p * (1 - d))) AS a, sum(((p * (1 - d)) * (1 + t))) AS b]
//!           Scan lineitem
//! after:  Aggregate aggs=[sum(__cse_0) AS a, sum((__cse_0 * (1 + t))) AS b]
//!           Project [p, d, t, ..., (p * (1 - d)) AS __cse_0]
//!             Scan lineitem
//! ```
//! The largest repeated expression is taken first, then the search repeats;
//! projection pushdown later drops the passed-through columns nobody reads.

use std::sync::Arc;

use super::{ApplyOrder, OptimizerRule};
use crate::error::Result;
use crate::expr::{Expr, col};
use crate::plan::{Aggregate, LogicalPlan, Project, Transformed};

/// See the module documentation.
pub struct CommonSubexprEliminate;

impl OptimizerRule for CommonSubexprEliminate {
    fn name(&self) -> &'static str {
        "common_subexpr_eliminate"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::BottomUp
    }
    fn rewrite(&self, node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        Ok(match node {
            LogicalPlan::Aggregate(Aggregate {
                input, keys, aggs, ..
            }) => {
                let mut exprs: Vec<Expr> = keys.iter().chain(&aggs).cloned().collect();
                match eliminate(&input, &mut exprs)? {
                    Some(below) => {
                        let aggs = exprs.split_off(keys.len());
                        Transformed::yes(LogicalPlan::aggregate(below, exprs, aggs))
                    }
                    None => Transformed::no(LogicalPlan::aggregate(input, keys, aggs)),
                }
            }
            LogicalPlan::Project(Project {
                input, mut exprs, ..
            }) => match eliminate(&input, &mut exprs)? {
                Some(below) => Transformed::yes(LogicalPlan::project(below, exprs)),
                None => Transformed::no(LogicalPlan::project(input, exprs)),
            },
            other => Transformed::no(other),
        })
    }
}

/// Worth computing once: not a leaf, not an aggregate or window.
fn candidate(e: &Expr) -> bool {
    !matches!(
        e,
        Expr::Column(_) | Expr::Literal(_) | Expr::Alias(..) | Expr::Wildcard
    ) && !e.contains_agg()
        && !e.contains_window()
}

/// Counts every candidate sub-expression (aggregate arguments included).
fn count(exprs: &[Expr]) -> Vec<(Expr, usize)> {
    let mut seen: Vec<(Expr, usize)> = Vec::new();
    for e in exprs {
        e.visit(&mut |n| {
            if candidate(n) {
                match seen.iter_mut().find(|(s, _)| s == n) {
                    Some((_, c)) => *c += 1,
                    None => seen.push((n.clone(), 1)),
                }
            }
        });
    }
    seen
}

fn size(e: &Expr) -> usize {
    let mut n = 0;
    e.visit(&mut |_| n += 1);
    n
}

/// Rewrites `exprs` to read repeated sub-expressions from a new projection
/// over `input`, which it returns (`None` if nothing repeats).
fn eliminate(input: &Arc<LogicalPlan>, exprs: &mut [Expr]) -> Result<Option<Arc<LogicalPlan>>> {
    let mut defs: Vec<Expr> = Vec::new();
    loop {
        let repeated = count(exprs)
            .into_iter()
            .filter(|(_, c)| *c > 1)
            .max_by_key(|(e, _)| size(e));
        let Some((common, _)) = repeated else { break };
        let name = format!("__cse_{}", defs.len());
        for e in exprs.iter_mut() {
            *e = e
                .clone()
                .transform(&mut |n| if n == common { col(name.as_str()) } else { n });
        }
        defs.push(common.alias(name));
    }
    if defs.is_empty() {
        return Ok(None);
    }
    let passthrough = input
        .schema()?
        .fields()
        .iter()
        .map(|f| col(f.name().as_str()))
        .collect::<Vec<_>>();
    Ok(Some(Arc::new(LogicalPlan::project(
        input.clone(),
        passthrough.into_iter().chain(defs).collect(),
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::lit;
    use crate::frame::LazyFrame;
    use crate::optimizer::apply_rule;
    use arrow::array::{ArrayRef, Int64Array};
    use arrow::record_batch::RecordBatch;

    #[test]
    fn repeated_aggregate_argument_is_computed_once() {
        let cols: Vec<(&str, ArrayRef)> = ["p", "d", "t"]
            .iter()
            .map(|n| (*n, Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef))
            .collect();
        let lf = LazyFrame::from_batches(vec![RecordBatch::try_from_iter(cols).unwrap()]).unwrap();
        let disc = col("p") * (lit(1) - col("d"));
        let lf = lf.agg([
            disc.clone().sum().alias("a"),
            (disc * (lit(1) + col("t"))).sum().alias("b"),
        ]);
        assert_eq!(
            lf.logical_plan().to_string(),
            "Aggregate keys=[] aggs=[sum((p * (1 - d))) AS a, sum(((p * (1 - d)) * (1 + t))) AS b]\n  Scan memory (2 rows)\n"
        );
        let after = apply_rule(&CommonSubexprEliminate, lf.logical_plan())
            .unwrap()
            .data;
        assert_eq!(
            after.to_string(),
            "Aggregate keys=[] aggs=[sum(__cse_0) AS a, sum((__cse_0 * (1 + t))) AS b]\n  Project [p, d, t, (p * (1 - d)) AS __cse_0]\n    Scan memory (2 rows)\n"
        );
    }

    #[test]
    fn nothing_repeated_nothing_changed() {
        let cols: Vec<(&str, ArrayRef)> =
            vec![("a", Arc::new(Int64Array::from(vec![1])) as ArrayRef)];
        let lf = LazyFrame::from_batches(vec![RecordBatch::try_from_iter(cols).unwrap()]).unwrap();
        let lf = lf.select([
            (col("a") + lit(1)).alias("x"),
            (col("a") * lit(2)).alias("y"),
        ]);
        let after = apply_rule(&CommonSubexprEliminate, lf.logical_plan())
            .unwrap()
            .data;
        assert_eq!(after.to_string(), lf.logical_plan().to_string());
    }
}
