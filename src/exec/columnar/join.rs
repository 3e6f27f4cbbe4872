//! Hash join: build a table on one input, probe it with the other in parallel.
//!
//! The build side's rows are chained per key (see [`super::join_build`]), so
//! duplicates cost no allocation. Probing emits (probe row, build row) index
//! pairs; payload columns are gathered once per output batch with `take`
//! (late materialization). Every join kind works with either build side: rows
//! of a preserved probe side are emitted while probing, rows of a preserved
//! build side after it, from a matched-bitmap.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use arrow::array::{ArrayRef, UInt32Array};
use arrow::compute::take;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use rayon::prelude::*;

use super::join_build::{BuildTable, NONE};
use super::join_filter::{BuildKeys, KeyMatchFilter};
use super::{Budget, MorselInput};
use crate::error::{Result, SlothError};
use crate::exec::rows_memory_size;
use crate::kernels::hash_table::KeyEncoder;
use crate::physical::{BuildSide, join_outputs};
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::{evaluate_array, evaluate_mask};
use crate::plan::{JoinType, join_schema};

/// What to emit for each side.
struct Plan {
    probe_is_left: bool,
    /// Emit unmatched probe rows (with nulls for the build side).
    probe_outer: bool,
    /// Emit unmatched build rows after probing.
    build_outer: bool,
    /// Semi/anti: emit the left side's rows only, once.
    left_only: Option<bool>, // Some(true) = semi, Some(false) = anti
}

fn row_count(b: &[RecordBatch]) -> usize {
    b.iter().map(|b| b.num_rows()).sum()
}

fn plan_for(how: JoinType, probe_is_left: bool) -> Plan {
    let (left_preserved, right_preserved) = match how {
        JoinType::Left => (true, false),
        JoinType::Right => (false, true),
        JoinType::Full => (true, true),
        _ => (false, false),
    };
    Plan {
        probe_is_left,
        probe_outer: if probe_is_left {
            left_preserved
        } else {
            right_preserved
        },
        build_outer: if probe_is_left {
            right_preserved
        } else {
            left_preserved
        },
        left_only: match how {
            JoinType::Semi => Some(true),
            JoinType::Anti => Some(false),
            _ => None,
        },
    }
}

/// Candidate pairs a probe batch gathers before applying the pair filter.
const PAIR_CHUNK: usize = 1 << 16;

/// The hash table on the build side, shared by the threads that probe it.
pub struct JoinTable {
    plan: Plan,
    build: RecordBatch,
    keys: Arc<BuildKeys>,
    /// Probe rows come through the build keys' filter
    /// ([`KeyMatchFilter`]): they skip the Bloom filter.
    prefiltered: bool,
    matched: Vec<AtomicBool>,
    probe_keys: Vec<PhysicalExpr>,
    filter: Option<PairFilter>,
    output: Option<Vec<usize>>,
    schema: SchemaRef,
    probe_schema: SchemaRef,
    /// The build side's memory, held as long as the table.
    _held: Option<crate::memory::Reservation>,
}

/// A join's condition beyond its keys, over the pair columns it reads
/// (gathering only those for each candidate pair).
struct PairFilter {
    /// The condition, over `schema`.
    expr: PhysicalExpr,
    /// Positions of its columns among the pair's (left then right).
    columns: Vec<usize>,
    /// Those columns' fields.
    schema: SchemaRef,
}

impl PairFilter {
    fn new(expr: &PhysicalExpr, pair_schema: &SchemaRef) -> Result<Self> {
        let mut columns = expr.columns();
        columns.sort_unstable();
        columns.dedup();
        let schema = Arc::new(pair_schema.project(&columns)?);
        let expr = expr.remap_columns(&|c| columns.binary_search(&c).expect("a filter column"));
        Ok(PairFilter {
            expr,
            columns,
            schema,
        })
    }
}

/// What a join emits: the positions of its emitted columns in the full
/// output (`None`: all) and their schema.
pub type JoinOutput<'a> = (Option<&'a [usize]>, &'a SchemaRef);

