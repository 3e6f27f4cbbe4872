//! Constant folding and boolean simplification.
//!
//! Rewrites every expression of the plan bottom-up:
//! - operations on constants are computed once: `1 + 2` → `3`,
//!   `DATE '1998-12-01' - INTERVAL '90' DAY` → `DATE '1998-09-02'`;
//! - `x AND true` → `x`, `x AND false` → `false`, `x OR true` → `true`,
//!   `x OR false` → `x`, `NOT NOT x` → `x`;
//! - a filter whose predicate folds to `true` is removed (predicate
//!   pushdown folds what it pushes into a scan with [`fold`]);
//! - contradictory bounds on one column (`a > 5 AND a < 3`, `a = 1 AND
//!   a = 2`) make the whole conjunction `false` (scans then read nothing).
//!
//! ```text
//! before: Filter (l_shipdate <= (DATE '1998-12-01' - INTERVAL '90 days') AND true)
//! after:  Filter (l_shipdate <= DATE '1998-09-02')
//! ```
//! Folding runs the same kernels as execution, on a one-row batch, so the
//! folded constant is exactly what each row would have computed.

use std::sync::Arc;

use arrow::datatypes::Schema;
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use super::{ApplyOrder, OptimizerRule};
use crate::error::Result;
use crate::expr::{Expr, Operator, ScalarValue};
use crate::physical_expr::PhysicalExpr;
use crate::plan::{Aggregate, Filter, LogicalPlan, Project, Transformed};

/// See the module documentation.
pub struct SimplifyExpressions;

fn is_bool(e: &Expr, v: bool) -> bool {
    matches!(e, Expr::Literal(ScalarValue::Boolean(Some(b))) if *b == v)
}

/// `e` with its constant parts computed and Boolean identities applied.
pub(super) fn fold(e: Expr) -> Expr {
    e.transform(&mut |node| match node {
        Expr::Binary {
            left,
            op: Operator::And,
            right,
        } if is_bool(&left, true) => *right,
        Expr::Binary {
            left,
            op: Operator::And,
            right,
        } if is_bool(&right, true) => *left,
        Expr::Binary {
            left,
            op: Operator::And,
            right,
        } if is_bool(&left, false) || is_bool(&right, false) => {
            Expr::Literal(ScalarValue::Boolean(Some(false)))
        }
        Expr::Binary {
            left,
            op: Operator::Or,
            right,
        } if is_bool(&left, false) => *right,
        Expr::Binary {
            left,
            op: Operator::Or,
            right,
        } if is_bool(&right, false) => *left,
        Expr::Binary {
            left,
            op: Operator::Or,
            right,
        } if is_bool(&left, true) || is_bool(&right, true) => {
            Expr::Literal(ScalarValue::Boolean(Some(true)))
        }
        Expr::Not(inner) => match *inner {
            Expr::Not(x) => *x,
            other => evaluate_constant(Expr::Not(Box::new(other))),
        },
        other => evaluate_constant(other),
    })
}

/// Computes an expression whose children are all constants.
fn evaluate_constant(e: Expr) -> Expr {
    let all_literal =
        !e.children().is_empty() && e.children().iter().all(|c| matches!(c, Expr::Literal(_)));
    if !all_literal || matches!(e, Expr::Agg { .. } | Expr::Alias(..)) {
        return e;
    }
    let schema = Schema::empty();
    let Ok(p) = PhysicalExpr::compile(&e, &schema) else {
        return e;
    };
    let options = RecordBatchOptions::new().with_row_count(Some(1));
    let Ok(batch) = RecordBatch::try_new_with_options(Arc::new(schema), vec![], &options) else {
        return e;
    };
    match crate::physical_expr::eval::evaluate_array(&p, &batch) {
        Ok(a) => match ScalarValue::from_array(&a, 0) {
            // Keep the type exactly: only fold when the literal round-trips it.
            Some(v) if v.data_type() == *a.data_type() => Expr::Literal(v),
            _ => e,
        },
        Err(_) => e,
    }
}

