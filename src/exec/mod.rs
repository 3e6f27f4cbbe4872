//! Executors: run a [`PhysicalPlan`] to Arrow record batches.
//!
//! [`execute`] walks the plan and dispatches each node to its columnar
//! operator (`columnar/`), timing every node. The per-node [`NodeMetrics`]
//! feed `EXPLAIN ANALYZE` and the profiler.

mod cancel;
pub mod columnar;
#[cfg(feature = "datafusion")]
pub mod datafusion;
mod probe_pipeline;
pub mod rowwise;
mod shared;
mod streamed_sort;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::record_batch::RecordBatch;

use crate::config::{Device, SessionConfig};
use crate::error::{Result, SlothError};
use crate::memory::{MemoryPool, SpillDir};
use crate::physical::PhysicalPlan;

pub use cancel::{CancelToken, ScanProgress};

/// What one operator did during a run.
#[derive(Debug, Clone)]
pub struct NodeMetrics {
    /// Position in a pre-order walk of the plan (root = 0).
    pub id: usize,
    /// Depth in the tree (root = 0).
    pub depth: usize,
    /// The operator's one-line description.
    pub name: String,
    /// Rows produced.
    pub rows_out: usize,
    /// Batches produced.
    pub batches_out: usize,
    /// Bytes of the produced arrays.
    pub bytes_out: usize,
    /// Wall time in this operator, excluding its inputs.
    pub self_time: Duration,
    /// Extra counters (e.g. row groups pruned).
    pub extra: String,
    /// For scans: bytes of Arrow data decoded, before filtering.
    pub bytes_in: usize,
    /// Bytes of intermediate arrays the node's fused expressions did not
    /// materialize (over the plan's runs so far).
    pub fused_bytes_saved: usize,
}

/// The memory a query's operators reserved at most, and what they spilled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryUse {
    /// Most bytes reserved at once.
    pub peak: usize,
    /// The limit.
    pub limit: usize,
    /// Bytes written to spill files.
    pub spilled_bytes: u64,
    /// Spill files written.
    pub spill_files: usize,
    /// Each kind of operator's peak: the most its reservations held at once.
    pub by_operator: Vec<(&'static str, usize)>,
}

impl std::fmt::Display for MemoryUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::memory::format_bytes;
        let limit = match self.limit {
            usize::MAX => "no limit".to_string(),
            l => format!("a limit of {}", format_bytes(l as u64)),
        };
        write!(
            f,
            "memory: operators reserved at most {} under {limit}",
            format_bytes(self.peak as u64)
        )?;
        let by_operator: Vec<String> = (self.by_operator.iter())
            .filter(|(_, peak)| *peak > 0)
            .map(|(name, peak)| format!("{name} {}", format_bytes(*peak as u64)))
            .collect();
        if !by_operator.is_empty() {
            write!(f, " ({})", by_operator.join(", "))?;
        }
        match self.spill_files {
            0 => write!(f, "; nothing spilled"),
            n => write!(
                f,
                "; spilled {} in {n} files",
                format_bytes(self.spilled_bytes)
            ),
        }
    }
}

/// Collects [`NodeMetrics`] during one execution.
#[derive(Debug)]
pub struct ExecContext {
    metrics: Mutex<Vec<NodeMetrics>>,
    /// Let an aggregate pull morsels straight from a scan pipeline (the
    /// default); off, every operator runs as a step of its own, so its time
    /// can be measured separately.
    pub fuse: bool,
    /// The settings the query runs under (the device operators run on).
    pub config: SessionConfig,
    /// Count the bytes each operator outputs (`EXPLAIN ANALYZE`); off, its
    /// `bytes_out` and a scan's `bytes_in` stay 0. Counting walks every
    /// buffer of every batch, 2% of TPC-H Q9's samples.
    pub count_bytes: bool,
    /// Groups past which an aggregation thread's table splits into hash
    /// partitions ([`columnar::SPLIT_GROUPS`] by default; tests lower it to
    /// reach the split paths with small data).
    pub agg_split_groups: usize,
    /// Subplans that occur more than once, and their results.
    /// Replaced at the start of every execution: results never outlive it.
    shared: Mutex<std::sync::Arc<shared::SharedResults>>,
    /// Decompressed pages of columns that several scans read; replaced at
    /// the start of every execution too.
    pages: Mutex<std::sync::Arc<crate::io::SharedPages>>,
    /// The memory budget operators reserve from (`config.memory_limit`).
    pub memory: std::sync::Arc<MemoryPool>,
    /// Where operators spill; emptied and removed when the context goes.
    pub spill: Arc<SpillDir>,
    /// Stops the query between operators and between units of input.
    pub cancel: CancelToken,
}

