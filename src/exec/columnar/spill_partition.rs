//! Hash partitioning to disk, for operators whose state outgrows the
//! query's memory (grace hash aggregation and join): rows go to one of
//! [`SPILL_PARTITIONS`] spill files by the hash of their keys, so that equal
//! keys meet in one file and each file can be processed alone.

use std::hash::BuildHasher;

use arrow::array::UInt32Array;
use arrow::compute::take_record_batch;
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, SortField};
use rayon::prelude::*;

use crate::error::Result;
use crate::memory::{SpillDir, SpillFile, SpillWriter};
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::evaluate_array;

/// Spill files a partitioning pass writes.
pub const SPILL_PARTITIONS: usize = 16;

/// Levels of partitioning before a key range is deemed too large to fit.
pub const MAX_SPILL_LEVELS: u32 = 4;

/// A source of batches: hands each to the callback, in order.
pub type Reader<'a> = &'a dyn Fn(&mut dyn FnMut(RecordBatch) -> Result<()>) -> Result<()>;

/// Hands the batches of a spill file to `emit`, one at a time.
pub fn read_file(file: &SpillFile, emit: &mut dyn FnMut(RecordBatch) -> Result<()>) -> Result<()> {
    file.read()?.try_for_each(|b| emit(b?))
}

/// Writes the rows `read` hands over to [`SPILL_PARTITIONS`] spill files by
/// the hash of `keys` in Arrow's row format (equal keys, nulls included,
/// encode alike whichever side of a join they come from, as join keys share
/// their type), seeded by `level` so that a file partitioned again spreads.
/// Returns one entry per partition, `None` where no row went. Rows keep
/// their input order within a file (for `first`, `last`).
pub fn partition_to_disk(
    read: Reader<'_>,
    keys: &[PhysicalExpr],
    spill: &SpillDir,
    level: u32,
) -> Result<Vec<Option<SpillFile>>> {
    let fields = keys
        .iter()
        .map(|k| SortField::new(k.data_type.clone()))
        .collect();
    let converter = RowConverter::new(fields)?;
    let state = foldhash::quality::FixedState::with_seed(0x5107_u64 + u64::from(level));
    let mut writers: Vec<Option<SpillWriter>> = (0..SPILL_PARTITIONS).map(|_| None).collect();
    let mut indices: Vec<Vec<u32>> = vec![Vec::new(); SPILL_PARTITIONS];
    read(&mut |batch| {
        let key_arrays = keys
            .iter()
            .map(|k| evaluate_array(k, &batch))
            .collect::<Result<Vec<_>>>()?;
        // Equal keys meet whatever their bits (-0.0 and 0.0), as in the tables.
        let key_arrays = crate::kernels::hash_table::normalized_keys(&key_arrays);
        let rows = converter.convert_columns(&key_arrays)?;
        for (i, row) in rows.iter().enumerate() {
            let q = (state.hash_one(row.as_ref()) >> 32) as usize % SPILL_PARTITIONS;
            indices[q].push(i as u32);
        }
        // The partitions' rows are gathered, compressed and written in
        // parallel: each file has a writer of its own.
        let schema = batch.schema();
        writers
            .par_iter_mut()
            .zip(indices.par_iter_mut())
            .try_for_each(|(slot, rows)| -> Result<()> {
                if rows.is_empty() {
                    return Ok(());
                }
                // The indices move into the array; the next batch starts afresh.
                let rows = UInt32Array::from(std::mem::take(rows));
                let writer = match slot {
                    Some(w) => w,
                    slot => slot.insert(spill.writer(&schema)?),
                };
                writer.write(&take_record_batch(&batch, &rows)?)
            })
    })?;
    writers
        .into_iter()
        .map(|w| w.map(SpillWriter::finish).transpose())
        .collect()
}
