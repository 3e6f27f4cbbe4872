//! A consumer's input opened as morsels through hash joins: a scan, the
//! filters and projections over it, and the hash joins its rows probe on
//! the way up, each join's other side built first. Joined rows go from one
//! probe straight to the next and into the consumer (an aggregate), on
//! every thread at once: the joins' outputs are never materialized, so a
//! chain of joins under an aggregate holds its build sides and the
//! aggregate's table, not its intermediate results.
//!
//! ```text
//! HashAggregate                           HashAggregate, folding morsels of
//!   HashJoin                                scan lineitem
//!     HashJoin                     =>         -> probe table on (orders ⋈ customer)
//!       HashJoin (orders, customer)           -> probe table on supplier
//!       Scan lineitem
//!     Scan supplier
//! ```
//!
//! A join runs so when one side opens as morsels; the larger side, by the
//! planner's estimate, probes. A scan facing a chain of joins (whose
//! estimate is only its own scan's) probes a table built on the chain once
//! the chain has come out no larger than the scan was expected to be. What a join emits after all probing (a
//! preserved build side's unmatched rows, a semi or anti join's build
//! rows) goes through the steps above it once every unit has been read.
//! Where the query's memory cannot hold a build side, the join runs as
//! before (materialized, spilling), and its output feeds the morsels.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::columnar::{self, JoinSide, JoinSpec, MorselInput, ProbeStep};
use super::{
    ExecContext, record_fused, run, scan_counters, shared, streamable_rows, too_large_to_build,
    wants_gpu,
};
use crate::error::{Result, SlothError};
use crate::physical::{BuildSide, PhysicalPlan};
use crate::physical_expr::PhysicalExpr;

/// A plan opened as morsels, with what its nodes did.
pub(super) struct Opened<'p> {
    /// The plan's rows, read as the consumer pulls them.
    pub morsels: MorselInput,
    /// Its nodes, to record once the consumer has read them.
    pub fused: Fused<'p>,
}

/// The nodes of a plan opened as morsels.
#[derive(Default)]
pub(super) struct Fused<'p> {
    nodes: Vec<FusedNode<'p>>,
    /// Time the joins' build sides took (run before any morsel).
    pub build_time: Duration,
}

/// The note of a node that ran inside its consumer.
const FUSED: &str = "fused into parent";

/// Where a fused node's output rows are counted.
#[derive(Clone)]
enum Rows {
    /// What the consumer read.
    Consumed,
    /// What went into a join's probe.
    ProbedInto(Arc<ProbeStep>),
    /// What a join's probe emitted.
    JoinedBy(Arc<ProbeStep>),
    /// Counted already.
    Known(usize),
    /// Counted as the consumer reads (a grace join's deferred partitions).
    Counted(Arc<AtomicUsize>),
}

struct FusedNode<'p> {
    id: usize,
    depth: usize,
    plan: &'p PhysicalPlan,
    rows: Rows,
    note: String,
    /// Time of its own, where it ran before the consumer read anything.
    time: Duration,
}

impl Fused<'_> {
    /// Records every node that ran fused into the consumer, which read
    /// `consumed` rows.
    pub fn record(&self, ctx: &ExecContext, consumed: usize) {
        self.record_nodes(ctx, consumed, None);
    }

    /// As [`Fused::record`], for a plan streamed into the output: its top
    /// node says so, with the stream's whole `time`.
    pub fn record_as_output(&self, ctx: &ExecContext, consumed: usize, time: Duration) {
        self.record_nodes(ctx, consumed, Some(time));
    }

    fn record_nodes(&self, ctx: &ExecContext, consumed: usize, output: Option<Duration>) {
        let top = self.nodes.iter().map(|n| n.id).min();
        for node in &self.nodes {
            let rows = match &node.rows {
                Rows::Consumed => consumed,
                Rows::ProbedInto(step) => step.rows_in.load(Ordering::Relaxed),
                Rows::JoinedBy(step) => step.rows_out.load(Ordering::Relaxed),
                Rows::Known(n) => *n,
                Rows::Counted(n) => n.load(Ordering::Relaxed),
            };
            let (note, time) = match output {
                Some(time) if Some(node.id) == top => match node.note.as_str() {
                    FUSED => ("streamed into the output".to_string(), time),
                    own => (format!("{own}; streamed into the output"), time),
                },
                _ => (node.note.clone(), node.time),
            };
            let extra = match scan_counters(node.plan) {
                c if c.is_empty() => note.to_string(),
                c => format!("{note}; {c}"),
            };
            ctx.record(node.id, node.depth, node.plan, &[], time, extra);
            ctx.set_rows(node.id, rows);
        }
    }
}

