//! The row-wise executor: a tuple-at-a-time (Volcano) implementation of
//! every physical operator over the same [`PhysicalPlan`] as the columnar
//! one, evaluating expressions row by row on dynamically typed values.
//!
//! It exists to be compared: `sloth profile` runs a query both ways and
//! shows, operator by operator, what vectorized execution buys; and its
//! results must equal the columnar executor's, which makes it a test oracle.

mod aggregates;
mod expr;
mod operators;
use crate::expr::value;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use crate::error::Result;
use crate::io::BATCH_SIZE;
use crate::physical::{PhysicalPlan, Stage};
use crate::plan::join_schema;
use operators::*;
pub use value::Value;

/// Rows and time of one operator in a row-wise run.
#[derive(Debug, Clone)]
pub struct RowNodeMetrics {
    // Position, name and rows: what the tests match against the columnar
    // run's metrics.
    /// Pre-order position in the plan (as in the columnar metrics).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub id: usize,
    /// The operator's description.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub name: String,
    /// Rows produced.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub rows_out: usize,
    /// Time in this operator, excluding its inputs.
    pub self_time: Duration,
}

struct Built {
    root: Input,
    nodes: Vec<(usize, String, Input, Vec<usize>)>,
}

fn metered(op: impl RowOperator + 'static) -> Input {
    Rc::new(RefCell::new(Metered {
        inner: Box::new(op),
        rows: 0,
        time: Duration::ZERO,
    }))
}

fn build(
    plan: &PhysicalPlan,
    built: &mut Vec<(usize, String, Input, Vec<usize>)>,
) -> Result<(Input, usize)> {
    let id = built.len();
    // Reserve the slot so ids follow pre-order.
    built.push((
        id,
        plan.describe(),
        metered(UnionOp {
            inputs: vec![],
            current: 0,
        }),
        vec![],
    ));
    let mut children = Vec::new();
    let mut child_inputs = Vec::new();
    for c in plan.children() {
        let (input, cid) = build(c, built)?;
        children.push(cid);
        child_inputs.push(input);
    }
    let mut next = child_inputs.into_iter();
    let op: Input = match plan {
        PhysicalPlan::Scan {
            source,
            projection,
            filters,
            schema,
            ..
        } => {
            let batches = source.read(projection.as_deref(), &[], &Default::default(), None)?;
            metered(ScanOp {
                batches,
                filters: filters.clone(),
                schema: schema.clone(),
                batch: 0,
                row: 0,
            })
        }
        PhysicalPlan::Pipeline { input, stages, .. } => {
            let mut schema = input.schema();
            let mut typed = Vec::new();
            for s in stages {
                typed.push((s.clone(), schema.clone()));
                if let Stage::Project(_, out) = s {
                    schema = out.clone();
                }
            }
            metered(PipelineOp {
                input: next.next().expect("input"),
                stages: typed,
            })
        }
        PhysicalPlan::HashAggregate {
            input, keys, aggs, ..
        } => metered(AggregateOp {
            input: next.next().expect("input"),
            schema: input.schema(),
            keys: keys.clone(),
            aggs: aggs.clone(),
            output: None,
        }),
        PhysicalPlan::HashJoin {
            left,
            right,
            left_keys,
            right_keys,
            how,
            filter,
            output,
            ..
        } => {
            let (ls, rs) = (left.schema(), right.schema());
            metered(JoinOp {
                left: next.next().expect("left"),
                right: next.next().expect("right"),
                pair_schema: join_schema(&ls, &rs, crate::plan::JoinType::Inner),
                left_schema: ls,
                right_schema: rs,
                left_keys: left_keys.clone(),
                right_keys: right_keys.clone(),
                how: *how,
                filter: filter.clone(),
                built: None,
                pending: Default::default(),
                probe_done: false,
                output: output.clone(),
                right_width: 0,
                left_width: 0,
            })
        }
        PhysicalPlan::CrossJoin { .. } => metered(CrossJoinOp {
            left: next.next().expect("left"),
            right: next.next().expect("right"),
            right_rows: None,
            current: None,
            pos: 0,
        }),
        PhysicalPlan::Sort { input, keys, limit } => metered(SortOp {
            input: next.next().expect("input"),
            schema: input.schema(),
            keys: keys.clone(),
            limit: *limit,
            output: None,
        }),
        PhysicalPlan::Slice { offset, len, .. } => metered(SliceOp {
            input: next.next().expect("input"),
            offset: *offset,
            len: *len,
            seen: 0,
        }),
        PhysicalPlan::Union { .. } => metered(UnionOp {
            inputs: next.collect(),
            current: 0,
        }),
        PhysicalPlan::Window {
            input,
            func,
            args,
            partition_by,
            order_by,
            limit,
            ..
        } => metered(WindowOp {
            input: next.next().expect("input"),
            schema: input.schema(),
            func: *func,
            args: args.clone(),
            partition_by: partition_by.clone(),
            order_by: order_by.clone(),
            limit: *limit,
            output: None,
        }),
    };
    built[id].2 = op.clone();
    built[id].3 = children;
    Ok((op, id))
}

/// Runs `plan` tuple at a time; returns the result and per-operator metrics.
pub fn execute_rowwise(plan: &PhysicalPlan) -> Result<(Vec<RecordBatch>, Vec<RowNodeMetrics>)> {
    let mut nodes = Vec::new();
    let (root, _) = build(plan, &mut nodes)?;
    let built = Built { root, nodes };
    let schema = plan.schema();
    let mut rows = Vec::new();
    while let Some(r) = built.root.borrow_mut().next()? {
        rows.push(r);
    }
    let mut batches = Vec::new();
    for chunk in rows.chunks(BATCH_SIZE) {
        let columns = (0..schema.fields().len())
            .map(|c| {
                let values: Vec<&Value> = chunk.iter().map(|r| &r[c]).collect();
                value::to_array(&values, schema.field(c).data_type())
            })
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(chunk.len()));
        batches.push(RecordBatch::try_new_with_options(
            Arc::clone(&schema),
            columns,
            &options,
        )?);
    }
    let inclusive: Vec<Duration> = built
        .nodes
        .iter()
        .map(|(_, _, op, _)| op.borrow().time)
        .collect();
    let metrics = built
        .nodes
        .iter()
        .map(|(id, name, op, children)| {
            let child_time: Duration = children.iter().map(|c| inclusive[*c]).sum();
            RowNodeMetrics {
                id: *id,
                name: name.clone(),
                rows_out: op.borrow().rows,
                self_time: inclusive[*id].saturating_sub(child_time),
            }
        })
        .collect();
    Ok((batches, metrics))
}
