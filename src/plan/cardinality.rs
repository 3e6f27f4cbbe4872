//! Row-count estimates for plans, used to order joins, and the order in
//! which a scan applies its filters.
//!
//! Scans know their size (Parquet footers, in-memory batches); filters
//! scale it by textbook selectivities (equality 1/10, range 1/3, LIKE 1/4,
//! independence between conjuncts), except a scan's comparisons of an
//! integer or date column with constants where statistics give the column's
//! value range: those keep the share of the range they leave, all of one
//! column's bounds taken together (`scan_selectivity`). An equi-join of
//! `L` and `R` is estimated as `|L| · |R| / min(base(L), base(R))`, where `base` is the
//! unfiltered size of the relation that owns each key column: for a
//! foreign-key join the smaller base is the referenced key's table, whose
//! rows are the key's distinct values. Estimates only rank alternatives;
//! they never change results.

use super::{Join, JoinType, LogicalPlan};
use crate::expr::{Expr, Operator, ScalarValue};
use crate::plan::{Aggregate, Distinct, Filter, Project, Scan, Slice, Sort, Union, Window};

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
            let sel = scan_selectivity(scan);
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

/// Fraction of a scan's rows its filters are expected to keep. Filters
/// that bound an integer or date column by constants (`d >= a`, `d < b`,
/// `d = c`) keep the share of the column's value range (from the source's
/// statistics) between the bounds of all of them together: at TPC-H SF 10
/// `l_shipdate` in one month of its seven years keeps 1.2% of lineitem
/// (749K rows), where two independent ranges of 1/3 each said 11% (6.7M),
/// more than the 2M parts it meets in Q14. Other filters, and columns
/// without statistics, take [`selectivity`].
fn scan_selectivity(scan: &Scan) -> f64 {
    let others: f64 = (scan.filters.iter())
        .filter(|f| column_bounds(f).is_none())
        .map(selectivity)
        .product();
    let bounded = bounded_columns(scan, scan.filters.iter());
    bounded.iter().map(BoundedColumn::share).product::<f64>() * others
}

/// `scan`'s filters in the order a reader should apply them: first those
/// that bound a column with statistics by constants (integer comparisons,
/// which cannot fail), the most selective column's first and each column's
/// together (`scan_selectivity`); then the rest in their own order. A
/// filter then reads only the rows the ones before it kept: TPC-H Q12's
/// `l_receiptdate` year (14% of lineitem) before its `l_shipmode IN (..)`
/// string test (29%) took its SF 10 run from 0.78 s to 0.63 s.
pub fn scan_filters_in_order(scan: &Scan) -> Vec<Expr> {
    // A bound through a cast keeps its place: the cast may fail where an
    // earlier filter would have dropped the row.
    let plain = |f: &Expr| {
        matches!(f, Expr::Binary { left, right, .. }
            if matches!(**left, Expr::Column(_)) || matches!(**right, Expr::Column(_)))
    };
    let mut first = bounded_columns(scan, scan.filters.iter().filter(|f| plain(f)));
    first.retain(|c| c.range.is_some());
    first.sort_by(|a, b| a.share().total_cmp(&b.share()));
    let rank = |f: &Expr| {
        let (column, _) = column_bounds(f).filter(|_| plain(f))?;
        first.iter().position(|c| c.name == column)
    };
    let mut ordered: Vec<(usize, &Expr)> = (scan.filters.iter())
        .map(|f| (rank(f).unwrap_or(first.len()), f))
        .collect();
    // Stable: each column's filters, and the others, keep their order.
    ordered.sort_by_key(|(rank, _)| *rank);
    ordered.into_iter().map(|(_, f)| f.clone()).collect()
}

/// A column that filters bound by constants.
struct BoundedColumn<'a> {
    name: &'a str,
    /// The bounds of all of them together.
    bounds: ValueBounds,
    /// Their textbook selectivities, multiplied.
    textbook: f64,
    /// The column's value range, from the source's statistics.
    range: Option<(i64, i64)>,
}

impl BoundedColumn<'_> {
    /// The share of rows the bounds keep: of the range where there is one.
    fn share(&self) -> f64 {
        self.range
            .map_or(self.textbook, |range| self.bounds.share_of(range))
    }
}

/// The columns that `filters` of `scan` bound by constants, each once,
/// with its range looked up once.
fn bounded_columns<'a>(
    scan: &Scan,
    filters: impl Iterator<Item = &'a Expr>,
) -> Vec<BoundedColumn<'a>> {
    let mut columns: Vec<BoundedColumn<'a>> = Vec::new();
    for filter in filters {
        let Some((name, bounds)) = column_bounds(filter) else {
            continue;
        };
        match columns.iter_mut().find(|c| c.name == name) {
            Some(c) => {
                c.bounds = c.bounds.intersect(bounds);
                c.textbook *= selectivity(filter);
            }
            None => columns.push(BoundedColumn {
                name,
                bounds,
                textbook: selectivity(filter),
                range: None,
            }),
        }
    }
    for c in &mut columns {
        c.range = scan.source.int_range(c.name);
    }
    columns
}

/// Inclusive bounds on an integer-like column's values.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ValueBounds {
    low: i64,
    high: i64,
}

impl ValueBounds {
    fn intersect(self, other: ValueBounds) -> ValueBounds {
        ValueBounds {
            low: self.low.max(other.low),
            high: self.high.min(other.high),
        }
    }