/// The side of a join that probes as morsels, and the rows expected of it.
struct Orientation {
    probe_is_left: bool,
    rows: usize,
}

/// Rows `plan` is expected to yield if it opens as morsels for a join's
/// probe: a scan with an estimate, a pipeline over one, or a join that
/// runs as a probe of one ([`orientation`]), whose estimate is its scan's
/// (an upper bound where its joins filter); and whether it joins.
fn probe_rows(plan: &PhysicalPlan, ctx: &ExecContext) -> Option<(usize, bool)> {
    match plan {
        PhysicalPlan::Scan { estimated_rows, .. } => estimated_rows.map(|n| (n, false)),
        PhysicalPlan::Pipeline { input, .. } => probe_rows(input, ctx),
        PhysicalPlan::HashJoin { .. } => orientation(plan, ctx).map(|o| (o.rows, true)),
        _ => None,
    }
}

/// How much smaller than a chain of joins' scan a scan must be expected to
/// be for the chain to probe a table built on it. The chain's joins may
/// filter its rows far below its scan's (TPC-H Q9: lineitem's 6M rows
/// become 320K before they meet orders' 1.5M); then building on the
/// chain's output and streaming the scan through it (the materialized
/// join) is the cheaper way.
const CHAIN_OVER_SCAN: usize = 8;

