//! A scan's pushed-down filters, applied as the scan reads, and what they
//! have kept so far.
//!
//! The kept fraction decides how a Parquet row group is decoded: when the
//! filters keep few rows, decoding the filter columns first and the other
//! columns only for the rows that pass (late materialization) saves most of
//! the decoding; when they keep most rows, it only adds a second pass over
//! the filter columns. The first row groups are read the plain way and
//! measured; later ones follow what was seen, so the choice adapts to the
//! data instead of trusting an estimate. Kept rows must also come in runs
//! (data clustered on the filtered column): the reader decodes scattered
//! rows in full anyway.
//!
//! At the other end, a filter that keeps nearly every row costs a copy of
//! every column for little gain; a consumer that can skip rows itself (an
//! aggregation) asks for [`ScanFilter::select`] and gets such batches whole
//! with the kept rows' indices ([`Selected`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::{Field, Schema};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use super::DictCodes;
use crate::error::Result;
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::{evaluate_mask, keep_rows};

/// Below this kept fraction a row group is decoded late-materialized.
pub const LATE_MATERIALIZATION_MAX_SELECTIVITY: f64 = 0.2;

/// Kept rows must come in runs at least this long on average: the Parquet
/// reader skips runs of rows, but for scattered rows it decodes everything
/// and masks (arrow-rs `RowSelectionPolicy::Auto`), so late
/// materialization would only decode the filter columns twice.
pub const LATE_MATERIALIZATION_MIN_RUN: usize = 64;

/// At least this fraction of a batch's rows must pass for
/// [`ScanFilter::select`] to hand the batch on whole with the kept rows'
/// indices instead of copying them out: copying nearly every row of every
/// column was 11-14% of TPC-H Q1's samples (`perf record`), while the
/// consumer's extra work on the rejected rows is at most as large as the
/// rejected fraction.
pub const SELECTION_MIN_KEPT: f64 = 0.75;

/// A batch from a scan and, where its filters kept most but not all of its
/// rows, the kept rows' indices (ascending); `None` when every row is kept.
pub struct Selected {
    /// The rows read (all of them, where `rows` is `Some`).
    pub batch: RecordBatch,
    /// The indices of the rows that passed the filters.
    pub rows: Option<Vec<u32>>,
    /// Dictionary codes of some columns of `batch`, one per row of it, by
    /// column index (those the consumer asked for and the scan had).
    pub codes: Vec<(usize, DictCodes)>,
}

impl Selected {
    /// The batch itself: every row passed.
    pub fn all(batch: RecordBatch) -> Self {
        Selected {
            batch,
            rows: None,
            codes: vec![],
        }
    }

    /// Number of selected rows.
    pub fn num_rows(&self) -> usize {
        self.rows.as_ref().map_or(self.batch.num_rows(), Vec::len)
    }

    /// The codes of column `column`, if the scan handed them on.
    pub fn codes_of(&self, column: usize) -> Option<&DictCodes> {
        self.codes
            .iter()
            .find(|(c, _)| *c == column)
            .map(|(_, d)| d)
    }

    /// The selected rows copied out into a batch of their own.
    pub fn materialize(self) -> Result<RecordBatch> {
        Ok(match self.rows {
            None => self.batch,
            Some(rows) => arrow::compute::take_record_batch(
                &self.batch,
                &arrow::array::UInt32Array::from(rows),
            )?,
        })
    }
}

/// What [`ScanFilter::keep_decoding`] kept of a row group.
pub struct FilteredColumns {
    /// The rows that passed, ascending.
    pub kept: Vec<u32>,
    /// The columns the filters read, `(column, values of the kept rows)`,
    /// ascending by column.
    pub columns: Vec<(usize, ArrayRef)>,
}

/// Filters over a scan's projected schema, with counts of rows in and out.
#[derive(Debug, Default)]
pub struct ScanFilter {
    exprs: Vec<PhysicalExpr>,
    rows_in: AtomicUsize,
    rows_out: AtomicUsize,
    /// Runs of consecutive kept rows seen by [`ScanFilter::apply`].
    runs_out: AtomicUsize,
}

impl ScanFilter {
    /// Filters to apply, all of which must hold.
    pub fn new(exprs: Vec<PhysicalExpr>) -> Self {
        ScanFilter {
            exprs,
            ..Default::default()
        }
    }

    /// Adds a filter, checked after the others.
    pub fn push(&mut self, expr: PhysicalExpr) {
        self.exprs.push(expr);
    }

    /// Adds a filter, checked before the others.
    pub fn push_first(&mut self, expr: PhysicalExpr) {
        self.exprs.insert(0, expr);
    }

    /// The filter expressions.
    pub fn exprs(&self) -> &[PhysicalExpr] {
        &self.exprs
    }

