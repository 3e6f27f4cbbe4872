//! A sort (or top-k) whose input opens as morsels: a scan pipeline, or
//! joins probed by a scan's morsels (`probe_pipeline.rs`). The input is
//! never materialized whole, so a sort over a join larger than memory
//! spills its runs instead of holding the join's output first.
//!
//! ```text
//! TopK k=5                        TopK k=5, folding morsels of
//!   HashJoin               =>       scan lineitem
//!     Scan lineitem                 -> probe table on orders
//!     Scan orders                   each thread keeping its first 5 rows
//! ```
//!
//! A top-k of at most a run's rows keeps each thread's first rows
//! ([`columnar::top_k_per_thread`]); any other sort reads its input on a
//! thread beside an external sort, over a bounded channel, and spills runs
//! past the memory limit ([`columnar::external_sort`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use arrow::compute::SortOptions;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::probe_pipeline::{self, Opened};
use super::{ExecContext, columnar};
use crate::error::{Result, SlothError};
use crate::io::TopKBound;
use crate::physical::PhysicalPlan;
use crate::physical_expr::PhysicalExpr;

/// What a sort sorts: its input's schema, keys and limit.
pub(super) struct SortOf<'p> {
    schema: SchemaRef,
    keys: &'p [(PhysicalExpr, SortOptions)],
    limit: Option<usize>,
}

impl<'p> SortOf<'p> {
    /// The sort `plan` and its input, if it is a sort.
    pub fn of(plan: &'p PhysicalPlan) -> Option<(Self, &'p PhysicalPlan)> {
        let PhysicalPlan::Sort {
            input, keys, limit, ..
        } = plan
        else {
            return None;
        };
        let sort = SortOf {
            schema: input.schema(),
            keys,
            limit: *limit,
        };
        Some((sort, input))
    }

    /// Sorts `input` into `emit`; says how, for the profile.
    pub fn run(
        &self,
        input: &mut columnar::MorselInput,
        ctx: &ExecContext,
        emit: &mut dyn FnMut(RecordBatch) -> Result<()>,
    ) -> Result<String> {
        let spec = columnar::SortSpec {
            schema: &self.schema,
            keys: self.keys,
            limit: self.limit,
            reservation: ctx.memory.reservation("sort"),
            // The joins the input is read through (their tables, the
            // pairs of partitions they join as they are read) need memory
            // beside the sort's runs.
            max_run: ctx.memory.limit() / 2,
            spill: &ctx.spill,
        };
        let per_thread =
            |&k: &usize| columnar::runs_per_thread(k, &self.schema, ctx.memory.limit());
        if let Some(k) = self.limit.filter(per_thread) {
            // Where the first key is a scan column, its bound skips row
            // groups and drops rows as the threads' k-th rows improve.
            let (first, options) = &self.keys[0];
            let bound = (input.value_column(first))
                .map(|column| Arc::new(TopKBound::new(column, *options)));
            if let Some(bound) = &bound {
                input.bounded_by(bound.clone());
            }
            for b in columnar::top_k_per_thread(input, spec, k, &ctx.memory, bound.as_deref())? {
                emit(b)?;
            }
            let kept = "input streamed, each thread keeping its first rows";
            return Ok(match bound {
                Some(b) => format!(
                    "{kept}; their first key's bound skipped {} units of the scan",
                    b.units_skipped.load(Ordering::Relaxed)
                ),
                None => kept.to_string(),
            });
        }
        let (sender, batches) = std::sync::mpsc::sync_channel::<Result<RecordBatch>>(4);
        // The reader runs beside the sort, handing batches over a bounded
        // channel: the input is never held whole.
        std::thread::scope(|scope| -> Result<()> {
            let reader = scope.spawn(|| {
                let sent = ctx.config.install(|| {
                    input.for_each_ordered(&mut |b| {
                        sender
                            .send(Ok(b))
                            .map_err(|_| SlothError::Internal("sort input closed".into()))
                    })
                });
                if let Err(e) = sent {
                    let _ = sender.send(Err(e));
                }
                drop(sender);
            });
            let sorted = columnar::external_sort(batches.iter(), spec, emit);
            drop(batches);
            reader
                .join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload));
            sorted
        })?;
        Ok("input streamed".to_string())
    }
}

/// Runs the sort `plan` (at `(id, depth)`) over its input opened as
/// morsels, collecting its output; `None`, having run nothing, when the
/// input does not open so.
pub(super) fn run_streamed_sort(
    plan: &PhysicalPlan,
    ctx: &ExecContext,
    next_id: &mut usize,
    (id, depth): (usize, usize),
) -> Result<Option<(Vec<RecordBatch>, std::time::Duration)>> {
    let Some((sort, input)) = SortOf::of(plan) else {
        return Ok(None);
    };
    let start = Instant::now();
    let Some(Opened { mut morsels, fused }) = probe_pipeline::open(input, ctx, next_id, depth + 1)?
    else {
        return Ok(None);
    };
    let mut out = Vec::new();
    let how = sort.run(&mut morsels, ctx, &mut |b| {
        out.push(b);
        Ok(())
    })?;
    let elapsed = start.elapsed();
    let own = elapsed.saturating_sub(fused.build_time);
    ctx.record(id, depth, plan, &out, own, how);
    fused.record(ctx, morsels.rows.load(Ordering::Relaxed));
    Ok(Some((out, elapsed)))
}