impl Default for ExecContext {
    fn default() -> Self {
        Self::new(&SessionConfig::default())
    }
}

impl ExecContext {
    /// The current execution's shared pages.
    fn pages(&self) -> std::sync::Arc<crate::io::SharedPages> {
        self.pages.lock().expect("shared pages lock").clone()
    }

    /// What the query held and spilled so far.
    pub fn memory_use(&self) -> MemoryUse {
        let (spilled_bytes, spill_files) = self.memory.spilled();
        MemoryUse {
            peak: self.memory.peak(),
            limit: self.memory.limit(),
            spilled_bytes,
            spill_files,
            by_operator: self.memory.peaks(),
        }
    }

    /// The memory operators run in.
    pub fn budget(&self) -> columnar::Budget<'_> {
        columnar::Budget {
            pool: &self.memory,
            spill: &self.spill,
            cancel: &self.cancel,
        }
    }

    /// A context that runs under `config`.
    pub fn new(config: &SessionConfig) -> Self {
        let memory = MemoryPool::new(config.memory_limit_bytes());
        crate::io::set_memory_limit(config.memory_limit_bytes());
        ExecContext {
            metrics: Mutex::new(Vec::new()),
            fuse: true,
            config: config.clone(),
            count_bytes: false,
            agg_split_groups: columnar::SPLIT_GROUPS,
            shared: Default::default(),
            pages: Default::default(),
            spill: Arc::new(
                SpillDir::new(config.temp_dir_path(), memory.clone())
                    .with_compression(config.spill_compression),
            ),
            memory,
            cancel: CancelToken::default(),
        }
    }

    /// This context, stopped by `cancel`.
    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The units of `plan` if it is a scan or a pipeline over one (see
    /// [`columnar::MorselInput::stream`]), reading with this execution's
    /// shared pages and stopping when the query is cancelled.
    fn morsels(&self, plan: &PhysicalPlan) -> Result<Option<columnar::MorselInput>> {
        Ok(columnar::MorselInput::stream(plan, Some(&self.pages()))?
            .map(|m| m.cancellable(self.cancel.clone())))
    }

    /// This context, counting the bytes each operator outputs.
    pub fn counting_bytes(mut self) -> Self {
        self.count_bytes = true;
        self
    }

    /// This context, with aggregation tables splitting past `groups`.
    #[cfg(any(test, feature = "internals"))]
    pub fn with_agg_split_groups(mut self, groups: usize) -> Self {
        self.agg_split_groups = groups;
        self
    }

    /// A context that runs every operator as its own step (no fusion).
    pub fn unfused() -> Self {
        ExecContext {
            fuse: false,
            ..Default::default()
        }
    }

    fn record(
        &self,
        id: usize,
        depth: usize,
        plan: &PhysicalPlan,
        out: &[RecordBatch],
        self_time: Duration,
        extra: String,
    ) {
        self.metrics
            .lock()
            .expect("metrics lock")
            .push(NodeMetrics {
                id,
                depth,
                name: plan.describe(),
                rows_out: out.iter().map(|b| b.num_rows()).sum(),
                batches_out: out.len(),
                bytes_out: if self.count_bytes {
                    distinct_memory_size(out)
                } else {
                    0
                },
                self_time,
                extra,
                bytes_in: match plan {
                    PhysicalPlan::Scan { metrics, .. } => metrics
                        .bytes_read
                        .load(std::sync::atomic::Ordering::Relaxed),
                    _ => 0,
                },
                fused_bytes_saved: plan.fused_bytes_saved(),
            });
    }

    fn set_rows(&self, id: usize, rows: usize) {
        let mut m = self.metrics.lock().expect("metrics lock");
        if let Some(node) = m.iter_mut().find(|n| n.id == id) {
            node.rows_out = rows;
        }
    }

    /// Records the `count` nodes of a reused subtree at ids `id..` as copies
    /// of its first run's nodes (`first..`), with no time of their own.
    fn record_reuse(&self, first: usize, id: usize, count: usize, depth: usize) {
        let mut metrics = self.metrics.lock().expect("metrics lock");
        let Some(first_depth) = metrics.iter().find(|m| m.id == first).map(|m| m.depth) else {
            return;
        };
        let copies: Vec<NodeMetrics> = metrics
            .iter()
            .filter(|m| (first..first + count).contains(&m.id))
            .map(|m| NodeMetrics {
                id: id + (m.id - first),
                depth: depth + m.depth - first_depth,
                self_time: Duration::ZERO,
                extra: if m.id == first {
                    "reused: an identical subplan ran earlier".into()
                } else {
                    m.extra.clone()
                },
                fused_bytes_saved: 0,
                ..m.clone()
            })
            .collect();
        metrics.extend(copies);
    }

    /// Metrics of every node, in pre-order.
    pub fn metrics(&self) -> Vec<NodeMetrics> {
        let mut m = self.metrics.lock().expect("metrics lock").clone();
        m.sort_by_key(|n| n.id);
        m
    }
}