/// One side of a join: its batches (or none yet), schema and key expressions.
pub struct JoinSide<'a> {
    /// Materialized rows (the build side needs them; a streamed probe side has none).
    pub batches: Vec<RecordBatch>,
    /// Schema of the side's rows.
    pub schema: SchemaRef,
    /// Key expressions over that schema.
    pub keys: &'a [PhysicalExpr],
}

impl JoinTable {
    /// Builds the table on `build`; `probe` gives the other side's schema and keys.
    pub fn new(
        build: JoinSide<'_>,
        probe: &JoinSide<'_>,
        build_is_left: bool,
        how: JoinType,
        filter: Option<&PhysicalExpr>,
        (output, schema): JoinOutput<'_>,
    ) -> Result<Self> {
        let plan = plan_for(how, !build_is_left);
        let pair_schema = if build_is_left {
            join_schema(&build.schema, &probe.schema, JoinType::Inner)
        } else {
            join_schema(&probe.schema, &build.schema, JoinType::Inner)
        };
        let batch = crate::kernels::concat_owned(&build.schema, build.batches)?;
        // Chain rows per key, first row first.
        let key_arrays = build
            .keys
            .iter()
            .map(|k| evaluate_array(k, &batch))
            .collect::<Result<Vec<_>>>()?;
        let encoder = KeyEncoder::for_join_build(&key_arrays)?;
        let mut hashes = Vec::new();
        let encoded = encoder.encode(&key_arrays, &mut hashes)?;
        let keys = BuildTable::new(&encoder, &encoded, &hashes);
        let matched = if plan.build_outer || (plan.left_only.is_some() && !plan.probe_is_left) {
            (0..batch.num_rows())
                .map(|_| AtomicBool::new(false))
                .collect()
        } else {
            Vec::new()
        };
        Ok(JoinTable {
            plan,
            build: batch,
            keys: Arc::new(BuildKeys {
                encoder,
                table: keys,
            }),
            prefiltered: false,
            matched,
            probe_keys: probe.keys.to_vec(),
            filter: filter
                .map(|f| PairFilter::new(f, &pair_schema))
                .transpose()?,
            output: output.map(<[usize]>::to_vec),
            schema: schema.clone(),
            probe_schema: probe.schema.clone(),
            _held: None,
        })
    }

    /// The probe input's column that output column `i` is, where every row
    /// the join emits is a probe row's with that column unchanged: no
    /// build rows come after probing (an outer join's unmatched ones, a
    /// semi or anti join's emitted build side). `None` otherwise.
    pub(super) fn probe_column(&self, i: usize) -> Option<usize> {
        let plan = &self.plan;
        if plan.build_outer || (plan.left_only.is_some() && !plan.probe_is_left) {
            return None;
        }
        let i = match &self.output {
            Some(output) => *output.get(i)?,
            None => i,
        };
        // Semi and anti joins emit the probe's columns alone; the others
        // the left side's, then the right side's.
        let offset = match (plan.left_only, plan.probe_is_left) {
            (Some(_), _) | (None, true) => 0,
            (None, false) => self.build.num_columns(),
        };
        let j = i.checked_sub(offset)?;
        (j < self.probe_schema.fields().len()).then_some(j)
    }

