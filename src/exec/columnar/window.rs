//! Ranking window functions: `row_number`, `rank`, `dense_rank`.
//!
//! Sorts the input by (partition keys, order keys) once, finds partition and
//! peer boundaries with arrow's `partition` kernel, and numbers rows in one
//! pass. Output rows come in that sorted order.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::compute::{
    SortColumn, SortOptions, concat_batches, lexsort_to_indices, partition, take, take_record_batch,
};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::error::Result;
use crate::expr::WindowFunc;
use crate::kernels::eval::evaluate_array;
use crate::physical::expr::PhysicalExpr;

/// Appends `func() OVER (PARTITION BY partition_by ORDER BY order_by)`.
pub fn window(
    input: Vec<RecordBatch>,
    input_schema: &SchemaRef,
    func: WindowFunc,
    partition_by: &[PhysicalExpr],
    order_by: &[(PhysicalExpr, SortOptions)],
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let all = concat_batches(input_schema, &input)?;
    drop(input);
    let n = all.num_rows();
    if n == 0 {
        return Ok(vec![]);
    }
    let mut sort_columns = Vec::new();
    for p in partition_by {
        sort_columns.push(SortColumn {
            values: evaluate_array(p, &all)?,
            options: Some(SortOptions::default()),
        });
    }
    for (o, options) in order_by {
        sort_columns.push(SortColumn {
            values: evaluate_array(o, &all)?,
            options: Some(*options),
        });
    }
    let (sorted, keys): (RecordBatch, Vec<ArrayRef>) = if sort_columns.is_empty() {
        (all, vec![])
    } else {
        let idx = lexsort_to_indices(&sort_columns, None)?;
        let keys = sort_columns
            .iter()
            .map(|c| take(c.values.as_ref(), &idx, None))
            .collect::<Result<_, _>>()?;
        (take_record_batch(&all, &idx)?, keys)
    };
    // Partition boundaries (on partition keys) and peer groups (all keys).
    #[allow(clippy::single_range_in_vec_init)]
    let partitions = if partition_by.is_empty() {
        vec![0..n]
    } else {
        partition(&keys[..partition_by.len()])?.ranges()
    };
    #[allow(clippy::single_range_in_vec_init)]
    let peers = if keys.is_empty() {
        vec![0..n]
    } else {
        partition(&keys)?.ranges()
    };
    let mut out = vec![0i64; n];
    let mut peer_iter = peers.into_iter().peekable();
    for part in partitions {
        let mut dense = 0;
        while let Some(p) = peer_iter.peek().filter(|p| p.start < part.end).cloned() {
            peer_iter.next();
            dense += 1;
            for i in p.clone() {
                out[i] = match func {
                    WindowFunc::RowNumber => (i - part.start + 1) as i64,
                    WindowFunc::Rank => (p.start - part.start + 1) as i64,
                    WindowFunc::DenseRank => dense,
                };
            }
        }
    }
    let mut columns = sorted.columns().to_vec();
    columns.push(Arc::new(Int64Array::from(out)));
    Ok(vec![RecordBatch::try_new(schema.clone(), columns)?])
}
