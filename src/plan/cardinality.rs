//! Row-count estimates for plans, used to order joins.
//!
//! Scans know their size (Parquet footers, in-memory batches); filters
//! scale it by textbook selectivities (equality 1/10, range 1/3, LIKE 1/4,
//! independence between conjuncts). An equi-join of `L` and `R` is
//! estimated as `|L| · |R| / min(base(L), base(R))`, where `base` is the
//! unfiltered size of the relation that owns each key column: for a
//! foreign-key join the smaller base is the referenced key's table, whose
//! rows are the key's distinct values. Estimates only rank alternatives;
//! they never change results.

use super::{Join, JoinType, LogicalPlan};
use crate::expr::{Expr, Operator, ScalarValue};
use crate::plan::{Aggregate, Distinct, Filter, Project, Slice, Sort, Union, Window};

/// Rows assumed for a source whose size is unknown without reading it.
const UNKNOWN_ROWS: f64 = 1_000_000.0;

/// An estimate of a plan's output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Estimated output rows.
    pub rows: f64,
    /// Rows of the underlying relation before any filter: the number of
    /// distinct values a unique key of it can have.
    pub base: f64,
}

/// Estimates the output of `plan`.
pub fn estimate(plan: &LogicalPlan) -> Estimate {
    let same = |input: &LogicalPlan| estimate(input);
    match plan {
        LogicalPlan::Scan(scan) => {
            let base = scan
                .source
                .row_count()
                .map(|n| n as f64)
                .unwrap_or(UNKNOWN_ROWS);
            let sel: f64 = scan.filters.iter().map(selectivity).product();
            Estimate {
                rows: (base * sel).max(1.0),
                base,
            }
        }
        LogicalPlan::Filter(Filter {
            input, predicate, ..
        }) => {
            let e = estimate(input);
            Estimate {
                rows: (e.rows * selectivity(predicate)).max(1.0),
                ..e
            }
        }
        LogicalPlan::Project(Project { input, .. })
        | LogicalPlan::Sort(Sort { input, .. })
        | LogicalPlan::Window(Window { input, .. }) => same(input),
        LogicalPlan::Aggregate(Aggregate { input, keys, .. }) => {
            let rows = if keys.is_empty() {
                1.0
            } else {
                (estimate(input).rows / 10.0).max(1.0)
            };
            Estimate { rows, base: rows }
        }
        LogicalPlan::Distinct(Distinct { input, .. }) => {
            let rows = (estimate(input).rows / 2.0).max(1.0);
            Estimate { rows, base: rows }
        }
        LogicalPlan::Slice(Slice { input, len, .. }) => {
            let e = estimate(input);
            let rows = len.map_or(e.rows, |n| e.rows.min(n as f64));
            Estimate { rows, base: rows }
        }
        LogicalPlan::Union(Union { inputs, .. }) => {
            let rows = inputs.iter().map(|i| estimate(i).rows).sum();
            Estimate { rows, base: rows }
        }
        LogicalPlan::Join(Join {
            left, right, how, ..
        }) => {
            let (l, r) = (estimate(left), estimate(right));
            let rows = match how {
                JoinType::Inner => join_rows(l.rows, r.rows, l.base.min(r.base)),
                JoinType::Left => l.rows.max(join_rows(l.rows, r.rows, l.base.min(r.base))),
                JoinType::Right => r.rows.max(join_rows(l.rows, r.rows, l.base.min(r.base))),
                JoinType::Full => l.rows + r.rows,
                JoinType::Semi | JoinType::Anti => (l.rows / 2.0).max(1.0),
                JoinType::Cross => l.rows * r.rows,
            };
            Estimate { rows, base: rows }
        }
    }
}

/// An upper bound on the distinct values of `column` in `plan`'s output:
/// the width of its value range, when the column can be traced to a scan
/// whose statistics give one (`s_nationkey` spans 0..=24: at most 25).
pub fn distinct_bound(plan: &LogicalPlan, column: &str) -> Option<f64> {
    match plan {
        LogicalPlan::Scan(scan) => {
            let (lo, hi) = scan.source.int_range(column)?;
            Some((hi as f64 - lo as f64 + 1.0).max(1.0))
        }
        LogicalPlan::Filter(Filter { input, .. })
        | LogicalPlan::Sort(Sort { input, .. })
        | LogicalPlan::Slice(Slice { input, .. })
        | LogicalPlan::Window(Window { input, .. })
        | LogicalPlan::Distinct(Distinct { input, .. }) => distinct_bound(input, column),
        LogicalPlan::Project(Project { input, exprs, .. })
        | LogicalPlan::Aggregate(Aggregate {
            input, keys: exprs, ..
        }) => distinct_bound(input, super::column_passed_on(exprs, column)?),
        LogicalPlan::Join(Join { left, right, .. }) => {
            let in_left = left.schema().ok()?.index_of(column).is_ok();
            distinct_bound(if in_left { left } else { right }, column)
        }
        LogicalPlan::Union(Union { .. }) => None,
    }
}

/// Rows of an equi-join of `l` and `r` rows whose key has `distinct` values.
pub fn join_rows(l: f64, r: f64, distinct: f64) -> f64 {
    (l * r / distinct.max(1.0)).max(1.0)
}

/// Fraction of rows a predicate is expected to keep.
pub fn selectivity(e: &Expr) -> f64 {
    use Operator::*;
    match e {
        Expr::Literal(ScalarValue::Boolean(Some(true))) => 1.0,
        Expr::Literal(_) => 0.0,
        Expr::Binary { left, op, right } => match op {
            And => selectivity(left) * selectivity(right),
            Or => {
                let (a, b) = (selectivity(left), selectivity(right));
                a + b - a * b
            }
            Eq => 0.1,
            NotEq => 0.9,
            Lt | LtEq | Gt | GtEq => 1.0 / 3.0,
            _ => 0.5,
        },
        Expr::Not(inner) => 1.0 - selectivity(inner),
        Expr::IsNull(_) => 0.05,
        Expr::IsNotNull(_) => 0.95,
        Expr::InList { list, negated, .. } => {
            let s = (0.1 * list.len() as f64).min(0.5);
            if *negated { 1.0 - s } else { s }
        }
        Expr::Function(f, _) if *f == crate::functions::LIKE => 0.25,
        Expr::Function(f, _) if *f == crate::functions::NOT_LIKE => 0.75,
        _ => 0.5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{col, lit};
    use crate::optimizer::test_util::table;

    #[test]
    fn filters_scale_scans_and_joins_divide_by_the_key_domain() {
        let t = table(&["a", "b"]);
        assert_eq!(estimate(t.logical_plan()).rows, 3.0);
        let f = t
            .clone()
            .filter(col("a").eq(lit(1)).and(col("b").gt(lit(0))));
        let e = estimate(f.logical_plan());
        assert!((e.rows - 1.0).abs() < 1e-9 && e.base == 3.0);
        assert_eq!(join_rows(6e6, 4.5e5, 1.5e6), 1.8e6);
    }
}
