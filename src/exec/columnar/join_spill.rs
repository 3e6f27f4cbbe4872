//! Grace hash join: the join of two inputs whose build side does not fit
//! the query's memory.
//!
//! Both inputs are written to [`SPILL_PARTITIONS`] spill files each by the
//! hash of their join keys ([`partition_to_disk`]), so that rows with equal
//! keys land in partitions of the same number. Each pair of partitions is
//! then joined on its own, as an ordinary hash join: every kind of join
//! (outer, semi, anti, with a pair filter) gives its answer partition by
//! partition, because a row can only ever match rows of its own partition,
//! and a row without a match is unmatched in its partition too. A pair
//! whose build side still does not fit is partitioned again with the next
//! level's hash seed; past [`MAX_SPILL_LEVELS`] levels (one key shared by
//! more rows than fit) the join fails with a clear error.

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::join::{JoinSpec, join_at_level};
use super::spill_partition::{MAX_SPILL_LEVELS, Reader, partition_to_disk};
use crate::error::{Result, SlothError};
use crate::exec::rows_memory_size;
use crate::io::ScanUnit;
use crate::memory::Reservation;

/// Joins the rows the `[left, right]` readers hand over, partition by
/// partition; `level` is this pass's depth of partitioning and `why` the
/// reservation that failed.
pub(super) fn grace_join(
    readers: [Reader<'_>; 2],
    schemas: [SchemaRef; 2],
    spec: &JoinSpec<'_>,
    why: (u32, SlothError),
) -> Result<Vec<RecordBatch>> {
    let mut out = Vec::new();
    grace_join_into(readers, schemas, spec, why, &mut |batches| {
        out.extend(batches);
        Ok(())
    })?;
    Ok(out)
}

/// [`grace_join`], each partition's output handed to `emit` as soon as
/// that partition is joined.
fn grace_join_into(
    [left, right]: [Reader<'_>; 2],
    [left_schema, right_schema]: [SchemaRef; 2],
    spec: &JoinSpec<'_>,
    (level, why): (u32, SlothError),
    emit: &mut dyn FnMut(Vec<RecordBatch>) -> Result<()>,
) -> Result<()> {
    if level >= MAX_SPILL_LEVELS {
        return Err(SlothError::MemoryLimit(format!(
            "hash join: the build rows of one key range still do not fit after \
             {MAX_SPILL_LEVELS} levels of partitioning (a key shared by too many rows?): {why}"
        )));
    }
    let spill = spec.budget.spill;
    let left_files = partition_to_disk(left, spec.left_keys, spill, level)?;
    let right_files = partition_to_disk(right, spec.right_keys, spill, level)?;
    for (l, r) in left_files.into_iter().zip(right_files) {
        if l.is_none() && r.is_none() {
            continue;
        }
        let read = |f: Option<crate::memory::SpillFile>| -> Result<Vec<RecordBatch>> {
            f.map(|f| f.read_all())
                .transpose()
                .map(Option::unwrap_or_default)
        };
        let (l, r) = (read(l)?, read(r)?);
        emit(join_at_level(
            (l, left_schema.clone()),
            (r, right_schema.clone()),
            spec,
            level + 1,
        )?)?;
    }
    Ok(())
}

/// [`grace_join`] of a join's build and probe sides, each a reader and
/// its schema, put in left-right order by `build_is_left`.
pub(super) fn grace_join_sides(
    build: (Reader<'_>, SchemaRef),
    probe: (Reader<'_>, SchemaRef),
    build_is_left: bool,
    spec: &JoinSpec<'_>,
    why: (u32, SlothError),
) -> Result<Vec<RecordBatch>> {
    let (left, right) = if build_is_left {
        (build, probe)
    } else {
        (probe, build)
    };
    grace_join([left.0, right.0], [left.1, right.1], spec, why)
}

/// The share of the memory limit a grace join's output may hold in memory
/// (1 / this) while its consumer reads it; the rest is spilled.
const OUTPUT_SHARE_OF_LIMIT: usize = 4;

/// [`grace_join_sides`] with each partition's output handed on as soon as
/// it is joined: kept in memory while it takes at most a quarter of the
/// query's memory limit ([`OUTPUT_SHARE_OF_LIMIT`], the reservation
/// returned), else written to a spill file of its own. The units,
/// for a consumer to read one at a time; empty partitions make none.
pub(super) fn grace_join_sides_to_units(
    build: (Reader<'_>, SchemaRef),
    probe: (Reader<'_>, SchemaRef),
    build_is_left: bool,
    spec: &JoinSpec<'_>,
    why: (u32, SlothError),
) -> Result<(Vec<ScanUnit>, Reservation)> {
    let (left, right) = if build_is_left {
        (build, probe)
    } else {
        (probe, build)
    };
    let schema = spec.output.1;
    let mut held = spec.budget.pool.reservation("hash join output");
    let mut units = Vec::new();
    let readers = [left.0, right.0];
    grace_join_into(readers, [left.1, right.1], spec, why, &mut |batches| {
        let batches: Vec<RecordBatch> = batches.into_iter().filter(|b| b.num_rows() > 0).collect();
        if batches.is_empty() {
            return Ok(());
        }
        // Output held in memory takes from what the consumer and the
        // join's later partitions have: a quarter of the limit at most.
        let size = rows_memory_size(&batches);
        let cap = spec.budget.pool.limit() / OUTPUT_SHARE_OF_LIMIT;
        if held.size() + size <= cap && held.try_grow(size).is_ok() {
            units.extend(batches.into_iter().map(ScanUnit::Batch));
        } else {
            let file = spec.budget.spill.spill(schema, &batches)?;
            units.push(ScanUnit::Spilled(std::sync::Arc::new(file)));
        }
        Ok(())
    })?;
    Ok((units, held))
}