/// Bytes of memory that `batches` hold, each buffer counted once.
///
/// Batches often share buffers: a join whose probe rows all match passes
/// the probe's columns through, and `take` on string views keeps every data
/// buffer of its source. `RecordBatch::get_array_memory_size` counts a
/// buffer once per array holding it, which put hundreds of gigabytes
/// against a 300K-row join in EXPLAIN ANALYZE.
pub fn distinct_memory_size(batches: &[RecordBatch]) -> usize {
    fn visit(data: &arrow::array::ArrayData, seen: &mut HashSet<usize>, total: &mut usize) {
        let nulls = data.nulls().map(|n| n.buffer());
        for buffer in data.buffers().iter().chain(nulls) {
            if seen.insert(buffer.data_ptr().as_ptr() as usize) {
                *total += buffer.capacity().max(buffer.len());
            }
        }
        for child in data.child_data() {
            visit(child, seen, total);
        }
    }
    let mut seen = HashSet::new();
    let mut total = 0;
    for column in batches.iter().flat_map(|b| b.columns()) {
        visit(&column.to_data(), &mut seen, &mut total);
    }
    total
}

/// Bytes the rows of `batches` take, counting only the part of each
/// buffer a (sliced) batch covers: what a copy of them would take. Slices
/// of one large batch would count the whole buffer each by
/// [`RecordBatch::get_array_memory_size`].
pub fn rows_memory_size(batches: &[RecordBatch]) -> usize {
    batches
        .iter()
        .flat_map(|b| b.columns())
        .map(|c| {
            c.to_data()
                .get_slice_memory_size()
                .unwrap_or_else(|_| c.get_array_memory_size())
        })
        .sum()
}

/// Runs `plan` and returns its output batches.
#[cfg(any(test, feature = "internals"))]
pub fn execute(plan: &PhysicalPlan) -> Result<Vec<RecordBatch>> {
    execute_with(plan, &ExecContext::default())
}

/// Runs `plan`, recording metrics in `ctx`.
pub fn execute_with(plan: &PhysicalPlan, ctx: &ExecContext) -> Result<Vec<RecordBatch>> {
    within_execution(plan, ctx, || {
        let mut next_id = 0;
        run(plan, ctx, &mut next_id, 0).map(|(b, _)| b)
    })
}

/// Runs `work` as one execution of `plan`: with its shared subplans and
/// pages, which never outlive it.
fn within_execution<T>(plan: &PhysicalPlan, ctx: &ExecContext, work: impl FnOnce() -> T) -> T {
    *ctx.shared.lock().expect("shared results lock") =
        std::sync::Arc::new(shared::SharedResults::for_plan(plan));
    *ctx.pages.lock().expect("shared pages lock") =
        std::sync::Arc::new(crate::io::SharedPages::new(plan.parquet_column_readers()));
    let out = work();
    *ctx.pages.lock().expect("shared pages lock") = Default::default();
    out
}

