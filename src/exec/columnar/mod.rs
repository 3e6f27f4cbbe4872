//! Vectorized operators over whole Arrow arrays, parallel across batches.

mod aggregate;
mod join;
mod join_build;
mod join_filter;
mod join_spill;
mod morsel;
mod pipeline;
mod sort;
mod spill_partition;
mod top_k;
mod window;
mod window_aggregate;
mod window_frame;
mod window_spill;

use arrow::record_batch::RecordBatch;

use crate::error::Result;
use crate::physical::PhysicalPlan;

pub use aggregate::{SPLIT_GROUPS, hash_aggregate};
pub use join::{
    BUILD_BYTES_PER_ROW, JoinSide, JoinSpec, cross_join, hash_join, hash_join_from_disk,
    hash_join_from_disk_deferred, hash_join_streaming, probe_table,
};
pub use morsel::{MorselInput, ProbeStep};
pub use pipeline::run_pipeline;
pub use sort::{SortSpec, external_sort, slice, sort};
pub(crate) use top_k::{runs_per_thread, top_k_per_thread};
pub use window::WindowSpec;
pub use window_spill::{WindowMemory, window_within};

/// The memory an operator runs in: the query's pool, and where it spills.
#[derive(Clone, Copy)]
pub struct Budget<'a> {
    /// The query's memory.
    pub pool: &'a std::sync::Arc<crate::memory::MemoryPool>,
    /// Where operators spill.
    pub spill: &'a crate::memory::SpillDir,
    /// The query's cancel switch, checked between long steps.
    pub cancel: &'a crate::exec::CancelToken,
}

/// Runs one operator over its already computed inputs.
pub fn run_operator(
    plan: &PhysicalPlan,
    mut inputs: Vec<Vec<RecordBatch>>,
    ctx: &super::ExecContext,
) -> Result<Vec<RecordBatch>> {
    let mut input = || std::mem::take(&mut inputs[0]);
    match plan {
        PhysicalPlan::Scan {
            source,
            projection,
            filters,
            metrics,
            ..
        } => {
            // A scan read whole counts as one unit of the query's progress.
            ctx.cancel.plan_units(1);
            let batches =
                source.read(projection.as_deref(), filters, metrics, Some(&ctx.pages()))?;
            ctx.cancel.unit_read();
            if ctx.count_bytes {
                let bytes = crate::exec::distinct_memory_size(&batches);
                metrics
                    .bytes_read
                    .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(batches)
        }
        PhysicalPlan::Pipeline { stages, .. } => run_pipeline(input(), stages),
        PhysicalPlan::HashAggregate {
            keys, aggs, schema, ..
        } => Ok(hash_aggregate(
            &MorselInput::from_batches(input()),
            keys,
            aggs,
            schema,
            ctx.agg_split_groups,
            ctx.budget(),
            &[],
        )?
        .batches),
        PhysicalPlan::HashJoin {
            left,
            right,
            left_keys,
            right_keys,
            how,
            build_side,
            filter,
            output,
            schema,
        } => {
            let right_batches = inputs.pop().unwrap_or_default();
            let left_batches = inputs.pop().unwrap_or_default();
            let spec = JoinSpec {
                left_keys,
                right_keys,
                how: *how,
                build_side: *build_side,
                filter: filter.as_ref(),
                output: (output.as_deref(), schema),
                budget: ctx.budget(),
            };
            hash_join(
                (left_batches, left.schema()),
                (right_batches, right.schema()),
                &spec,
            )
        }
        PhysicalPlan::CrossJoin { schema, .. } => {
            let right = inputs.pop().unwrap_or_default();
            let left = inputs.pop().unwrap_or_default();
            cross_join(&left, &right, schema, ctx.budget())
        }
        PhysicalPlan::Sort {
            keys,
            limit,
            input: child,
        } => sort(
            input(),
            SortSpec {
                schema: &child.schema(),
                keys,
                limit: *limit,
                reservation: ctx.memory.reservation("sort"),
                max_run: usize::MAX,
                spill: &ctx.spill,
            },
        ),
        PhysicalPlan::Slice { offset, len, .. } => Ok(slice(input(), *offset, *len)),
        PhysicalPlan::Window {
            input: child,
            func,
            args,
            partition_by,
            order_by,
            limit,
            schema,
        } => window_within(
            input(),
            &child.schema(),
            WindowSpec {
                func: *func,
                args,
                partition_by,
                order_by,
                limit: *limit,
            },
            schema,
            WindowMemory {
                reservation: ctx.memory.reservation("window"),
                spill: &ctx.spill,
            },
        ),
        PhysicalPlan::Union { schema, .. } => {
            let mut out = Vec::new();
            for batches in inputs {
                for b in batches {
                    let cols = b
                        .columns()
                        .iter()
                        .zip(schema.fields())
                        .map(|(c, f)| crate::kernels::cast_if_needed(c, f.data_type()))
                        .collect::<Result<Vec<_>>>()?;
                    // The row count matters even without columns (count(*)).
                    let options = arrow::record_batch::RecordBatchOptions::new()
                        .with_row_count(Some(b.num_rows()));
                    out.push(RecordBatch::try_new_with_options(
                        schema.clone(),
                        cols,
                        &options,
                    )?);
                }
            }
            Ok(out)
        }
    }
}