    /// Adds "the key has a match here" to the filters of the scan that
    /// `morsels` read, where the join drops probe rows without a match and
    /// the probe keys are columns of that scan ([`KeyMatchFilter`]).
    /// Returns the filter, for its counts.
    ///
    /// It goes after the scan's own filters where they and the keys leave
    /// other columns to spare. Where they read every column, it goes first
    /// if those filters read columns the keys do not: those are then
    /// decoded only for rows with a match. TPC-H Q4's lineitem scan
    /// (`l_commitdate < l_receiptdate`, keys `l_orderkey`) decodes its
    /// dates for 230K of 6M rows.
    fn push_key_filter(&mut self, morsels: &mut MorselInput) -> Option<Arc<KeyMatchFilter>> {
        let plan = &self.plan;
        let keeps_unmatched_probe_rows =
            plan.probe_outer || (plan.probe_is_left && plan.left_only == Some(false));
        if keeps_unmatched_probe_rows {
            return None;
        }
        let (columns, spares) = morsels.scan_columns(&self.probe_keys)?;
        let key_columns: Vec<usize> = columns.iter().flat_map(PhysicalExpr::columns).collect();
        let filters_read_others = (morsels.filter.exprs().iter())
            .flat_map(PhysicalExpr::columns)
            .any(|c| !key_columns.contains(&c));
        if !spares && !filters_read_others {
            return None;
        }
        let (expr, filter) = KeyMatchFilter::over(self.keys.clone(), columns);
        match spares {
            true => morsels.filter.push(expr),
            false => morsels.filter.push_first(expr),
        }
        self.prefiltered = true;
        Some(filter)
    }

    /// Joins one probe batch; `None` when this batch emits nothing by itself.
    pub fn probe(&self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        let plan = &self.plan;
        let keys = self
            .probe_keys
            .iter()
            .map(|k| evaluate_array(k, batch))
            .collect::<Result<Vec<_>>>()?;
        let mut first = Vec::new();
        self.keys.first_rows(&keys, !self.prefiltered, &mut first)?;
        let mut probe_idx: Vec<u32> = Vec::new();
        let mut build_idx: Vec<u32> = Vec::new();
        // Semi/anti without a pair filter: the first key match decides.
        let early = match plan.left_only {
            Some(semi) if plan.probe_is_left && self.filter.is_none() => Some(semi),
            _ => None,
        };
        // Pairs before `checked` passed the pair filter. Candidates are
        // filtered every PAIR_CHUNK pairs, so that a key shared by many
        // rows (a nested-loop join's one constant key) never holds more
        // than that many unfiltered pairs in memory.
        let mut checked = 0;
        for (i, &b) in first.iter().enumerate() {
            let mut b = b;
            if let Some(semi) = early {
                if (b != NONE) == semi {
                    probe_idx.push(i as u32);
                }
                continue;
            }
            while b != NONE {
                probe_idx.push(i as u32);
                build_idx.push(b);
                b = self.keys.table.next_row(b);
                if let Some(f) = &self.filter
                    && probe_idx.len() - checked >= PAIR_CHUNK
                {
                    self.keep_passing(f, batch, (&mut probe_idx, &mut build_idx), checked)?;
                    checked = probe_idx.len();
                }
            }
        }
        if early.is_some() {
            return gather(&self.schema, &[(batch, &probe_idx)], self.output.as_deref()).map(Some);
        }
        if let Some(f) = &self.filter {
            self.keep_passing(f, batch, (&mut probe_idx, &mut build_idx), checked)?;
        }
        if !self.matched.is_empty() {
            for &b in &build_idx {
                self.matched[b as usize].store(true, Ordering::Relaxed);
            }
        }
        let probe_hit = || {
            let mut hit = vec![false; batch.num_rows()];
            probe_idx.iter().for_each(|&p| hit[p as usize] = true);
            hit
        };
        match plan.left_only {
            Some(semi) if plan.probe_is_left => {
                let hit = probe_hit();
                let rows: Vec<u32> = (0..batch.num_rows() as u32)
                    .filter(|&i| hit[i as usize] == semi)
                    .collect();
                return gather(&self.schema, &[(batch, &rows)], self.output.as_deref()).map(Some);
            }
            Some(_) => return Ok(None),
            None => {}
        }
        if plan.probe_outer {
            let hit = probe_hit();
            for i in (0..batch.num_rows()).filter(|&i| !hit[i]) {
                probe_idx.push(i as u32);
                build_idx.push(NONE);
            }
        }
        gather_pair(
            (self.output.as_deref(), &self.schema),
            plan,
            (batch, &probe_idx),
            (&self.build, &build_idx),
        )
        .map(Some)
    }