/// Runs `plan` and hands its output to `emit` batch by batch, in order.
///
/// A scan pipeline at the root streams: units are read a few at a time,
/// so a filter-and-rewrite of any size holds only those units; so does a
/// chain of joins that probes as the scan's morsels (`probe_pipeline.rs`),
/// holding its build sides. A sort at
/// the root over a scan pipeline sorts its input as it arrives, spilling
/// runs past the memory limit, and merges into `emit`. Any other plan runs
/// whole and is then handed over.
pub fn execute_into(
    plan: &PhysicalPlan,
    ctx: &ExecContext,
    emit: &mut dyn FnMut(RecordBatch) -> Result<()>,
) -> Result<()> {
    within_execution(plan, ctx, || {
        let start = Instant::now();
        if let Some(opened) = probe_pipeline::open(plan, ctx, &mut 0, 0)? {
            opened.morsels.for_each_ordered(emit)?;
            let rows = opened
                .morsels
                .rows
                .load(std::sync::atomic::Ordering::Relaxed);
            opened.fused.record_as_output(ctx, rows, start.elapsed());
            return Ok(());
        }
        if let Some((sort, input)) = streamed_sort::SortOf::of(plan)
            && let Some(opened) = probe_pipeline::open(input, ctx, &mut 1, 1)?
        {
            let probe_pipeline::Opened { mut morsels, fused } = opened;
            let how = sort.run(&mut morsels, ctx, emit)?;
            let rows = morsels.rows.load(std::sync::atomic::Ordering::Relaxed);
            let note = format!("{how}; streamed into the output");
            ctx.record(0, 0, plan, &[], start.elapsed() - fused.build_time, note);
            fused.record(ctx, rows);
            return Ok(());
        }
        let mut next_id = 0;
        for b in run(plan, ctx, &mut next_id, 0)?.0 {
            emit(b)?;
        }
        Ok(())
    })
}

/// Runs a node, or reuses the output of an identical subplan that already
/// ran; returns its output and its inclusive time.
fn run(
    plan: &PhysicalPlan,
    ctx: &ExecContext,
    next_id: &mut usize,
    depth: usize,
) -> Result<(Vec<RecordBatch>, Duration)> {
    let shared = ctx.shared.lock().expect("shared results lock").clone();
    let Some(key) = shared.key(plan) else {
        return run_node(plan, ctx, next_id, depth);
    };
    let id = *next_id;
    if let Some((first, out)) = shared.get(&key) {
        *next_id += shared::node_count(plan);
        ctx.record_reuse(first, id, shared::node_count(plan), depth);
        return Ok((out, Duration::ZERO));
    }
    let (out, time) = run_node(plan, ctx, next_id, depth)?;
    shared.put(key, id, &out);
    Ok((out, time))
}