/// Folds `exprs`, and says whether any changed.
fn fold_all(exprs: Vec<Expr>) -> Transformed<Vec<Expr>> {
    let folded: Vec<Expr> = exprs.iter().cloned().map(|e| keep_name(e, fold)).collect();
    Transformed::compared(&exprs, folded)
}

fn simplify_node(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    Ok(match plan {
        LogicalPlan::Filter(Filter {
            input, predicate, ..
        }) => {
            let folded = fold(predicate.clone());
            let folded = if contradictory(&folded) {
                Expr::Literal(ScalarValue::Boolean(Some(false)))
            } else {
                folded
            };
            if is_bool(&folded, true) {
                return Ok(Transformed::yes(Arc::unwrap_or_clone(input)));
            }
            let changed = folded != predicate;
            let node = LogicalPlan::filter(input, folded);
            Transformed {
                data: node,
                transformed: changed,
            }
        }
        LogicalPlan::Project(Project { input, exprs, .. }) => {
            let t = fold_all(exprs);
            Transformed {
                data: LogicalPlan::project(input, t.data),
                transformed: t.transformed,
            }
        }
        LogicalPlan::Aggregate(Aggregate {
            input, keys, aggs, ..
        }) => {
            let (keys, aggs) = (fold_all(keys), fold_all(aggs));
            Transformed {
                transformed: keys.transformed || aggs.transformed,
                data: LogicalPlan::aggregate(input, keys.data, aggs.data),
            }
        }
        other => Transformed::no(other),
    })
}

/// Orders two constants of the same kind (None if they are not comparable).
fn compare(a: &ScalarValue, b: &ScalarValue) -> Option<std::cmp::Ordering> {
    use ScalarValue::*;
    match (a, b) {
        (Int64(Some(x)), Int64(Some(y))) => Some(x.cmp(y)),
        (Float64(Some(x)), Float64(Some(y))) => x.partial_cmp(y),
        (Date32(Some(x)), Date32(Some(y))) => Some(x.cmp(y)),
        (Utf8(Some(x)), Utf8(Some(y))) => Some(x.cmp(y)),
        (Decimal128(Some(x), _, s1), Decimal128(Some(y), _, s2)) if s1 == s2 => Some(x.cmp(y)),
        _ => None,
    }
}

/// True if the conjuncts bound one column to an empty range.
fn contradictory(predicate: &Expr) -> bool {
    use std::cmp::Ordering::*;
    // (column, op, constant) with the column on the left.
    let mut bounds: Vec<(&str, Operator, &ScalarValue)> = Vec::new();
    let conjuncts = predicate.clone().split_conjunction();
    for c in &conjuncts {
        if let Expr::Binary { left, op, right } = c {
            match (left.as_ref(), right.as_ref()) {
                (Expr::Column(name), Expr::Literal(v)) if op.is_comparison() => {
                    bounds.push((name, *op, v))
                }
                (Expr::Literal(v), Expr::Column(name)) if op.is_comparison() => {
                    if let Some(op) = op.swap() {
                        bounds.push((name, op, v))
                    }
                }
                _ => {}
            }
        }
    }
    // Two bounds on the same column that no value satisfies together.
    let empty = |(o1, v1): (Operator, &ScalarValue), (o2, v2): (Operator, &ScalarValue)| -> bool {
        let Some(ord) = compare(v1, v2) else {
            return false;
        };
        match (o1, o2) {
            (Operator::Eq, Operator::Eq) => ord != Equal,
            (Operator::Eq, Operator::Lt) => ord != Less,
            (Operator::Eq, Operator::LtEq) => ord == Greater,
            (Operator::Eq, Operator::Gt) => ord != Greater,
            (Operator::Eq, Operator::GtEq) => ord == Less,
            (Operator::Gt | Operator::GtEq, Operator::Lt | Operator::LtEq) => {
                ord == Greater || (ord == Equal && !(o1 == Operator::GtEq && o2 == Operator::LtEq))
            }
            _ => false,
        }
    };
    // The check compares every pair: past this many bounds (generated
    // predicates) it is skipped, which only forgoes the shortcut; the
    // filter itself still runs.
    const MAX_BOUNDS: usize = 64;
    if bounds.len() > MAX_BOUNDS {
        return false;
    }
    // Constants of another type than the column's would be cast at run
    // time; `compare` only orders identical kinds, so mixed ones never match.
    bounds.iter().enumerate().any(|(i, (c1, o1, v1))| {
        bounds[i + 1..].iter().any(|(c2, o2, v2)| {
            c1 == c2 && (empty((*o1, v1), (*o2, v2)) || empty((*o2, v2), (*o1, v1)))
        })
    })
}