    /// Keeps the pairs from `from` on that pass the pair filter `f`.
    fn keep_passing(
        &self,
        f: &PairFilter,
        batch: &RecordBatch,
        (probe_idx, build_idx): (&mut Vec<u32>, &mut Vec<u32>),
        from: usize,
    ) -> Result<()> {
        let pairs = gather_pair(
            (Some(&f.columns), &f.schema),
            &self.plan,
            (batch, &probe_idx[from..]),
            (&self.build, &build_idx[from..]),
        )?;
        let mask = evaluate_mask(&f.expr, &pairs)?;
        let mut kept = from;
        for (j, pass) in mask.values().iter().enumerate() {
            if pass {
                probe_idx[kept] = probe_idx[from + j];
                build_idx[kept] = build_idx[from + j];
                kept += 1;
            }
        }
        probe_idx.truncate(kept);
        build_idx.truncate(kept);
        Ok(())
    }

    /// After all probing: the build rows that the matched bitmap decides
    /// (unmatched rows of a preserved build side; semi/anti on the build side).
    pub fn finish(&self) -> Result<Option<RecordBatch>> {
        let plan = &self.plan;
        let wanted = match plan.left_only {
            Some(semi) if !plan.probe_is_left => Some(semi),
            None if plan.build_outer => Some(false),
            _ => None,
        };
        let Some(want) = wanted else { return Ok(None) };
        let rows: Vec<u32> = (0..self.build.num_rows() as u32)
            .filter(|&i| self.matched[i as usize].load(Ordering::Relaxed) == want)
            .collect();
        if rows.is_empty() {
            return Ok(None);
        }
        Ok(Some(if plan.left_only.is_some() {
            gather(
                &self.schema,
                &[(&self.build, &rows)],
                self.output.as_deref(),
            )?
        } else {
            let none = vec![NONE; rows.len()];
            let empty_probe = RecordBatch::new_empty(self.probe_schema.clone());
            gather_pair(
                (self.output.as_deref(), &self.schema),
                plan,
                (&empty_probe, &none),
                (&self.build, &rows),
            )?
        }))
    }
}

/// What a hash join computes, apart from its inputs.
#[derive(Clone, Copy)]
pub struct JoinSpec<'a> {
    /// Key expressions over the left input.
    pub left_keys: &'a [PhysicalExpr],
    /// Key expressions over the right input (of the left keys' types).
    pub right_keys: &'a [PhysicalExpr],
    /// The kind of join.
    pub how: JoinType,
    /// Which side the table is built on.
    pub build_side: BuildSide,
    /// The condition beyond the keys, over the pair's columns.
    pub filter: Option<&'a PhysicalExpr>,
    /// The emitted columns and their schema.
    pub output: JoinOutput<'a>,
    /// The memory the build side reserves.
    pub budget: Budget<'a>,
}

/// Bytes a build side's hash table takes per row beside the row itself:
/// the hash, the chain link, the table slot and the matched flag.
pub const BUILD_BYTES_PER_ROW: usize = 32;

/// Bytes a build side of `batches` takes: its rows copied into one batch,
/// and [`BUILD_BYTES_PER_ROW`] more per row.
pub(super) fn build_memory(batches: &[RecordBatch]) -> usize {
    rows_memory_size(batches) + row_count(batches) * BUILD_BYTES_PER_ROW
}

/// Joins `left` and `right` on equal keys, both materialized. A build side
/// that the query's memory cannot hold turns the join into a grace hash
/// join (`exec/columnar/join_spill.rs`).
pub fn hash_join(
    left: (Vec<RecordBatch>, SchemaRef),
    right: (Vec<RecordBatch>, SchemaRef),
    spec: &JoinSpec<'_>,
) -> Result<Vec<RecordBatch>> {
    join_at_level(left, right, spec, 0)
}

