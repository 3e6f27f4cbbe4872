//! Ranking window functions: `row_number`, `rank`, `dense_rank`.
//!
//! Rows are bucketed by partition key with the hash table the aggregation
//! uses (a counting sort on group ids, O(n)), then each partition is sorted
//! on its own by the order keys, encoded once in Arrow's row format so that a
//! comparison is a `memcmp`. Partitions are independent and sorted in
//! parallel. Output rows come partition by partition.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, UInt32Array};
use arrow::compute::{SortOptions, concat_batches, take_record_batch};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, SortField};
use rayon::prelude::*;

use crate::error::Result;
use crate::expr::WindowFunc;
use crate::kernels::eval::evaluate_array;
use crate::kernels::hash_table::{GroupTable, KeyEncoder};
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
    // 1. Partition ids, and rows bucketed by partition (counting sort).
    let (groups, num_groups) = if partition_by.is_empty() {
        (vec![0u32; n], 1)
    } else {
        let keys = partition_by
            .iter()
            .map(|p| evaluate_array(p, &all))
            .collect::<Result<Vec<_>>>()?;
        let types: Vec<DataType> = keys.iter().map(|k| k.data_type().clone()).collect();
        let encoder = KeyEncoder::new(&types)?;
        let mut hashes = Vec::new();
        let encoded = encoder.encode(&keys, &mut hashes)?;
        let mut table = GroupTable::new(&encoder);
        let mut groups = Vec::with_capacity(n);
        table.insert_batch(&encoded, &hashes, &mut groups);
        (groups, table.len())
    };
    let mut starts = vec![0usize; num_groups + 1];
    for &g in &groups {
        starts[g as usize + 1] += 1;
    }
    for g in 0..num_groups {
        starts[g + 1] += starts[g];
    }
    let mut order: Vec<u32> = vec![0; n];
    let mut fill = starts.clone();
    for (i, &g) in groups.iter().enumerate() {
        order[fill[g as usize]] = i as u32;
        fill[g as usize] += 1;
    }
    // 2. Sort each partition by the order keys (row format: memcmp order).
    let ranks: Vec<i64> = if order_by.is_empty() {
        let mut out = vec![0i64; n];
        for g in 0..num_groups {
            for (k, pos) in (starts[g]..starts[g + 1]).enumerate() {
                out[pos] = match func {
                    WindowFunc::RowNumber => k as i64 + 1,
                    // Without ORDER BY every row of a partition is a peer.
                    WindowFunc::Rank | WindowFunc::DenseRank => 1,
                };
            }
        }
        out
    } else {
        let keys = order_by
            .iter()
            .map(|(e, _)| evaluate_array(e, &all))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let fields = order_by
            .iter()
            .zip(&keys)
            .map(|((_, o), k)| SortField::new_with_options(k.data_type().clone(), *o))
            .collect();
        let rows = RowConverter::new(fields)?.convert_columns(&keys)?;
        // Split `order` into one mutable slice per partition and sort them in parallel.
        let mut segments: Vec<&mut [u32]> = Vec::with_capacity(num_groups);
        let mut rest = order.as_mut_slice();
        for g in 0..num_groups {
            let (segment, tail) = rest.split_at_mut(starts[g + 1] - starts[g]);
            segments.push(segment);
            rest = tail;
        }
        segments
            .par_iter_mut()
            .for_each(|s| s.sort_by(|&a, &b| rows.row(a as usize).cmp(&rows.row(b as usize))));
        let mut out = vec![0i64; n];
        for g in 0..num_groups {
            let (mut rank, mut dense) = (0i64, 0i64);
            for (k, pos) in (starts[g]..starts[g + 1]).enumerate() {
                let peer =
                    k > 0 && rows.row(order[pos] as usize) == rows.row(order[pos - 1] as usize);
                if !peer {
                    rank = k as i64 + 1;
                    dense += 1;
                }
                out[pos] = match func {
                    WindowFunc::RowNumber => k as i64 + 1,
                    WindowFunc::Rank => rank,
                    WindowFunc::DenseRank => dense,
                };
            }
        }
        out
    };
    let sorted = take_record_batch(&all, &UInt32Array::from(order))?;
    let mut columns = sorted.columns().to_vec();
    columns.push(Arc::new(Int64Array::from(ranks)));
    Ok(vec![RecordBatch::try_new(schema.clone(), columns)?])
}
