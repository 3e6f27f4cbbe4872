//! Top-k over morsels: every worker thread keeps the first `k` rows of the
//! batches it reads, and the threads' rows are sorted once more at the end.
//!
//! ```text
//! TopK k=10                      each thread: read a morsel, add its rows,
//!   HashJoin            =>         cut to the first 10 past 64K rows
//!     Scan lineitem              then: the threads' rows, cut to 10
//!     Scan orders
//! ```
//!
//! The input (a scan, or joins probed by a scan's morsels) is never held
//! whole: each thread holds at most [`TOP_K_RUN_ROWS`] rows (or `2k`) and
//! the batch it is adding, reserved against the query's memory. A top-k
//! with a larger `k` goes through the external sort, which spills.

use std::sync::Arc;

use arrow::compute::filter_record_batch;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::morsel::MorselInput;
use super::sort::{SortSpec, TOP_K_RUN_ROWS, first_rows, sort_in_memory};
use crate::error::Result;
use crate::exec::rows_memory_size;
use crate::io::TopKBound;
use crate::memory::{MemoryPool, Reservation};
use crate::physical_expr::eval::evaluate_sort_key;

/// Whether a top-k of `k` rows of `schema` runs per thread
/// ([`top_k_per_thread`]) under a memory limit of `limit` bytes: each
/// thread's rows stay at most a run's, and the runs (`2k` rows each,
/// reserved three times over, up to two per worker thread where a thread
/// steals work) fit in a quarter of the limit, at 32 bytes a string.
/// Otherwise the external sort, which spills, takes it.
pub(crate) fn runs_per_thread(k: usize, schema: &SchemaRef, limit: usize) -> bool {
    let row: usize = (schema.fields().iter())
        .map(|f| f.data_type().primitive_width().unwrap_or(32))
        .sum();
    let runs = 2 * rayon::current_num_threads().max(1);
    let held = runs.saturating_mul(3 * 2 * k.saturating_mul(row.max(1)));
    k <= TOP_K_RUN_ROWS && held <= limit / 4
}

/// One thread's first rows so far.
struct Run {
    batches: Vec<RecordBatch>,
    rows: usize,
    reservation: Reservation,
}

impl Run {
    /// Adds `batch`, cutting the run to its first `k` rows once it holds
    /// more than a run's rows and `2k`. Where the memory refuses the
    /// batch, the run is cut at once and only the batch's own first `k`
    /// rows join it.
    fn add(
        &mut self,
        batch: RecordBatch,
        k: usize,
        spec: &SortSpec<'_>,
        bound: Option<&TopKBound>,
    ) -> Result<()> {
        // The batch, and the concatenation and sorted copy of a cut.
        let size = 3 * rows_memory_size(std::slice::from_ref(&batch));
        let batch = if self.reservation.try_grow(size).is_ok() {
            batch
        } else {
            self.cut(k, spec, bound)?;
            let Some(first) = first_rows(&[batch], k, spec)? else {
                return Ok(());
            };
            self.reservation
                .try_grow(3 * rows_memory_size(std::slice::from_ref(&first)))?;
            first
        };
        self.rows += batch.num_rows();
        self.batches.push(batch);
        // With a bound, cuts tighten it: cut as soon as the run holds 2k
        // rows (past the bound, few rows come, and a run that waited for
        // a run's rows would cut, and tighten, seldom).
        let cut_at = if bound.is_some() {
            2 * k
        } else {
            TOP_K_RUN_ROWS.max(2 * k)
        };
        if self.rows > cut_at {
            self.cut(k, spec, bound)?;
        }
        Ok(())
    }

    /// Cuts the run to its first `k` rows, and its reservation with it;
    /// the `k`-th row's first key tightens `bound`.
    fn cut(&mut self, k: usize, spec: &SortSpec<'_>, bound: Option<&TopKBound>) -> Result<()> {
        if self.rows <= k {
            return Ok(());
        }
        self.batches = first_rows(&self.batches, k, spec)?.into_iter().collect();
        self.rows = self.batches.iter().map(|b| b.num_rows()).sum();
        if let (Some(bound), [run], 1..) = (bound, self.batches.as_slice(), k) {
            let kth = run.slice(k - 1, 1);
            bound.tighten(evaluate_sort_key(&spec.keys[0].0, &kth)?)?;
        }
        self.reservation
            .try_resize(3 * rows_memory_size(&self.batches))
    }
}

/// The first `k` rows of `input` by `spec.keys`, each worker thread
/// keeping its own first rows (module doc); `pool` holds the threads'
/// reservations. With a `bound` on the first key (shared with the
/// input's scan), the threads' `k`-th rows tighten it and rows past it
/// are dropped as they come.
pub(crate) fn top_k_per_thread(
    input: &MorselInput,
    spec: SortSpec<'_>,
    k: usize,
    pool: &Arc<MemoryPool>,
    bound: Option<&TopKBound>,
) -> Result<Vec<RecordBatch>> {
    let runs = input.fold_per_thread(
        || Run {
            batches: Vec::new(),
            rows: 0,
            reservation: pool.reservation("sort"),
        },
        |run, selected| {
            let mut batch = selected.materialize()?;
            if let Some(bound) = bound
                && let Some(keep) = bound.keep(&evaluate_sort_key(&spec.keys[0].0, &batch)?)?
            {
                batch = filter_record_batch(&batch, &keep)?;
            }
            if batch.num_rows() == 0 {
                return Ok(());
            }
            run.add(batch, k, &spec, bound)
        },
    )?;
    // The runs (and their reservations) live until the rows are sorted.
    let rows: Vec<RecordBatch> = runs.iter().flat_map(|r| r.batches.clone()).collect();
    sort_in_memory(
        &rows,
        &SortSpec {
            limit: Some(k),
            ..spec
        },
    )
}