/// Runs a node; returns its output and its inclusive time.
fn run_node(
    plan: &PhysicalPlan,
    ctx: &ExecContext,
    next_id: &mut usize,
    depth: usize,
) -> Result<(Vec<RecordBatch>, Duration)> {
    ctx.cancel.check()?;
    let id = *next_id;
    *next_id += 1;
    // A group-by or join the GPU may take: run the inputs, offer the
    // operator to the device, and fall back to the CPU operator with the
    // reason recorded.
    if wants_gpu(ctx.config.device, plan) {
        let mut inputs = Vec::new();
        let mut child_time = Duration::ZERO;
        for child in plan.children() {
            let (batches, t) = run(child, ctx, next_id, depth + 1)?;
            child_time += t;
            inputs.push(batches);
        }
        let start = Instant::now();
        let (out, note) = match crate::gpu::try_operator(ctx.config.device, plan, &inputs)? {
            crate::gpu::Outcome::Ran(batch, note) => (vec![batch], note),
            crate::gpu::Outcome::Declined(why) => (columnar::run_operator(plan, inputs, ctx)?, why),
        };
        let self_time = start.elapsed();
        ctx.record(id, depth, plan, &out, self_time, note);
        return Ok((out, child_time + self_time));
    }
    // A hash aggregate over a scan pipeline pulls morsels straight from the
    // reader instead of running its input as a separate step; the filter or
    // projection above it (a HAVING clause) runs on its groups as they are
    // emitted.
    if ctx.fuse {
        let fused = match plan {
            PhysicalPlan::HashAggregate { .. } => {
                run_fused_aggregate(plan, None, ctx, next_id, (id, depth))?
            }
            PhysicalPlan::Sort { .. } => {
                streamed_sort::run_streamed_sort(plan, ctx, next_id, (id, depth))?
            }
            // Not where the aggregate is offered to the GPU or its result
            // is shared with another use of the same subplan.
            PhysicalPlan::Pipeline { input, stages, .. }
                if matches!(**input, PhysicalPlan::HashAggregate { .. })
                    && probe_pipeline::fusable(input, ctx) =>
            {
                run_fused_aggregate(input, Some((plan, stages)), ctx, next_id, (id, depth))?
            }
            _ => None,
        };
        if let Some(done) = fused {
            return Ok(done);
        }
    }
    // A hash join with a scan pipeline on one side: build on the other side
    // and stream the scan through the probe, when the built side turns out
    // no larger than the scan is expected to be (after its filters). The
    // scan streamed is the larger expected one when both sides are scans.
    // Otherwise both sides are materialized and the smaller one is built on.
    if let (PhysicalPlan::HashJoin { left, right, .. }, true) = (plan, ctx.fuse)
        && let Some((stream_left, estimate)) = match (streamable_rows(left), streamable_rows(right))
        {
            (Some(l), Some(r)) if l > r => Some((true, l)),
            (_, Some(r)) => Some((false, r)),
            (Some(l), None) => Some((true, l)),
            (None, None) => None,
        }
    {
        let probe_pipeline::JoinSides {
            spec,
            built: (built, built_keys, built_id),
            other: (streamed, streamed_keys, streamed_id),
        } = probe_pipeline::join_sides(plan, ctx, !stream_left, (id, next_id));
        // A scan too large to build on goes to disk with the other side,
        // without being read into memory first.
        if let Some(why) = too_large_to_build(built, ctx)
            && let (Some(build), Some(probe)) = (ctx.morsels(built)?, ctx.morsels(streamed)?)
        {
            let start = Instant::now();
            let out = columnar::hash_join_from_disk(
                (&build, built.schema()),
                (&probe, streamed.schema()),
                !stream_left,
                &spec,
                why,
            )?;
            let elapsed = start.elapsed();
            let read =
                |m: &columnar::MorselInput| m.rows.load(std::sync::atomic::Ordering::Relaxed);
            record_fused(built, ctx, &mut built_id.clone(), depth + 1, read(&build));
            record_fused(
                streamed,
                ctx,
                &mut streamed_id.clone(),
                depth + 1,
                read(&probe),
            );
            let note = "both sides partitioned to disk from their scans".to_string();
            ctx.record(id, depth, plan, &out, elapsed, note);
            return Ok((out, elapsed));
        }
        let (built_batches, built_time) = run(built, ctx, &mut built_id.clone(), depth + 1)?;
        let built_rows: usize = built_batches.iter().map(|b| b.num_rows()).sum();
        if built_rows <= estimate
            && let Some(mut morsels) = ctx.morsels(streamed)?
        {
            let start = Instant::now();
            let build = columnar::JoinSide {
                batches: built_batches,
                schema: built.schema(),
                keys: built_keys,
            };
            let probe = columnar::JoinSide {
                batches: vec![],
                schema: streamed.schema(),
                keys: streamed_keys,
            };
            let (out, key_filter) =
                columnar::hash_join_streaming(build, (&mut morsels, probe), !stream_left, &spec)?;
            let elapsed = start.elapsed();
            let rows_in = morsels.rows.load(std::sync::atomic::Ordering::Relaxed);
            record_fused(streamed, ctx, &mut streamed_id.clone(), depth + 1, rows_in);
            let side = if stream_left { "left" } else { "right" };
            let mut note = format!("{side} (probe) side streamed");
            if let Some((checked, passed)) = key_filter {
                note +=
                    &format!(", build keys filtered its scan: {passed} of {checked} rows passed");
            }
            ctx.record(id, depth, plan, &out, elapsed, note);
            return Ok((out, built_time + elapsed));
        }
        let (streamed_batches, streamed_time) =
            run(streamed, ctx, &mut streamed_id.clone(), depth + 1)?;
        let inputs = if stream_left {
            vec![streamed_batches, built_batches]
        } else {
            vec![built_batches, streamed_batches]
        };
        let start = Instant::now();
        let out = columnar::run_operator(plan, inputs, ctx)?;
        let self_time = start.elapsed();
        ctx.record(id, depth, plan, &out, self_time, String::new());
        return Ok((out, built_time + streamed_time + self_time));
    }
    let mut child_time = Duration::ZERO;
    let mut inputs = Vec::new();
    for child in plan.children() {
        let (batches, t) = run(child, ctx, next_id, depth + 1)?;
        child_time += t;
        inputs.push(batches);
    }
    let start = Instant::now();
    let out = columnar::run_operator(plan, inputs, ctx)?;
    let self_time = start.elapsed();
    let extra = scan_counters(plan);
    ctx.record(id, depth, plan, &out, self_time, extra);
    Ok((out, child_time + self_time))
}