    /// Keeps the rows of `batch` that pass every filter; `None` when none do.
    pub fn apply(&self, batch: RecordBatch) -> Result<Option<RecordBatch>> {
        self.filter(batch)
    }

    /// As [`ScanFilter::apply`], but a batch with one filter that keeps at
    /// least [`SELECTION_MIN_KEPT`] of its rows comes back whole, with the
    /// indices of the kept rows, for a consumer that can skip rows itself
    /// (an aggregation). With several filters the batch narrows after each,
    /// so a later filter never sees rows an earlier one rejected.
    pub fn select(&self, batch: RecordBatch) -> Result<Option<Selected>> {
        let [only] = self.exprs.as_slice() else {
            return Ok(self.filter(batch)?.map(Selected::all));
        };
        let mask = evaluate_mask(only, &batch)?;
        let (rows_in, kept) = (batch.num_rows(), mask.true_count());
        self.record(rows_in, kept);
        self.runs_out
            .fetch_add(mask.values().set_slices().count(), Ordering::Relaxed);
        if kept < rows_in && kept as f64 >= SELECTION_MIN_KEPT * rows_in as f64 {
            let rows = mask.values().set_indices().map(|i| i as u32).collect();
            return Ok(Some(Selected {
                batch,
                rows: Some(rows),
                codes: vec![],
            }));
        }
        Ok(keep_rows(batch, &mask)?.map(Selected::all))
    }

    /// [`ScanFilter::select`] with `select`, else [`ScanFilter::apply`].
    pub fn filter_or_select(&self, batch: RecordBatch, select: bool) -> Result<Option<Selected>> {
        if select {
            self.select(batch)
        } else {
            Ok(self.filter(batch)?.map(Selected::all))
        }
    }

    fn filter(&self, mut batch: RecordBatch) -> Result<Option<RecordBatch>> {
        let rows_in = batch.num_rows();
        // Runs are counted on the first filter's mask only: later masks are
        // over fewer rows, and one mask is enough to tell runs from scatter.
        let mut runs = 0;
        for (i, e) in self.exprs.iter().enumerate() {
            let mask = evaluate_mask(e, &batch)?;
            if i == 0 {
                runs = mask.values().set_slices().count();
            }
            match keep_rows(batch, &mask)? {
                Some(kept) => batch = kept,
                None => {
                    self.record(rows_in, 0);
                    return Ok(None);
                }
            }
        }
        self.record(rows_in, batch.num_rows());
        self.runs_out.fetch_add(runs, Ordering::Relaxed);
        Ok(Some(batch))
    }

    /// Runs the filters over a row group of `rows_in` rows whose columns
    /// are decoded on demand: before each filter, `decode(c, kept)` gives
    /// each column `c` it reads that no earlier filter read, for just the
    /// rows kept so far (`None`: every row), so a column read only by a
    /// later filter is decoded only for the rows the earlier ones kept.
    /// Narrows after each filter as [`ScanFilter::apply`] does and counts
    /// rows as it does. Returns the indices of the rows that passed and the
    /// columns decoded, for those rows (ascending by column), or `None`
    /// when no row passed.
    pub fn keep_decoding(
        &self,
        rows_in: usize,
        mut decode: impl FnMut(usize, Option<&[u32]>) -> Result<ArrayRef>,
    ) -> Result<Option<FilteredColumns>> {
        let mut kept: Option<Vec<u32>> = None;
        let mut columns: Vec<(usize, ArrayRef)> = Vec::new();
        for e in &self.exprs {
            for c in e.columns() {
                if let Err(at) = columns.binary_search_by_key(&c, |(i, _)| *i) {
                    columns.insert(at, (c, decode(c, kept.as_deref())?));
                }
            }
            let position = |c: usize| {
                columns
                    .binary_search_by_key(&c, |(i, _)| *i)
                    .expect("every column the filter reads is decoded")
            };
            let fields: Vec<Field> = columns
                .iter()
                .map(|(c, a)| Field::new(format!("c{c}"), a.data_type().clone(), true))
                .collect();
            let rows = kept.as_ref().map_or(rows_in, Vec::len);
            let batch = RecordBatch::try_new_with_options(
                Arc::new(Schema::new(fields)),
                columns.iter().map(|(_, a)| a.clone()).collect(),
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )?;
            let mask = evaluate_mask(&e.remap_columns(&position), &batch)?;
            kept = Some(match kept {
                None => mask.values().set_indices().map(|i| i as u32).collect(),
                Some(k) => mask.values().set_indices().map(|i| k[i]).collect(),
            });
            match keep_rows(batch, &mask)? {
                Some(b) => {
                    for ((_, a), narrowed) in columns.iter_mut().zip(b.columns()) {
                        *a = narrowed.clone();
                    }
                }
                None => {
                    self.record(rows_in, 0);
                    return Ok(None);
                }
            }
        }
        let kept = kept.unwrap_or_else(|| (0..rows_in as u32).collect());
        let runs = 1 + kept.windows(2).filter(|w| w[1] != w[0] + 1).count();
        self.record(rows_in, kept.len());
        self.runs_out.fetch_add(runs, Ordering::Relaxed);
        Ok(Some(FilteredColumns { kept, columns }))
    }