    /// The share of the values `low..=high` of `range` within these
    /// bounds, values taken as evenly spread.
    fn share_of(self, (low, high): (i64, i64)) -> f64 {
        let kept = self.intersect(ValueBounds { low, high });
        let width = |b: ValueBounds| (b.high as f64 - b.low as f64 + 1.0).max(0.0);
        width(kept) / width(ValueBounds { low, high }).max(1.0)
    }
}

/// The column `filter` compares with an integer or date constant, and the
/// values it lets through; `None` for any other filter.
fn column_bounds(filter: &Expr) -> Option<(&str, ValueBounds)> {
    let Expr::Binary { left, op, right } = filter else {
        return None;
    };
    let (column, op, value) = match (column_of(left), constant_of(right)) {
        (Some(c), Some(v)) => (c, *op, v),
        _ => (column_of(right)?, op.swap()?, constant_of(left)?),
    };
    let (low, high) = match op {
        Operator::Eq => (value, value),
        Operator::Lt => (i64::MIN, value.saturating_sub(1)),
        Operator::LtEq => (i64::MIN, value),
        Operator::Gt => (value.saturating_add(1), i64::MAX),
        Operator::GtEq => (value, i64::MAX),
        _ => return None,
    };
    Some((column, ValueBounds { low, high }))
}

/// The column `e` reads, looking through casts (which keep integers'
/// and dates' order where estimates need it).
fn column_of(e: &Expr) -> Option<&str> {
    match e {
        Expr::Column(name) => Some(name),
        Expr::Cast(inner, _) => column_of(inner),
        _ => None,
    }
}

/// `e` as an integer, when it is a non-null integer or date constant.
fn constant_of(e: &Expr) -> Option<i64> {
    match e {
        Expr::Literal(ScalarValue::Int64(Some(v))) => Some(*v),
        Expr::Literal(ScalarValue::Date32(Some(d))) => Some(i64::from(*d)),
        _ => None,
    }
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

    /// A scan of a Parquet file whose column `k` holds 0..1000 (its
    /// statistics say so) and `s` strings, with `filters`.
    fn parquet_scan(dir: &tempfile::TempDir, filters: Vec<Expr>) -> LogicalPlan {
        use arrow::array::{ArrayRef, Int64Array, StringArray};
        use std::sync::Arc;
        let path = dir.path().join("t.parquet");
        if !path.exists() {
            let k: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1000));
            let s: ArrayRef = Arc::new(StringArray::from_iter_values(
                (0..1000).map(|i| format!("{i}")),
            ));
            let batch =
                arrow::record_batch::RecordBatch::try_from_iter([("k", k), ("s", s)]).unwrap();
            let file = std::fs::File::create(&path).unwrap();
            let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
        }
        LogicalPlan::Scan(Scan {
            source: crate::io::ScanSource::parquet(&path).unwrap(),
            projection: None,
            filters,
        })
    }

    #[test]
    fn the_most_selective_bounded_column_is_filtered_first() {
        let dir = tempfile::tempdir().unwrap();
        let s_like = Expr::Function(crate::functions::LIKE, vec![col("s"), lit("1%")]);
        let filters = vec![
            s_like.clone(),
            col("k").gt_eq(lit(100i64)),
            col("s").eq(lit("7")),
            col("k").lt(lit(200i64)),
        ];
        let LogicalPlan::Scan(scan) = parquet_scan(&dir, filters) else {
            unreachable!()
        };
        let ordered = scan_filters_in_order(&scan);
        assert_eq!(
            ordered,
            vec![
                col("k").gt_eq(lit(100i64)),
                col("k").lt(lit(200i64)),
                s_like,
                col("s").eq(lit("7")),
            ]
        );
        // A cast may fail: a bound through one keeps its place.
        let cast = Expr::Cast(Box::new(col("k")), arrow::datatypes::DataType::Int32);
        let filters = vec![col("s").eq(lit("7")), cast.clone().lt(lit(5i64))];
        let LogicalPlan::Scan(scan) = parquet_scan(&dir, filters.clone()) else {
            unreachable!()
        };
        assert_eq!(scan_filters_in_order(&scan), filters);
    }

    #[test]
    fn bounds_on_a_column_with_statistics_keep_their_share_of_its_range() {
        let dir = tempfile::tempdir().unwrap();
        let rows = |filters: Vec<Expr>| estimate(&parquet_scan(&dir, filters)).rows;
        assert_eq!(rows(vec![]), 1000.0);
        // Both bounds of one column together: 100 of 1,000 values.
        assert_eq!(
            rows(vec![col("k").gt_eq(lit(100i64)), col("k").lt(lit(200i64))]),
            100.0
        );
        // The constant on the left, and one bound past the range.
        assert_eq!(
            rows(vec![lit(900i64).lt_eq(col("k")), col("k").lt(lit(5000i64))]),
            100.0
        );
        assert_eq!(rows(vec![col("k").eq(lit(7i64))]), 1.0);
        // Disjoint bounds keep nothing (at least one row is estimated).
        assert_eq!(
            rows(vec![col("k").gt(lit(600i64)), col("k").lt(lit(300i64))]),
            1.0
        );
        // Other filters keep their textbook share beside the range's.
        let mixed = rows(vec![col("k").lt(lit(500i64)), col("s").eq(lit("7"))]);
        assert!((mixed - 50.0).abs() < 1e-9, "{mixed}");
        let strings = rows(vec![col("s").gt(lit("5")), col("s").lt(lit("6"))]);
        assert!((strings - 1000.0 / 9.0).abs() < 1e-9, "{strings}");
    }
}