/// Runs hash aggregate `agg` with its input pulled as morsels
/// ([`probe_pipeline::open`]), and the pipeline `then` above it (if any) on
/// its groups as they are emitted; `(id, depth)` is the topmost node's.
/// `None`, with no node numbered, when the input cannot be pulled so.
fn run_fused_aggregate(
    agg: &PhysicalPlan,
    then: Option<(&PhysicalPlan, &[crate::physical::Stage])>,
    ctx: &ExecContext,
    next_id: &mut usize,
    (id, depth): (usize, usize),
) -> Result<Option<(Vec<RecordBatch>, Duration)>> {
    let PhysicalPlan::HashAggregate {
        input,
        keys,
        aggs,
        schema,
    } = agg
    else {
        return Ok(None);
    };
    let start = Instant::now();
    let first_free = *next_id;
    let (agg_id, agg_depth) = match then {
        Some(_) => {
            *next_id += 1;
            (first_free, depth + 1)
        }
        None => (id, depth),
    };
    let Some(opened) = probe_pipeline::open(input, ctx, next_id, agg_depth + 1)? else {
        *next_id = first_free;
        return Ok(None);
    };
    let probe_pipeline::Opened { morsels, fused } = opened;
    let morsels = morsels.selecting().with_codes_for(keys);
    let stages = then.map_or(&[][..], |(_, stages)| stages);
    let out = columnar::hash_aggregate(
        &morsels,
        keys,
        aggs,
        schema,
        ctx.agg_split_groups,
        ctx.budget(),
        stages,
    )?;
    let elapsed = start.elapsed();
    let rows_in = morsels.rows.load(std::sync::atomic::Ordering::Relaxed);
    fused.record(ctx, rows_in);
    let mut notes = Vec::new();
    if out.units_alone > 0 {
        notes.push(format!(
            "{} units aggregated one at a time (key ranges disjoint)",
            out.units_alone
        ));
    }
    if out.rows_by_code > 0 {
        notes.push(format!(
            "{} rows grouped by dictionary code",
            out.rows_by_code
        ));
    }
    let batches = out.batches;
    match then {
        Some((pipeline, _)) => {
            notes.push("its parent's stages run on its groups as they are emitted".into());
            ctx.record(
                agg_id,
                agg_depth,
                agg,
                &[],
                elapsed - fused.build_time,
                notes.join(", "),
            );
            ctx.set_rows(agg_id, out.groups);
            ctx.record(id, depth, pipeline, &batches, Duration::ZERO, String::new());
        }
        None => ctx.record(
            id,
            depth,
            agg,
            &batches,
            elapsed - fused.build_time,
            notes.join(", "),
        ),
    }
    Ok(Some((batches, elapsed)))
}

/// A scan's row-group counters (`row_groups=N pruned=M`, then pages skipped,
/// row groups read late-materialized and pages another scan decompressed,
/// when there were any), or "" for other operators.
fn scan_counters(plan: &PhysicalPlan) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let PhysicalPlan::Scan { metrics, .. } = plan else {
        return String::new();
    };
    let total = metrics.row_groups.load(Relaxed);
    if total == 0 {
        return String::new();
    }
    let mut s = format!(
        "row_groups={total} pruned={}",
        metrics.row_groups_pruned.load(Relaxed)
    );
    let skipped = metrics.rows_skipped_by_pages.load(Relaxed);
    if skipped > 0 {
        s += &format!(" page_rows_skipped={skipped}");
    }
    let late = metrics.late_materialized_row_groups.load(Relaxed);
    if late > 0 {
        s += &format!(" late_materialized={late}");
    }
    let shared = metrics.pages_shared.load(Relaxed);
    if shared > 0 {
        s += &format!(" pages_shared={shared}");
    }
    s
}