/// [`hash_join`] at `level` of grace partitioning.
pub(super) fn join_at_level(
    (left, left_schema): (Vec<RecordBatch>, SchemaRef),
    (right, right_schema): (Vec<RecordBatch>, SchemaRef),
    spec: &JoinSpec<'_>,
    level: u32,
) -> Result<Vec<RecordBatch>> {
    let build_left = match spec.build_side {
        BuildSide::Left => true,
        BuildSide::Right => false,
        BuildSide::Smaller => row_count(&left) < row_count(&right),
    };
    let mut held = spec.budget.pool.reservation("hash join");
    if let Err(e) = held.try_grow(build_memory(if build_left { &left } else { &right })) {
        let sides = [(&left, &left_schema), (&right, &right_schema)];
        let read = sides.map(|(batches, _)| {
            move |emit: &mut dyn FnMut(RecordBatch) -> Result<()>| {
                batches.iter().try_for_each(|b| emit(b.clone()))
            }
        });
        return super::join_spill::grace_join(
            [&read[0], &read[1]],
            [left_schema.clone(), right_schema.clone()],
            spec,
            (level, e),
        );
    }
    let l = JoinSide {
        batches: left,
        schema: left_schema,
        keys: spec.left_keys,
    };
    let r = JoinSide {
        batches: right,
        schema: right_schema,
        keys: spec.right_keys,
    };
    let (build, mut probe) = if build_left { (l, r) } else { (r, l) };
    let probe_batches = std::mem::take(&mut probe.batches);
    let table = JoinTable::new(
        build,
        &probe,
        build_left,
        spec.how,
        spec.filter,
        spec.output,
    )?;
    // Probe in parallel, one output batch per probe batch.
    let mut out: Vec<RecordBatch> = probe_batches
        .par_iter()
        .map(|b| table.probe(b))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .filter(|b| b.num_rows() > 0)
        .collect();
    out.extend(table.finish()?);
    Ok(out)
}

/// A table built on `build` for [`super::ProbeStep`], its memory reserved,
/// with the build keys' filter pushed into `morsels` where it can go
/// (`join_filter.rs`); or `build` back when the query's memory cannot hold
/// it (the caller then joins another way, which can spill).
pub fn probe_table<'a>(
    build: JoinSide<'a>,
    probe: (&mut MorselInput, &JoinSide<'_>),
    build_is_left: bool,
    spec: &JoinSpec<'_>,
) -> Result<std::result::Result<JoinTable, JoinSide<'a>>> {
    let mut held = spec.budget.pool.reservation("hash join");
    if held.try_grow(build_memory(&build.batches)).is_err() {
        return Ok(Err(build));
    }
    let (morsels, probe) = probe;
    let mut table = JoinTable::new(
        build,
        probe,
        build_is_left,
        spec.how,
        spec.filter,
        spec.output,
    )?;
    table.push_key_filter(morsels);
    table._held = Some(held);
    Ok(Ok(table))
}

/// Rows a pushed-down build-key filter (`join_filter.rs`) checked, and those that passed.
pub type KeyFilterCounts = (usize, usize);

