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

use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::record_batch::RecordBatch;

use crate::error::Result;
use crate::kernels::eval::{evaluate_mask, keep_rows};
use crate::physical::expr::PhysicalExpr;

/// Below this kept fraction a row group is decoded late-materialized.
pub const LATE_MATERIALIZATION_MAX_SELECTIVITY: f64 = 0.2;

/// Kept rows must come in runs at least this long on average: the Parquet
/// reader skips runs of rows, but for scattered rows it decodes everything
/// and masks (arrow-rs `RowSelectionPolicy::Auto`), so late
/// materialization would only decode the filter columns twice.
pub const LATE_MATERIALIZATION_MIN_RUN: usize = 64;

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

    /// The filter expressions.
    pub fn exprs(&self) -> &[PhysicalExpr] {
        &self.exprs
    }

    /// Keeps the rows of `batch` that pass every filter; `None` when none do.
    pub fn apply(&self, mut batch: RecordBatch) -> Result<Option<RecordBatch>> {
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
    use std::sync::Arc;

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
}