/// Folds `e` but keeps its output name.
fn keep_name(e: Expr, f: impl Fn(Expr) -> Expr) -> Expr {
    let name = e.output_name();
    let folded = f(e);
    if folded.output_name() == name {
        folded
    } else {
        folded.unalias().clone().alias(name)
    }
}

impl OptimizerRule for SimplifyExpressions {
    fn name(&self) -> &'static str {
        "simplify_expressions"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::BottomUp
    }
    fn rewrite(&self, node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        simplify_node(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{col, date, lit};
    use crate::frame::LazyFrame;
    use crate::optimizer::apply_rule;

    fn plan() -> LazyFrame {
        let b = RecordBatch::try_from_iter(vec![(
            "d",
            Arc::new(arrow::array::Date32Array::from(vec![0, 10_000])) as arrow::array::ArrayRef,
        )])
        .unwrap();
        LazyFrame::from_batches(vec![b]).unwrap()
    }

    #[test]
    fn folds_constants_and_boolean_identities() {
        let iv = ScalarValue::Interval {
            months: 0,
            days: 90,
            nanos: 0,
        };
        let lf = plan().filter(
            col("d")
                .lt_eq(lit(date("1998-12-01")) - lit(iv))
                .and(lit(true)),
        );
        let before = lf.logical_plan().to_string();
        let after = apply_rule(&SimplifyExpressions, lf.logical_plan())
            .unwrap()
            .data
            .to_string();
        assert_eq!(
            before.lines().next().unwrap(),
            "Filter ((d <= (DATE '1998-12-01' - INTERVAL '0 months 90 days 0 ns')) AND true)"
        );
        assert_eq!(
            after.lines().next().unwrap(),
            "Filter (d <= DATE '1998-09-02')"
        );
    }

    #[test]
    fn contradictory_bounds_become_false() {
        let lf = plan().filter(
            col("d")
                .gt(lit(date("1995-01-01")))
                .and(col("d").lt(lit(date("1994-01-01")))),
        );
        let after = apply_rule(&SimplifyExpressions, lf.logical_plan())
            .unwrap()
            .data
            .to_string();
        assert_eq!(after.lines().next().unwrap(), "Filter false");
        // Touching bounds that admit one value stay.
        let lf = plan().filter(
            col("d")
                .gt_eq(lit(date("1995-01-01")))
                .and(col("d").lt_eq(lit(date("1995-01-01")))),
        );
        let after = apply_rule(&SimplifyExpressions, lf.logical_plan())
            .unwrap()
            .data
            .to_string();
        assert!(after.starts_with("Filter ((d >="), "{after}");
        assert_eq!(lf.collect().unwrap().num_rows(), 0);
    }

    #[test]
    fn removes_always_true_filter() {
        let lf = plan().filter(lit(1).lt(lit(2)).or(col("d").is_null()));
        let after = apply_rule(&SimplifyExpressions, lf.logical_plan())
            .unwrap()
            .data
            .to_string();
        assert_eq!(after.trim(), "Scan memory (2 rows)");
    }
}
