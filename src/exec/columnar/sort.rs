//! Sort (and top-k), in memory or external, and slicing.
//!
//! A sort whose working set (its input and the sorted copy) fits the
//! query's memory budget sorts in memory. Otherwise it becomes an external
//! merge sort: input batches gather into runs as large as the budget
//! allows, each run is sorted and spilled, and the runs are merged
//! ([`merge_runs`]), at most [`FAN_IN`] at a time, so memory holds one
//! batch per run being merged.
//!
//! A top-k (a sort with a limit) needs only the first `k` rows of what it
//! has seen: its run is cut down to them whenever it holds more than
//! [`TOP_K_RUN_ROWS`] (and twice `k`) rows, so it holds about that many
//! rows whatever its input ([`keep_top_k`]).

use arrow::compute::{
    SortColumn, SortOptions, concat_batches, interleave_record_batch, lexsort_to_indices,
    take_record_batch,
};
use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, Rows, SortField};

use crate::error::Result;
use crate::exec::rows_memory_size;
use crate::io::BATCH_SIZE;
use crate::memory::{Reservation, SpillDir, SpillFile};
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::evaluate_sort_key;

/// Most runs merged at once; more are merged in several passes.
const FAN_IN: usize = 32;

/// Rows a top-k's run gathers before it is cut down to its first `k`.
pub(super) const TOP_K_RUN_ROWS: usize = 64 * 1024;

/// What a sort sorts by, and the memory it runs in.
pub struct SortSpec<'a> {
    /// The input's schema.
    pub schema: &'a SchemaRef,
    /// Sort keys over the input.
    pub keys: &'a [(PhysicalExpr, SortOptions)],
    /// Keep only the first rows (top-k).
    pub limit: Option<usize>,
    /// The sort's share of the query's memory.
    pub reservation: Reservation,
    /// Most bytes a run of an external sort reserves beyond its first
    /// batch (`usize::MAX`: what the memory allows). A sort reading its
    /// input through joins leaves the rest to them.
    pub max_run: usize,
    /// Where runs go when the input does not fit.
    pub spill: &'a SpillDir,
}

/// Sorts all input rows by `spec.keys`; with a limit, keeps only the first
/// rows (arrow's lexsort then does a partial sort: top-k).
pub fn sort(input: Vec<RecordBatch>, mut spec: SortSpec<'_>) -> Result<Vec<RecordBatch>> {
    let size = rows_memory_size(&input);
    // The input, concatenated, and its sorted copy; a top-k goes through
    // runs, which keep only its first rows.
    if spec.limit.is_none() && spec.reservation.try_grow(3 * size).is_ok() {
        return sort_in_memory(&input, &spec);
    }
    let mut out = Vec::new();
    external_sort(input.into_iter().map(Ok), spec, &mut |b| {
        out.push(b);
        Ok(())
    })?;
    Ok(out)
}

pub(super) fn sort_in_memory(
    input: &[RecordBatch],
    spec: &SortSpec<'_>,
) -> Result<Vec<RecordBatch>> {
    let sorted = sort_batch(input, spec.schema, spec.keys, spec.limit)?;
    Ok(sorted.map(split).unwrap_or_default())
}

