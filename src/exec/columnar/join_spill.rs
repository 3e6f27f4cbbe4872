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

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::Budget;
use super::join::{JoinSpec, join_at_level};
use super::spill_partition::{MAX_SPILL_LEVELS, Reader, partition_to_disk};
use crate::error::{Result, SlothError};
use crate::exec::CancelToken;
use crate::io::{DeferredUnit, ScanUnit};
use crate::memory::{MemoryPool, SpillDir, SpillFile};
use crate::physical::BuildSide;
use crate::physical_expr::PhysicalExpr;
use crate::plan::JoinType;

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
        let (l, r) = (read_all(l.as_ref())?, read_all(r.as_ref())?);
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

/// A [`JoinSpec`] that owns what it names, for partitions joined after
/// the plan's borrow ends (as their consumer reads them).
struct OwnedJoinSpec {
    left_keys: Vec<PhysicalExpr>,
    right_keys: Vec<PhysicalExpr>,
    how: JoinType,
    build_side: BuildSide,
    filter: Option<PhysicalExpr>,
    output: (Option<Vec<usize>>, SchemaRef),
    pool: Arc<MemoryPool>,
    spill: Arc<SpillDir>,
    cancel: CancelToken,
}

impl OwnedJoinSpec {
    fn new(spec: &JoinSpec<'_>, spill: Arc<SpillDir>) -> Self {
        OwnedJoinSpec {
            left_keys: spec.left_keys.to_vec(),
            right_keys: spec.right_keys.to_vec(),
            how: spec.how,
            build_side: spec.build_side,
            filter: spec.filter.cloned(),
            output: (spec.output.0.map(<[usize]>::to_vec), spec.output.1.clone()),
            pool: spec.budget.pool.clone(),
            spill,
            cancel: spec.budget.cancel.clone(),
        }
    }

    fn spec(&self) -> JoinSpec<'_> {
        JoinSpec {
            left_keys: &self.left_keys,
            right_keys: &self.right_keys,
            how: self.how,
            build_side: self.build_side,
            filter: self.filter.as_ref(),
            output: (self.output.0.as_deref(), &self.output.1),
            budget: Budget {
                pool: &self.pool,
                spill: &self.spill,
                cancel: &self.cancel,
            },
        }
    }
}

/// [`grace_join_sides`] with the joining deferred: both sides are
/// partitioned to disk now, and each pair of partitions becomes a unit
/// that joins the pair when its consumer reads it, so the join's output
/// is never held or spilled whole, only one partition's at a time for
/// each reading thread. `spill` is `spec`'s spill directory, shared;
/// `rows` counts the rows the units hand over.
pub(super) fn grace_join_sides_deferred(
    build: (Reader<'_>, SchemaRef),
    probe: (Reader<'_>, SchemaRef),
    build_is_left: bool,
    (spec, spill): (&JoinSpec<'_>, Arc<SpillDir>),
    rows: Arc<AtomicUsize>,
) -> Result<Vec<ScanUnit>> {
    let [(left, left_schema), (right, right_schema)] = if build_is_left {
        [build, probe]
    } else {
        [probe, build]
    };
    let left_files = partition_to_disk(left, spec.left_keys, &spill, 0)?;
    let right_files = partition_to_disk(right, spec.right_keys, &spill, 0)?;
    let owned = Arc::new(OwnedJoinSpec::new(spec, spill));
    let units = left_files.into_iter().zip(right_files).filter_map(|pair| {
        if pair.0.is_none() && pair.1.is_none() {
            return None;
        }
        let (l, r) = (pair.0.map(Arc::new), pair.1.map(Arc::new));
        let probe_rows = if build_is_left { &r } else { &l };
        let rows_expected = probe_rows.as_ref().map_or(0, |f| f.rows());
        let (owned, rows) = (owned.clone(), rows.clone());
        let schemas = [left_schema.clone(), right_schema.clone()];
        let compute = move || -> Result<Vec<RecordBatch>> {
            owned.cancel.check()?;
            let out = join_at_level(
                (read_all(l.as_deref())?, schemas[0].clone()),
                (read_all(r.as_deref())?, schemas[1].clone()),
                &owned.spec(),
                1,
            )?;
            rows.fetch_add(
                out.iter().map(RecordBatch::num_rows).sum(),
                Ordering::Relaxed,
            );
            Ok(out)
        };
        Some(ScanUnit::Deferred(Arc::new(DeferredUnit {
            rows_expected,
            compute: Box::new(compute),
        })))
    });
    Ok(units.collect())
}

/// The rows of a partition's spill file; none where no row went.
fn read_all(file: Option<&SpillFile>) -> Result<Vec<RecordBatch>> {
    file.map(SpillFile::read_all)
        .transpose()
        .map(Option::unwrap_or_default)
}