/// How the join `plan` runs as a probe step, if it can: the larger of the
/// sides that open as morsels probes, where the other side is expected to
/// fit in memory. Not for the GPU, for subplans whose results are shared,
/// or unfused.
fn orientation(plan: &PhysicalPlan, ctx: &ExecContext) -> Option<Orientation> {
    let PhysicalPlan::HashJoin { left, right, .. } = plan else {
        return None;
    };
    if !fusable(plan, ctx) {
        return None;
    }
    let (l, r) = (probe_rows(left, ctx), probe_rows(right, ctx));
    let side = |probe_is_left: bool, probe: Option<(usize, bool)>, other: Option<(usize, bool)>| {
        let (rows, chain) = probe?;
        let built = if probe_is_left { right } else { left };
        // A chain's estimate is its scan's, an upper bound: a scan probing
        // a table built on a chain is judged once the chain has run
        // ([`open_join`] joins both sides materialized when the built one
        // came out larger), as the unfused join would be.
        let smaller = |(o, other_chain): (usize, bool)| {
            (other_chain && !chain)
                || o.saturating_mul(if chain { CHAIN_OVER_SCAN } else { 1 }) <= rows
        };
        let fits = other.is_none_or(smaller) && too_large_to_build(built, ctx).is_none();
        fits.then_some(Orientation {
            probe_is_left,
            rows,
        })
    };
    match (side(true, l, r), side(false, r, l)) {
        (Some(a), Some(b)) => Some(if a.rows >= b.rows { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// `plan` opened as morsels when it is a scan, a pipeline over morsels or
/// a join that runs as a probe step ([`orientation`]), its nodes numbered
/// from `next_id` in pre-order; `None`, having run nothing, otherwise.
pub(super) fn open<'p>(
    plan: &'p PhysicalPlan,
    ctx: &ExecContext,
    next_id: &mut usize,
    depth: usize,
) -> Result<Option<Opened<'p>>> {
    if !opens(plan, ctx) {
        return Ok(None);
    }
    let mut fused = Fused::default();
    let morsels = open_into(plan, ctx, (next_id, depth), &mut fused)?;
    Ok(Some(Opened {
        morsels: morsels.cancellable(ctx.cancel.clone()),
        fused,
    }))
}

/// Whether `plan` (a join, an aggregate) may run inside its consumer:
/// execution is fused, the node is not offered to the GPU, and its result
/// is not shared with another use of the same subplan.
pub(super) fn fusable(plan: &PhysicalPlan, ctx: &ExecContext) -> bool {
    let shared = ctx.shared.lock().expect("shared results lock").clone();
    ctx.fuse && !wants_gpu(ctx.config.device, plan) && shared.key(plan).is_none()
}

/// Whether `plan` opens as morsels: a scan, a pipeline over morsels, or a
/// join that runs inside its consumer ([`join_way`]).
fn opens(plan: &PhysicalPlan, ctx: &ExecContext) -> bool {
    match plan {
        PhysicalPlan::Scan { .. } => true,
        PhysicalPlan::Pipeline { input, .. } => opens(input, ctx),
        PhysicalPlan::HashJoin { .. } => join_way(plan, ctx).is_some(),
        _ => false,
    }
}

/// How a join runs inside its consumer.
enum JoinWay {
    /// As a probe step of one side's morsels ([`orientation`]).
    Probe(Orientation),
    /// As a grace join of two scans from disk, its pairs of partitions
    /// joined as the consumer reads them: the build side is expected past
    /// the memory limit.
    FromDisk { stream_left: bool },
}

/// How the join `plan` runs inside its consumer, if it can.
fn join_way(plan: &PhysicalPlan, ctx: &ExecContext) -> Option<JoinWay> {
    if let Some(o) = orientation(plan, ctx) {
        return Some(JoinWay::Probe(o));
    }
    let PhysicalPlan::HashJoin { left, right, .. } = plan else {
        return None;
    };
    if !fusable(plan, ctx) {
        return None;
    }
    let stream_left = streamable_rows(left)? > streamable_rows(right)?;
    let built = if stream_left { right } else { left };
    too_large_to_build(built, ctx)?;
    Some(JoinWay::FromDisk { stream_left })
}

/// Opens the join `plan` (at `id`) of two scans from disk
/// ([`JoinWay::FromDisk`], the left side streaming when `stream_left`):
/// both sides go to spill files by key, and each pair of partitions is a
/// morsel unit that the consumer joins as it reads it.
fn open_from_disk<'p>(
    plan: &'p PhysicalPlan,
    ctx: &ExecContext,
    stream_left: bool,
    (id, next_id, depth): (usize, &mut usize, usize),
    opened: &mut Fused<'p>,
) -> Result<MorselInput> {
    let PhysicalPlan::HashJoin { schema, .. } = plan else {
        unreachable!("open_from_disk is called on hash joins")
    };
    let JoinSides {
        spec,
        built: (built, _, mut built_id),
        other: (streamed, _, mut streamed_id),
    } = join_sides(plan, ctx, !stream_left, (id, next_id));
    let not_a_scan = || SlothError::Internal("a join from disk over a non-scan".into());
    let build = ctx.morsels(built)?.ok_or_else(not_a_scan)?;
    let probe = ctx.morsels(streamed)?.ok_or_else(not_a_scan)?;
    let start = Instant::now();
    let joined = Arc::new(AtomicUsize::new(0));
    let units = columnar::hash_join_from_disk_deferred(
        (&build, built.schema()),
        (&probe, streamed.schema()),
        !stream_left,
        (&spec, ctx.spill.clone()),
        joined.clone(),
    )?;
    let time = start.elapsed();
    opened.build_time += time;
    let read = |m: &MorselInput| m.rows.load(Ordering::Relaxed);
    record_fused(built, ctx, &mut built_id, depth + 1, read(&build));
    record_fused(streamed, ctx, &mut streamed_id, depth + 1, read(&probe));
    opened.nodes.push(FusedNode {
        id,
        depth,
        plan,
        rows: Rows::Counted(joined),
        note: format!(
            "both sides partitioned to disk from their scans (time: the partitioning); \
             {} pairs of partitions joined as the consumer reads them",
            units.len()
        ),
        time,
    });
    Ok(MorselInput::from_units(units, schema))
}

/// Opens `plan` (which [`open`] found opens) as morsels, adding its nodes
/// to `opened` with rows counted as the consumer reads them.
fn open_into<'p>(
    plan: &'p PhysicalPlan,
    ctx: &ExecContext,
    (next_id, depth): (&mut usize, usize),
    opened: &mut Fused<'p>,
) -> Result<MorselInput> {
    let id = *next_id;
    *next_id += 1;
    let fused = |rows: Rows, note: &str| FusedNode {
        id,
        depth,
        plan,
        rows,
        note: note.to_string(),
        time: Duration::ZERO,
    };
    match plan {
        PhysicalPlan::Pipeline { input, stages, .. } => {
            let mut morsels = open_into(input, ctx, (next_id, depth + 1), opened)?;
            morsels.push_stages(stages);
            opened.nodes.push(fused(Rows::Consumed, FUSED));
            Ok(morsels)
        }
        PhysicalPlan::HashJoin { .. } => match join_way(plan, ctx) {
            Some(JoinWay::Probe(o)) => open_join(plan, ctx, o, (id, next_id, depth), opened),
            Some(JoinWay::FromDisk { stream_left }) => {
                open_from_disk(plan, ctx, stream_left, (id, next_id, depth), opened)
            }
            None => Err(SlothError::Internal("a join that does not open".into())),
        },
        _ => {
            let pages = ctx.pages();
            let morsels = MorselInput::stream(plan, Some(&pages))?
                .ok_or_else(|| SlothError::Internal("not a scan".into()))?;
            opened.nodes.push(fused(Rows::Consumed, FUSED));
            Ok(morsels)
        }
    }
}

