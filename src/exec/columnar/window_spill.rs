//! A window operator within the query's memory limit.
//!
//! [`super::window::window`] concatenates its input and builds each row's
//! partition, order and frame: about twice the input. When the operator's
//! reservation refuses that much, the input goes to disk by the hash of
//! the partition keys ([`partition_to_disk`]), so that every partition
//! lands whole in one file, and the files are windowed one at a time (one
//! still too large is partitioned again, with another seed). The input's
//! batches are handed to the partitioner one by one and dropped as they
//! are written. A window without PARTITION BY is one partition and cannot
//! be split, nor can the rows of one partition key: past the limit, they
//! fail with the limit's error naming the window, instead of growing
//! past it.

use std::cell::RefCell;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::spill_partition::{MAX_SPILL_LEVELS, partition_to_disk, read_file};
use super::window::{WindowSpec, window};
use crate::error::{Result, SlothError};
use crate::memory::{Reservation, SpillDir};

/// Where a window's working state is accounted, and where it spills.
pub struct WindowMemory<'a> {
    /// The operator's share of the query's memory pool.
    pub reservation: Reservation,
    /// The query's spill directory.
    pub spill: &'a SpillDir,
}

/// [`window`] within `memory`: in memory when its working state fits the
/// reservation, else partition by partition from disk. Output rows come
/// partition by partition either way.
pub fn window_within(
    input: Vec<RecordBatch>,
    input_schema: &SchemaRef,
    spec: WindowSpec<'_>,
    schema: &SchemaRef,
    mut memory: WindowMemory<'_>,
) -> Result<Vec<RecordBatch>> {
    window_at_level(input, input_schema, &spec, schema, &mut memory, 0)
}

fn window_at_level(
    input: Vec<RecordBatch>,
    input_schema: &SchemaRef,
    spec: &WindowSpec<'_>,
    schema: &SchemaRef,
    memory: &mut WindowMemory<'_>,
    level: u32,
) -> Result<Vec<RecordBatch>> {
    let size: usize = input.iter().map(|b| b.get_array_memory_size()).sum();
    match memory.reservation.try_grow(2 * size) {
        Ok(()) => {
            let out = window(input, input_schema, spec.clone(), schema);
            memory.reservation.free();
            return out;
        }
        Err(SlothError::MemoryLimit(e))
            if spec.partition_by.is_empty() || level >= MAX_SPILL_LEVELS =>
        {
            let what = if spec.partition_by.is_empty() {
                "a window without PARTITION BY is one partition"
            } else {
                "the rows of one partition key"
            };
            return Err(SlothError::MemoryLimit(format!(
                "{e} ({what}, which cannot be split to disk)"
            )));
        }
        Err(_) => {}
    }
    // The reader is called once; it hands over the batches it owns.
    let pending = RefCell::new(input);
    let files = partition_to_disk(
        &|emit| {
            let batches = std::mem::take(&mut *pending.borrow_mut());
            batches.into_iter().try_for_each(&mut *emit)
        },
        spec.partition_by,
        memory.spill,
        level,
    )?;
    let mut out = Vec::new();
    for file in files.into_iter().flatten() {
        let mut batches = Vec::new();
        read_file(&file, &mut |b| {
            batches.push(b);
            Ok(())
        })?;
        drop(file);
        out.extend(window_at_level(
            batches,
            input_schema,
            spec,
            schema,
            memory,
            level + 1,
        )?);
    }
    Ok(out)
}