/// The rows of `input` sorted, as one batch; `None` without rows.
pub(super) fn sort_batch(
    input: &[RecordBatch],
    schema: &SchemaRef,
    keys: &[(PhysicalExpr, SortOptions)],
    limit: Option<usize>,
) -> Result<Option<RecordBatch>> {
    let all = concat_batches(schema, input)?;
    if all.num_rows() == 0 {
        return Ok(None);
    }
    let columns = keys
        .iter()
        .map(|(e, options)| {
            Ok(SortColumn {
                values: evaluate_sort_key(e, &all)?,
                options: Some(*options),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let limit = limit.map(|l| l.min(all.num_rows()));
    let indices = lexsort_to_indices(&columns, limit)?;
    Ok(Some(take_record_batch(&all, &indices)?))
}

/// Sorts `input` in runs that fit `spec.reservation`, spilling each, and
/// merges them into `emit`. A run that is all of the input is sorted in
/// memory and never spilled.
pub fn external_sort(
    input: impl Iterator<Item = Result<RecordBatch>>,
    mut spec: SortSpec<'_>,
    emit: &mut dyn FnMut(RecordBatch) -> Result<()>,
) -> Result<()> {
    spec.reservation.free();
    let mut runs: Vec<SpillFile> = Vec::new();
    let mut run: Vec<RecordBatch> = Vec::new();
    for batch in input {
        // A batch larger than the budget goes in pieces that fit.
        let mut pieces = vec![batch?];
        while let Some(piece) = pieces.pop() {
            let size = 3 * rows_memory_size(std::slice::from_ref(&piece));
            let within = run.is_empty() || spec.reservation.size() + size <= spec.max_run;
            if within && spec.reservation.try_grow(size).is_ok() {
                run.push(piece);
                if let Some(k) = spec.limit {
                    keep_top_k(&mut run, k, &mut spec)?;
                }
                continue;
            }
            if !run.is_empty() {
                runs.push(spill_run(&std::mem::take(&mut run), &spec)?);
                spec.reservation.free();
                pieces.push(piece);
            } else if piece.num_rows() > 1 {
                let half = piece.num_rows() / 2;
                pieces.push(piece.slice(half, piece.num_rows() - half));
                pieces.push(piece.slice(0, half));
            } else {
                // Not even one row fits: the limit is below any sort.
                return spec.reservation.try_grow(size);
            }
        }
    }
    if runs.is_empty() {
        for b in sort_in_memory(&run, &spec)? {
            emit(b)?;
        }
        return Ok(());
    }
    if !run.is_empty() {
        runs.push(spill_run(&run, &spec)?);
    }
    drop(run);
    spec.reservation.free();
    while runs.len() > FAN_IN {
        let rest = runs.split_off(FAN_IN);
        let mut writer = spec.spill.writer(spec.schema)?;
        merge_runs(&runs, &spec, None, &mut |b| writer.write(&b))?;
        runs = rest;
        runs.push(writer.finish()?);
    }
    merge_runs(&runs, &spec, spec.limit, emit)
}

/// Cuts a top-k's `run` down to its first `k` rows once it holds more
/// than [`TOP_K_RUN_ROWS`] and `2k` rows (module doc), and its reservation
/// with it. TPC-H Q10's top 20 of 381K groups concatenated all of them
/// first, 131 MiB at SF 10.
fn keep_top_k(run: &mut Vec<RecordBatch>, k: usize, spec: &mut SortSpec<'_>) -> Result<()> {
    let rows: usize = run.iter().map(|b| b.num_rows()).sum();
    if rows <= TOP_K_RUN_ROWS.max(2 * k) {
        return Ok(());
    }
    *run = first_rows(run, k, spec)?.into_iter().collect();
    spec.reservation.free();
    spec.reservation.try_grow(3 * rows_memory_size(run))
}

/// The first `k` rows of `batches` by `spec.keys` as one batch of its own
/// (not pointing into their string pages: [`compact_views`]); `None`
/// without rows.
pub(super) fn first_rows(
    batches: &[RecordBatch],
    k: usize,
    spec: &SortSpec<'_>,
) -> Result<Option<RecordBatch>> {
    sort_batch(batches, spec.schema, spec.keys, Some(k))?
        .map(compact_views)
        .transpose()
}

/// Sorts one run and writes it to a spill file.
fn spill_run(run: &[RecordBatch], spec: &SortSpec<'_>) -> Result<SpillFile> {
    let sorted = sort_batch(run, spec.schema, spec.keys, spec.limit)?;
    spec.spill
        .spill(spec.schema, &sorted.map(split).unwrap_or_default())
}

/// One sorted run being merged: its current batch and that batch's keys in
/// Arrow's row format (byte-comparable in sort order).
struct Cursor {
    batches: Box<dyn Iterator<Item = Result<RecordBatch>>>,
    batch: RecordBatch,
    rows: Rows,
    pos: usize,
}

impl Cursor {
    /// Moves to the next non-empty batch; false at the end of the run.
    fn advance(&mut self, converter: &RowConverter, spec: &SortSpec<'_>) -> Result<bool> {
        for batch in self.batches.by_ref() {
            let batch = batch?;
            if batch.num_rows() == 0 {
                continue;
            }
            let keys = spec
                .keys
                .iter()
                .map(|(e, _)| evaluate_sort_key(e, &batch))
                .collect::<Result<Vec<_>>>()?;
            self.rows = converter.convert_columns(&keys)?;
            self.batch = batch;
            self.pos = 0;
            return Ok(true);
        }
        Ok(false)
    }
}

/// Merges sorted runs into `emit`, in batches of at most [`BATCH_SIZE`]
/// rows, stopping after `limit` rows. Ties keep the order of the runs.
fn merge_runs(
    runs: &[SpillFile],
    spec: &SortSpec<'_>,
    limit: Option<usize>,
    emit: &mut dyn FnMut(RecordBatch) -> Result<()>,
) -> Result<()> {
    let fields = spec
        .keys
        .iter()
        .map(|(e, options)| SortField::new_with_options(e.data_type.clone(), *options))
        .collect();
    let converter = RowConverter::new(fields)?;
    let mut cursors = Vec::with_capacity(runs.len());
    for run in runs {
        let mut cursor = Cursor {
            batches: Box::new(run.read()?),
            batch: RecordBatch::new_empty(spec.schema.clone()),
            rows: converter.empty_rows(0, 0),
            pos: 0,
        };
        if cursor.advance(&converter, spec)? {
            cursors.push(cursor);
        }
    }
    let mut heap = RunHeap::new(cursors.len());
    let less = |cursors: &[Cursor], a: usize, b: usize| {
        let (x, y) = (&cursors[a], &cursors[b]);
        (x.rows.row(x.pos), a) < (y.rows.row(y.pos), b)
    };
    heap.build(|a, b| less(&cursors, a, b));
    let mut remaining = limit.unwrap_or(usize::MAX);
    let mut picked: Vec<(usize, usize)> = Vec::with_capacity(BATCH_SIZE);
    let flush = |cursors: &[Cursor],
                 picked: &mut Vec<(usize, usize)>,
                 emit: &mut dyn FnMut(RecordBatch) -> Result<()>|
     -> Result<()> {
        if picked.is_empty() {
            return Ok(());
        }
        let batches: Vec<&RecordBatch> = cursors.iter().map(|c| &c.batch).collect();
        let out = interleave_record_batch(&batches, picked)?;
        picked.clear();
        emit(out)
    };
    while remaining > 0
        && let Some(top) = heap.top()
    {
        picked.push((top, cursors[top].pos));
        remaining -= 1;
        cursors[top].pos += 1;
        if cursors[top].pos == cursors[top].batch.num_rows() {
            // The rows picked from this batch go out before it is replaced.
            flush(&cursors, &mut picked, emit)?;
            if !cursors[top].advance(&converter, spec)? {
                heap.pop(|a, b| less(&cursors, a, b));
                continue;
            }
        } else if picked.len() == BATCH_SIZE {
            flush(&cursors, &mut picked, emit)?;
        }
        heap.sift_top(|a, b| less(&cursors, a, b));
    }
    flush(&cursors, &mut picked, emit)
}

/// A binary min-heap of run indices, ordered by a comparison that looks
/// at the runs' current rows (which a std `BinaryHeap` entry could not
/// borrow).
struct RunHeap {
    items: Vec<usize>,
}

impl RunHeap {
    fn new(runs: usize) -> Self {
        RunHeap {
            items: (0..runs).collect(),
        }
    }

    fn top(&self) -> Option<usize> {
        self.items.first().copied()
    }

    fn build(&mut self, less: impl Fn(usize, usize) -> bool) {
        for i in (0..self.items.len() / 2).rev() {
            self.sift_down(i, &less);
        }
    }

    /// Restores the order after the top's row changed.
    fn sift_top(&mut self, less: impl Fn(usize, usize) -> bool) {
        self.sift_down(0, &less);
    }

    /// Removes the top (an exhausted run).
    fn pop(&mut self, less: impl Fn(usize, usize) -> bool) {
        self.items.swap_remove(0);
        self.sift_down(0, &less);
    }

    fn sift_down(&mut self, mut i: usize, less: &impl Fn(usize, usize) -> bool) {
        let n = self.items.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut min = i;
            if l < n && less(self.items[l], self.items[min]) {
                min = l;
            }
            if r < n && less(self.items[r], self.items[min]) {
                min = r;
            }
            if min == i {
                return;
            }
            self.items.swap(i, min);
            i = min;
        }
    }
}

/// `batch` with its string and binary views' bytes copied into buffers of
/// their own. A top-k's few rows, taken from many batches, would otherwise
/// keep every page their batches' views point into: a top 5 of SF 10
/// lineitem with `l_comment` held the whole column's pages (2.1 GB).
fn compact_views(batch: RecordBatch) -> Result<RecordBatch> {
    if !batch
        .columns()
        .iter()
        .any(|c| matches!(c.data_type(), DataType::Utf8View | DataType::BinaryView))
    {
        return Ok(batch);
    }
    let columns = batch
        .columns()
        .iter()
        .map(|c| match c.data_type() {
            DataType::Utf8View => Arc::new(c.as_string_view().gc()) as ArrayRef,
            DataType::BinaryView => Arc::new(c.as_binary_view().gc()),
            _ => c.clone(),
        })
        .collect();
    Ok(RecordBatch::try_new(batch.schema(), columns)?)
}

/// Splits a large batch into batches of [`BATCH_SIZE`] rows (zero-copy).
fn split(batch: RecordBatch) -> Vec<RecordBatch> {
    (0..batch.num_rows())
        .step_by(BATCH_SIZE)
        .map(|start| batch.slice(start, BATCH_SIZE.min(batch.num_rows() - start)))
        .collect()
}

/// Rows `offset..offset+len` of the concatenated input (zero-copy).
pub fn slice(input: Vec<RecordBatch>, mut offset: usize, len: Option<usize>) -> Vec<RecordBatch> {
    let mut remaining = len.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for b in input {
        if remaining == 0 {
            break;
        }
        if offset >= b.num_rows() {
            offset -= b.num_rows();
            continue;
        }
        let n = (b.num_rows() - offset).min(remaining);
        out.push(b.slice(offset, n));
        remaining -= n;
        offset = 0;
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::datatypes::DataType;

    use super::*;
    use crate::memory::MemoryPool;
    use crate::physical_expr::Node;

    fn input(rows: i64, per_batch: i64) -> Vec<RecordBatch> {
        (0..rows)
            .step_by(per_batch as usize)
            .map(|start| {
                let k: ArrayRef = Arc::new(Int64Array::from_iter(
                    (start..start + per_batch).map(|i| (i % 7 != 0).then_some((i * 7919) % 1000)),
                ));
                let s: ArrayRef = Arc::new(StringArray::from_iter_values(
                    (start..start + per_batch).map(|i| format!("row{i}")),
                ));
                RecordBatch::try_from_iter([("k", k), ("s", s)]).unwrap()
            })
            .collect()
    }

    fn keys() -> Vec<(PhysicalExpr, SortOptions)> {
        let column = |i, data_type| PhysicalExpr {
            node: Node::Column(i),
            data_type,
        };
        vec![
            (column(0, DataType::Int64), SortOptions::default().desc()),
            (column(1, DataType::Utf8), SortOptions::default()),
        ]
    }

    /// Sorts `batches` by [`keys`] within `limit_bytes`; checks that no
    /// spill file is left; returns the result and the bytes spilled.
    fn sort_within(
        batches: Vec<RecordBatch>,
        limit_bytes: u64,
        limit: Option<usize>,
    ) -> (Result<RecordBatch>, u64) {
        let schema = batches[0].schema();
        let pool = MemoryPool::new(limit_bytes);
        let root = tempfile::tempdir().unwrap();
        let spill = SpillDir::new(root.path().to_path_buf(), pool.clone());
        let keys = keys();
        let spec = SortSpec {
            schema: &schema,
            keys: &keys,
            limit,
            reservation: pool.reservation("sort"),
            max_run: usize::MAX,
            spill: &spill,
        };
        let out = sort(batches, spec).map(|out| {
            assert!(out.iter().all(|b| b.num_rows() <= BATCH_SIZE));
            concat_batches(&schema, &out).unwrap()
        });
        drop(spill);
        let left = std::fs::read_dir(root.path()).unwrap().count();
        assert_eq!(left, 0, "spill files left");
        (out, pool.spilled().0)
    }

    fn run(
        batches: Vec<RecordBatch>,
        limit_bytes: u64,
        limit: Option<usize>,
    ) -> (RecordBatch, u64) {
        let (out, spilled) = sort_within(batches, limit_bytes, limit);
        (out.unwrap(), spilled)
    }

    #[test]
    fn an_external_sort_equals_the_in_memory_sort() {
        let (expected, spilled) = run(input(20_000, 500), u64::MAX, None);
        assert_eq!(spilled, 0);
        // About 40 runs: two merge passes.
        let (external, spilled) = run(input(20_000, 500), 40_000, None);
        assert!(spilled > 0);
        assert_eq!(external, expected);
        let (top, _) = run(input(20_000, 500), 40_000, Some(1234));
        assert_eq!(top, expected.slice(0, 1234));
    }

    /// A top-k over many batches holds about [`TOP_K_RUN_ROWS`] rows, not
    /// its input, and keeps the same rows as the whole sort.
    #[test]
    fn a_top_k_holds_its_first_rows_not_its_input() {
        let batches = input(400_000, 4_000);
        let input_size = rows_memory_size(&batches);
        let (expected, _) = run(input(400_000, 4_000), u64::MAX, None);
        let schema = batches[0].schema();
        let pool = MemoryPool::new(u64::MAX);
        let root = tempfile::tempdir().unwrap();
        let keys = keys();
        let spec = SortSpec {
            schema: &schema,
            keys: &keys,
            limit: Some(100),
            reservation: pool.reservation("sort"),
            max_run: usize::MAX,
            spill: &SpillDir::new(root.path().to_path_buf(), pool.clone()),
        };
        let top = concat_batches(&schema, &sort(batches, spec).unwrap()).unwrap();
        assert_eq!(top, expected.slice(0, 100));
        // 3x the rows held, as the reservation counts them: about 68K of 400K.
        assert!(pool.peak() < input_size, "{} of {input_size}", pool.peak());
    }

    #[test]
    fn a_budget_below_one_row_is_a_clear_error() {
        let (out, _) = sort_within(input(1000, 1000), 10, None);
        let e = out.unwrap_err();
        assert!(matches!(e, crate::error::SlothError::MemoryLimit(_)), "{e}");
    }
}