/// Opens the join `plan` (at `id`) as its probe side's morsels with a
/// probe step: builds the other side, then opens the probe side.
fn open_join<'p>(
    plan: &'p PhysicalPlan,
    ctx: &ExecContext,
    Orientation {
        probe_is_left,
        rows: expected,
    }: Orientation,
    (id, next_id, depth): (usize, &mut usize, usize),
    opened: &mut Fused<'p>,
) -> Result<MorselInput> {
    let JoinSides {
        spec,
        built: (built, built_keys, mut built_id),
        other: (probed, probed_keys, mut probed_id),
    } = join_sides(plan, ctx, !probe_is_left, (id, next_id));
    let (batches, time) = run(built, ctx, &mut built_id, depth + 1)?;
    opened.build_time += time;
    let built_rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    if built_rows > expected {
        // The built side came out larger than the probe side was expected
        // to be: both are materialized and the smaller one is built on.
        let (probed_batches, time) = run(probed, ctx, &mut probed_id, depth + 1)?;
        let inputs = if probe_is_left {
            vec![probed_batches, batches]
        } else {
            vec![batches, probed_batches]
        };
        let start = Instant::now();
        let out = columnar::run_operator(plan, inputs, ctx)?;
        ctx.record(id, depth, plan, &out, start.elapsed(), String::new());
        opened.build_time += time + start.elapsed();
        return Ok(MorselInput::from_batches(out));
    }
    // The probe side's nodes count rows into this join's probe.
    let first_probe_node = opened.nodes.len();
    let mut morsels = open_into(probed, ctx, (&mut probed_id, depth + 1), opened)?;
    let build = JoinSide {
        batches,
        schema: built.schema(),
        keys: built_keys,
    };
    let probe = JoinSide {
        batches: vec![],
        schema: probed.schema(),
        keys: probed_keys,
    };
    let side = if probe_is_left { "left" } else { "right" };
    let (morsels, rows, probe_rows) = match columnar::probe_table(
        build,
        (&mut morsels, &probe),
        !probe_is_left,
        &spec,
    )? {
        Ok(table) => {
            let step = ProbeStep::new(table);
            morsels.push_probe(step.clone());
            let note = format!(
                "probed by the {side} side's morsels, fused into parent; {built_rows} rows built"
            );
            let rows = (Rows::JoinedBy(step.clone()), Rows::ProbedInto(step));
            return Ok(finish(
                morsels,
                opened,
                first_probe_node,
                (id, depth, plan),
                rows,
                note,
            ));
        }
        // Memory too short for the build side: a join that can spill,
        // materialized, its output read as morsels.
        Err(build) => {
            let (out, _) =
                columnar::hash_join_streaming(build, (&mut morsels, probe), !probe_is_left, &spec)?;
            let read = morsels.rows.load(Ordering::Relaxed);
            let rows = out.iter().map(|b| b.num_rows()).sum();
            (
                MorselInput::from_batches(out),
                Rows::Known(rows),
                Rows::Known(read),
            )
        }
    };
    let note = format!("{side} (probe) side streamed; its output materialized");
    Ok(finish(
        morsels,
        opened,
        first_probe_node,
        (id, depth, plan),
        (rows, probe_rows),
        note,
    ))
}