/// Rows a scan pipeline is expected to produce (the optimizer's estimate
/// after the scan's filters), or `None` if `plan` is not a scan pipeline or
/// the source's size is unknown.
fn streamable_rows(plan: &PhysicalPlan) -> Option<usize> {
    match plan {
        PhysicalPlan::Scan { estimated_rows, .. } => *estimated_rows,
        PhysicalPlan::Pipeline { input, .. } => streamable_rows(input),
        _ => None,
    }
}

/// Why a join should not build on the scan `plan`: its rows, as the
/// planner expects them, and the hash table over them would take more than
/// the whole memory limit. `None` when they are expected to fit (or
/// nothing is known of them).
fn too_large_to_build(plan: &PhysicalPlan, ctx: &ExecContext) -> Option<SlothError> {
    let rows = streamable_rows(plan)?;
    // Bytes a row takes in memory; variable-width values reckoned at 24.
    let width: usize = (plan.schema().fields().iter())
        .map(|f| f.data_type().primitive_width().unwrap_or(24))
        .sum();
    let need = rows.saturating_mul(width + columnar::BUILD_BYTES_PER_ROW);
    let limit = ctx.budget().pool.limit();
    (need > limit).then(|| {
        SlothError::MemoryLimit(format!(
            "hash join: its build side is expected to need about {}, over the limit of {}",
            crate::memory::format_bytes(need as u64),
            crate::memory::format_bytes(limit as u64)
        ))
    })
}

/// True when an operator should be offered to the GPU path: a group-by or
/// join, with the device forced or emulated, or `auto` with a GPU present
/// and an operator the kernels support. Otherwise the CPU operators run,
/// with their fused morsel paths.
fn wants_gpu(device: Device, plan: &PhysicalPlan) -> bool {
    if !matches!(
        plan,
        PhysicalPlan::HashAggregate { .. } | PhysicalPlan::HashJoin { .. }
    ) {
        return false;
    }
    match device {
        Device::Cpu => false,
        Device::Gpu | Device::Emulate => true,
        Device::Auto => crate::gpu::availability().is_ok() && crate::gpu::supports(plan),
    }
}

/// Records the nodes of a pipeline that ran fused into its parent: their
/// time is the parent's; the top one's output rows are what the parent read.
fn record_fused(
    plan: &PhysicalPlan,
    ctx: &ExecContext,
    next_id: &mut usize,
    depth: usize,
    rows: usize,
) {
    let id = *next_id;
    *next_id += 1;
    let extra = match scan_counters(plan) {
        c if c.is_empty() => "fused into parent".to_string(),
        c => format!("fused into parent; {c}"),
    };
    // Fused nodes produced no batches of their own; their rows are what the parent read.
    ctx.record(id, depth, plan, &[], Duration::ZERO, extra);
    ctx.set_rows(id, rows);
    for child in plan.children() {
        record_fused(child, ctx, next_id, depth + 1, rows);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, StringViewArray};

    use super::*;

    #[test]
    fn shared_buffers_are_counted_once() {
        let ints: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1_000));
        let long = "a string longer than twelve bytes";
        let views: ArrayRef = Arc::new(StringViewArray::from_iter_values((0..1_000).map(|_| long)));
        let batch = RecordBatch::try_from_iter([("i", ints.clone()), ("s", views)]).unwrap();
        let once = distinct_memory_size(std::slice::from_ref(&batch));
        assert!(
            once >= 1_000 * 8 + 1_000 * 16 + 1_000 * long.len(),
            "{once}"
        );
        // The same columns again, whole and sliced: no more memory.
        let slices: Vec<RecordBatch> = (0..10).map(|k| batch.slice(k * 100, 100)).collect();
        let mut all = vec![batch.clone(), batch];
        all.extend(slices);
        assert_eq!(distinct_memory_size(&all), once);
        let naive: usize = all.iter().map(|b| b.get_array_memory_size()).sum();
        assert!(naive > 2 * once, "{naive} vs {once}");
    }
}