/// Joins a materialized `build` side with a `probe` input that streams in as
/// morsels: each thread probes the batches it reads. `build_is_left` says
/// which side of the join the built rows are. Where it can, the join first
/// adds its build keys to the probe scan's filters (`join_filter.rs`);
/// then the second value is the (rows checked, rows passed) of that filter.
/// A build side that the query's memory cannot hold turns the join into a
/// grace hash join, both sides partitioned to disk.
pub fn hash_join_streaming(
    build: JoinSide,
    probe: (&mut MorselInput, JoinSide),
    build_is_left: bool,
    spec: &JoinSpec<'_>,
) -> Result<(Vec<RecordBatch>, Option<KeyFilterCounts>)> {
    let (morsels, probe) = probe;
    let mut held = spec.budget.pool.reservation("hash join");
    if let Err(e) = held.try_grow(build_memory(&build.batches)) {
        let read_build = |emit: &mut dyn FnMut(RecordBatch) -> Result<()>| {
            build.batches.iter().try_for_each(|b| emit(b.clone()))
        };
        let read_probe =
            |emit: &mut dyn FnMut(RecordBatch) -> Result<()>| morsels.for_each_ordered(emit);
        let out = super::join_spill::grace_join_sides(
            (&read_build, build.schema.clone()),
            (&read_probe, probe.schema.clone()),
            build_is_left,
            spec,
            (0, e),
        )?;
        return Ok((out, None));
    }
    let mut table = JoinTable::new(
        build,
        &probe,
        build_is_left,
        spec.how,
        spec.filter,
        spec.output,
    )?;
    let key_filter = table.push_key_filter(morsels);
    let parts: Vec<Vec<RecordBatch>> = morsels.fold(Vec::new, |out, batch| {
        if let Some(b) = table
            .probe(&batch.materialize()?)?
            .filter(|b| b.num_rows() > 0)
        {
            out.push(b);
        }
        Ok(())
    })?;
    let mut out: Vec<RecordBatch> = parts.into_iter().flatten().collect();
    out.extend(table.finish()?);
    Ok((out, key_filter.map(|f| f.counts())))
}