/// A hash join's spec, building on the left side when `build_left`, and
/// its sides as (built, other), each with its keys and its first node id
/// (pre-order, whichever side runs first); `next_id` moves past the join
/// at `id`.
pub(super) struct JoinSides<'p, 'a> {
    pub spec: JoinSpec<'a>,
    pub built: (&'p PhysicalPlan, &'p [PhysicalExpr], usize),
    pub other: (&'p PhysicalPlan, &'p [PhysicalExpr], usize),
}

pub(super) fn join_sides<'p: 'a, 'a>(
    plan: &'p PhysicalPlan,
    ctx: &'a ExecContext,
    build_left: bool,
    (id, next_id): (usize, &mut usize),
) -> JoinSides<'p, 'a> {
    let PhysicalPlan::HashJoin {
        left,
        right,
        left_keys,
        right_keys,
        how,
        filter,
        output,
        schema,
        ..
    } = plan
    else {
        unreachable!("join_sides is called on hash joins")
    };
    let left_id = id + 1;
    let right_id = left_id + shared::node_count(left);
    *next_id = right_id + shared::node_count(right);
    let l = (&**left, left_keys.as_slice(), left_id);
    let r = (&**right, right_keys.as_slice(), right_id);
    let (built, other) = if build_left { (l, r) } else { (r, l) };
    let spec = JoinSpec {
        left_keys,
        right_keys,
        how: *how,
        build_side: if build_left {
            BuildSide::Left
        } else {
            BuildSide::Right
        },
        filter: filter.as_ref(),
        output: (output.as_deref(), schema),
        budget: ctx.budget(),
    };
    JoinSides { spec, built, other }
}

/// Adds the join node (`rows.0`) and counts the rows of its probe side's
/// fused nodes (from `first_probe_node`, those not counted by a deeper
/// join) as `rows.1`.
fn finish<'p>(
    morsels: MorselInput,
    opened: &mut Fused<'p>,
    first_probe_node: usize,
    (id, depth, plan): (usize, usize, &'p PhysicalPlan),
    rows: (Rows, Rows),
    note: String,
) -> MorselInput {
    for node in &mut opened.nodes[first_probe_node..] {
        if matches!(node.rows, Rows::Consumed) {
            node.rows = rows.1.clone();
        }
    }
    opened.nodes.push(FusedNode {
        id,
        depth,
        plan,
        rows: rows.0,
        note,
        time: Duration::ZERO,
    });
    morsels
}