    /// Counts rows that were filtered elsewhere (by the Parquet reader).
    pub fn record(&self, rows_in: usize, rows_out: usize) {
        self.rows_in.fetch_add(rows_in, Ordering::Relaxed);
        self.rows_out.fetch_add(rows_out, Ordering::Relaxed);
    }

    /// The fraction of rows kept so far; `None` before any row was seen.
    pub fn selectivity(&self) -> Option<f64> {
        let rows_in = self.rows_in.load(Ordering::Relaxed);
        (rows_in > 0).then(|| self.rows_out.load(Ordering::Relaxed) as f64 / rows_in as f64)
    }

    /// Whether the filters have kept few enough rows so far, in long
    /// enough runs, that decoding the other columns only for the survivors
    /// pays.
    pub fn prefers_late_materialization(&self) -> bool {
        let runs = self.runs_out.load(Ordering::Relaxed).max(1);
        !self.exprs.is_empty()
            && self
                .selectivity()
                .is_some_and(|s| s < LATE_MATERIALIZATION_MAX_SELECTIVITY)
            && self.rows_out.load(Ordering::Relaxed) / runs >= LATE_MATERIALIZATION_MIN_RUN
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;
    use crate::expr::{col, lit};

    fn int_batch(n: i64) -> (Arc<Schema>, RecordBatch) {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(0..n))],
        )
        .unwrap();
        (schema, batch)
    }

    #[test]
    fn scattered_rows_are_not_late_materialized() {
        let (schema, batch) = int_batch(10_000);
        let every_tenth = (col("a") % lit(10i64)).eq(lit(0i64));
        let f = ScanFilter::new(vec![PhysicalExpr::compile(&every_tenth, &schema).unwrap()]);
        assert_eq!(f.apply(batch).unwrap().unwrap().num_rows(), 1_000);
        assert_eq!(f.selectivity(), Some(0.1));
        assert!(!f.prefers_late_materialization());
    }

    #[test]
    fn keeps_passing_rows_and_learns_selectivity() {
        let (schema, batch) = int_batch(10_000);
        let f = ScanFilter::new(vec![
            PhysicalExpr::compile(&col("a").lt(lit(1_000i64)), &schema).unwrap(),
        ]);
        assert_eq!(f.selectivity(), None);
        assert!(!f.prefers_late_materialization());
        let out = f.apply(batch).unwrap().unwrap();
        assert_eq!(out.num_rows(), 1_000);
        assert_eq!(f.selectivity(), Some(0.1));
        assert!(f.prefers_late_materialization());
        assert!(!ScanFilter::new(vec![]).prefers_late_materialization());
    }

    #[test]
    fn select_passes_whole_batches_with_indices_when_most_rows_pass() {
        let (schema, batch) = int_batch(100);
        let compile = |e: &crate::expr::Expr| PhysicalExpr::compile(e, &schema).unwrap();
        // 80 of 100 kept: the batch whole, with the kept rows' indices.
        let most = ScanFilter::new(vec![compile(&(col("a") % lit(5i64)).neq(lit(0i64)))]);
        let s = most.select(batch.clone()).unwrap().unwrap();
        assert_eq!(s.batch.num_rows(), 100);
        let rows = s.rows.clone().unwrap();
        assert_eq!(rows.len(), 80);
        assert_eq!(&rows[..5], &[1, 2, 3, 4, 6]);
        assert_eq!(most.selectivity(), Some(0.8));
        let copied = s.materialize().unwrap();
        assert_eq!(copied.num_rows(), 80);
        // 50 kept: a filtered copy. All kept: the batch, no indices.
        let half = ScanFilter::new(vec![compile(&col("a").lt(lit(50i64)))]);
        let s = half.select(batch.clone()).unwrap().unwrap();
        assert_eq!((s.batch.num_rows(), s.rows), (50, None));
        let all = ScanFilter::new(vec![compile(&col("a").lt(lit(100i64)))]);
        let s = all.select(batch.clone()).unwrap().unwrap();
        assert_eq!((s.batch.num_rows(), s.rows), (100, None));
        // Two filters narrow in turn (a copy), as `apply` does.
        let two = ScanFilter::new(vec![
            compile(&col("a").gt(lit(5i64))),
            compile(&col("a").lt(lit(95i64))),
        ]);
        let s = two.select(batch).unwrap().unwrap();
        assert_eq!((s.batch.num_rows(), s.rows), (89, None));
    }
}
