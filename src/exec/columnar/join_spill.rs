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

/// Joins the rows the `[left, right]` readers hand over, partition by
/// partition; `level` is this pass's depth of partitioning and `why` the
/// reservation that failed.
pub(super) fn grace_join(
    [left, right]: [Reader<'_>; 2],
    [left_schema, right_schema]: [SchemaRef; 2],
    spec: &JoinSpec<'_>,
    (level, why): (u32, SlothError),
) -> Result<Vec<RecordBatch>> {
    if level >= MAX_SPILL_LEVELS {
        return Err(SlothError::MemoryLimit(format!(
            "hash join: the build rows of one key range still do not fit after \
             {MAX_SPILL_LEVELS} levels of partitioning (a key shared by too many rows?): {why}"
        )));
    }
    let spill = spec.budget.spill;
    let left_files = partition_to_disk(left, spec.left_keys, spill, level)?;
    let right_files = partition_to_disk(right, spec.right_keys, spill, level)?;
    let mut out = Vec::new();
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
        out.extend(join_at_level(
            (l, left_schema.clone()),
            (r, right_schema.clone()),
            spec,
            level + 1,
        )?);
    }
    Ok(out)
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