/// [`hash_join_from_disk`] with each pair of partitions joined only when
/// a consumer reads its unit: the join's output is never held whole.
/// `spill` is `spec`'s spill directory, shared with the units; `rows`
/// counts the rows they hand over.
pub fn hash_join_from_disk_deferred(
    (build, build_schema): (&MorselInput, SchemaRef),
    (probe, probe_schema): (&MorselInput, SchemaRef),
    build_is_left: bool,
    (spec, spill): (&JoinSpec<'_>, Arc<crate::memory::SpillDir>),
    rows: Arc<std::sync::atomic::AtomicUsize>,
) -> Result<Vec<crate::io::ScanUnit>> {
    let read_build = |emit: &mut dyn FnMut(RecordBatch) -> Result<()>| build.for_each_ordered(emit);
    let read_probe = |emit: &mut dyn FnMut(RecordBatch) -> Result<()>| probe.for_each_ordered(emit);
    super::join_spill::grace_join_sides_deferred(
        (&read_build, build_schema),
        (&read_probe, probe_schema),
        build_is_left,
        (spec, spill),
        rows,
    )
}

/// Joins two scans whose build side is expected to outgrow the query's
/// memory (`why` says by how much) as a grace hash join from the start:
/// both scans stream straight into spill files, and the build side is
/// never held whole. `build_is_left` says which scan `build` reads.
pub fn hash_join_from_disk(
    (build, build_schema): (&MorselInput, SchemaRef),
    (probe, probe_schema): (&MorselInput, SchemaRef),
    build_is_left: bool,
    spec: &JoinSpec<'_>,
    why: SlothError,
) -> Result<Vec<RecordBatch>> {
    let read_build = |emit: &mut dyn FnMut(RecordBatch) -> Result<()>| build.for_each_ordered(emit);
    let read_probe = |emit: &mut dyn FnMut(RecordBatch) -> Result<()>| probe.for_each_ordered(emit);
    super::join_spill::grace_join_sides(
        (&read_build, build_schema),
        (&read_probe, probe_schema),
        build_is_left,
        spec,
        (0, why),
    )
}

fn indices(idx: &[u32]) -> UInt32Array {
    if !idx.contains(&NONE) {
        // No nulls: one copy, and `take` skips its null checks.
        return UInt32Array::from(idx.to_vec());
    }
    // NONE marks "no row": a null index, which `take` turns into a null value.
    UInt32Array::from_iter(idx.iter().map(|&i| (i != NONE).then_some(i)))
}

/// How one side's rows are gathered: all of them in order (the columns
/// are shared, not copied), or by index.
enum Rows {
    Identity,
    Take(UInt32Array),
}

impl Rows {
    /// Rows `idx` of a side of `n` rows (NONE: null).
    fn new(n: usize, idx: &[u32]) -> Self {
        let identity = idx.len() == n && idx.iter().enumerate().all(|(i, &r)| r as usize == i);
        // Every row once, in order: a foreign-key probe where all match.
        if identity {
            Rows::Identity
        } else {
            Rows::Take(indices(idx))
        }
    }

    fn of(&self, column: &ArrayRef) -> Result<ArrayRef> {
        Ok(match self {
            Rows::Identity => column.clone(),
            Rows::Take(idx) => take(column.as_ref(), idx, None)?,
        })
    }
}

/// Rows `idx` of each side in turn, as a batch of `schema` holding the
/// `output` columns of the sides' columns laid side by side (all when
/// `None`); columns not emitted are not gathered.
fn gather(
    schema: &SchemaRef,
    sides: &[(&RecordBatch, &[u32])],
    output: Option<&[usize]>,
) -> Result<RecordBatch> {
    let rows = sides.last().map_or(0, |(_, idx)| idx.len());
    let layout: Vec<(usize, usize)> = sides
        .iter()
        .enumerate()
        .flat_map(|(s, (b, _))| (0..b.num_columns()).map(move |c| (s, c)))
        .collect();
    let mut gathers: Vec<Option<Rows>> = sides.iter().map(|_| None).collect();
    let columns = join_outputs(layout, output)
        .into_iter()
        .map(|(s, c)| {
            let (batch, idx) = sides[s];
            gathers[s]
                .get_or_insert_with(|| Rows::new(batch.num_rows(), idx))
                .of(batch.column(c))
        })
        .collect::<Result<Vec<_>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

/// The pairs (probe row, build row) laid out left side first.
fn gather_pair(
    (output, schema): JoinOutput,
    plan: &Plan,
    probe: (&RecordBatch, &[u32]),
    build: (&RecordBatch, &[u32]),
) -> Result<RecordBatch> {
    if plan.probe_is_left {
        gather(schema, &[probe, build], output)
    } else {
        gather(schema, &[build, probe], output)
    }
}

/// Every pair of rows, left-major, in batches of about 64K pairs. The output's memory (the index arrays and
/// the gathered columns, estimated from the inputs' bytes per row) is
/// reserved first, so a product past the memory limit is an error, not
/// a process the kernel kills.
pub fn cross_join(
    left: &[RecordBatch],
    right: &[RecordBatch],
    schema: &SchemaRef,
    budget: Budget<'_>,
) -> Result<Vec<RecordBatch>> {
    let pairs = |l: &RecordBatch, r: &RecordBatch| l.num_rows() * r.num_rows();
    let per_row = |batches: &[RecordBatch]| {
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        crate::exec::rows_memory_size(batches) / rows.max(1)
    };
    let pair_bytes = per_row(left) + per_row(right) + 2 * size_of::<u32>();
    let total: usize = (left.iter())
        .flat_map(|l| right.iter().map(move |r| pairs(l, r)))
        .sum();
    let mut reservation = budget.pool.reservation("cross join");
    reservation.try_grow(total.saturating_mul(pair_bytes))?;
    let mut out = Vec::new();
    for l in left {
        for r in right {
            let nr = r.num_rows();
            if nr == 0 {
                continue;
            }
            let left_rows_per_batch = (CROSS_BATCH_ROWS / nr).max(1);
            for start in (0..l.num_rows()).step_by(left_rows_per_batch) {
                budget.cancel.check()?;
                let end = (start + left_rows_per_batch).min(l.num_rows());
                let li: Vec<u32> = (start as u32..end as u32)
                    .flat_map(|i| std::iter::repeat_n(i, nr))
                    .collect();
                let ri: Vec<u32> = (start..end).flat_map(|_| 0..nr as u32).collect();
                out.push(gather(schema, &[(l, &li), (r, &ri)], None)?);
            }
        }
    }
    Ok(out)
}

/// About how many pairs a cross join's output batch holds.
const CROSS_BATCH_ROWS: usize = 64 * 1024;
