//! Ranking window functions: `row_number`, `rank`, `dense_rank`.
//!
//! Rows are bucketed by partition key with the hash table the aggregation
//! uses (a counting sort on group ids, O(n)), then each partition is sorted
//! on its own by the order keys. A single integer, date or float order key
//! is normalized into a `u128` that also holds the row index, so a
//! partition sorts as plain integers; other keys are encoded once in
//! Arrow's row format, where a comparison is a `memcmp`. Partitions are
//! independent and sorted in parallel. Output rows come partition by
//! partition.
//!
//! With a per-partition `limit` (the planner sets it under a
//! `row_number() <= k` filter), each partition only selects its first `k`
//! rows (`select_nth_unstable`) and sorts those, and only they are output.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, UInt32Array};
use arrow::compute::{SortOptions, concat_batches, take_record_batch};
use arrow::datatypes::{DataType, Float64Type, Int64Type, SchemaRef};
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, Rows, SortField};
use rayon::prelude::*;

use crate::error::Result;
use crate::expr::WindowFunc;
use crate::kernels::eval::evaluate_array;
use crate::kernels::hash_table::{GroupTable, KeyEncoder};
use crate::kernels::packed_keys::NullKeys;
use crate::physical::expr::PhysicalExpr;

/// What a window operator computes.
pub struct WindowSpec<'a> {
    /// The ranking function.
    pub func: WindowFunc,
    /// Partition keys.
    pub partition_by: &'a [PhysicalExpr],
    /// Order within a partition.
    pub order_by: &'a [(PhysicalExpr, SortOptions)],
    /// Rows kept per partition, the first in window order (`row_number`).
    pub limit: Option<usize>,
}

/// Row order within a partition, from the order keys.
enum OrderKeys {
    /// `u64` keys that order as the SQL order does, per row; `nulls` marks
    /// rows that sort before (`nulls_first`) or after all others.
    Normalized {
        keys: Vec<u64>,
        nulls: Option<arrow::buffer::NullBuffer>,
        nulls_first: bool,
    },
    /// Arrow rows (memcmp order).
    Rows(Rows),
}

impl OrderKeys {
    fn new(order_by: &[(PhysicalExpr, SortOptions)], all: &RecordBatch) -> Result<Self> {
        let keys = order_by
            .iter()
            .map(|(e, _)| evaluate_array(e, all))
            .collect::<Result<Vec<ArrayRef>>>()?;
        if let ([key], [(_, options)]) = (keys.as_slice(), order_by)
            && let Some(normalized) = normalize(key, options.descending)?
        {
            return Ok(OrderKeys::Normalized {
                keys: normalized,
                nulls: key.logical_nulls().filter(|n| n.null_count() > 0),
                nulls_first: options.nulls_first,
            });
        }
        let fields = order_by
            .iter()
            .zip(&keys)
            .map(|((_, o), k)| SortField::new_with_options(k.data_type().clone(), *o))
            .collect();
        Ok(OrderKeys::Rows(
            RowConverter::new(fields)?.convert_columns(&keys)?,
        ))
    }

    /// Row `i`'s key as a `u128` (null class above the key bits, the row
    /// index below them: unique, so an unstable sort keeps input order
    /// among peers).
    #[inline]
    fn composite(
        keys: &[u64],
        nulls: Option<&arrow::buffer::NullBuffer>,
        nulls_first: bool,
        i: u32,
    ) -> u128 {
        let class = match nulls {
            Some(n) if n.is_null(i as usize) => u128::from(!nulls_first),
            _ => u128::from(nulls_first),
        };
        let key = if class == u128::from(nulls_first) {
            keys[i as usize]
        } else {
            0
        };
        (class << 96) | (u128::from(key) << 32) | u128::from(i)
    }

    /// Sorts `segment` (row indices of one partition) into window order;
    /// with `limit`, only its first `limit` entries need to be in order.
    fn sort(&self, segment: &mut [u32], limit: Option<usize>, scratch: &mut Vec<u128>) {
        let k = limit.unwrap_or(usize::MAX).min(segment.len());
        match self {
            OrderKeys::Normalized {
                keys,
                nulls,
                nulls_first,
            } => {
                scratch.clear();
                scratch.extend(
                    segment
                        .iter()
                        .map(|&i| Self::composite(keys, nulls.as_ref(), *nulls_first, i)),
                );
                if k < scratch.len() && k > 0 {
                    scratch.select_nth_unstable(k - 1);
                }
                scratch[..k].sort_unstable();
                for (dst, c) in segment.iter_mut().zip(&scratch[..k]) {
                    *dst = *c as u32;
                }
            }
            OrderKeys::Rows(rows) => {
                let cmp = |a: &u32, b: &u32| {
                    rows.row(*a as usize)
                        .cmp(&rows.row(*b as usize))
                        .then(a.cmp(b))
                };
                if k < segment.len() && k > 0 {
                    segment.select_nth_unstable_by(k - 1, cmp);
                }
                segment[..k].sort_unstable_by(cmp);
            }
        }
    }

    /// True if rows `a` and `b` tie on the order keys.
    fn peers(&self, a: u32, b: u32) -> bool {
        match self {
            OrderKeys::Normalized {
                keys,
                nulls,
                nulls_first,
            } => {
                let c = |i| Self::composite(keys, nulls.as_ref(), *nulls_first, i) >> 32;
                c(a) == c(b)
            }
            OrderKeys::Rows(rows) => {
                rows.row(a as usize).cmp(&rows.row(b as usize)) == Ordering::Equal
            }
        }
    }
}

/// Order-preserving `u64` images of an integer, date or float column
/// (inverted for a descending order), or `None` for other types.
fn normalize(key: &ArrayRef, descending: bool) -> Result<Option<Vec<u64>>> {
    let t = key.data_type();
    let flip = if descending { u64::MAX } else { 0 };
    let keys: Vec<u64> = if t.is_integer()
        || matches!(
            t,
            DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)
        ) {
        if matches!(t, DataType::UInt64) {
            return Ok(None);
        }
        let v = arrow::compute::cast(key, &DataType::Int64)?;
        v.as_primitive::<Int64Type>()
            .values()
            .iter()
            .map(|&x| ((x as u64) ^ (1 << 63)) ^ flip)
            .collect()
    } else if t.is_floating() {
        let v = arrow::compute::cast(key, &DataType::Float64)?;
        v.as_primitive::<Float64Type>()
            .values()
            .iter()
            .map(|&x| {
                // IEEE total order: negative values reversed, positive ones
                // above them (as `f64::total_cmp`).
                let bits = x.to_bits();
                let ordered = if bits >> 63 == 1 {
                    !bits
                } else {
                    bits | (1 << 63)
                };
                ordered ^ flip
            })
            .collect()
    } else {
        return Ok(None);
    };
    Ok(Some(keys))
}

/// Appends `func() OVER (PARTITION BY partition_by ORDER BY order_by)`.
pub fn window(
    input: Vec<RecordBatch>,
    input_schema: &SchemaRef,
    spec: WindowSpec<'_>,
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let WindowSpec {
        func,
        partition_by,
        order_by,
        limit,
    } = spec;
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
        let encoder = KeyEncoder::new(&types, NullKeys::Group)?;
        let mut hashes = Vec::new();
        let encoded = encoder.encode(&keys, &mut hashes)?;
        let mut table = GroupTable::for_batch(&encoder, &encoded);
        let mut groups = Vec::with_capacity(n);
        table.insert_batch(&encoder, &encoded, &hashes, &mut groups)?;
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
    // 2. Sort each partition by the order keys, then number its rows.
    let order_keys = if order_by.is_empty() {
        None
    } else {
        Some(OrderKeys::new(order_by, &all)?)
    };
    if let Some(keys) = &order_keys {
        // One mutable slice per partition, sorted in parallel.
        let mut segments: Vec<&mut [u32]> = Vec::with_capacity(num_groups);
        let mut rest = order.as_mut_slice();
        for g in 0..num_groups {
            let (segment, tail) = rest.split_at_mut(starts[g + 1] - starts[g]);
            segments.push(segment);
            rest = tail;
        }
        segments
            .par_iter_mut()
            .for_each_init(Vec::new, |scratch, s| keys.sort(s, limit, scratch));
    }
    // 3. The rows kept (all, or each partition's first `limit`) and ranks.
    let kept = limit.map_or(n, |k| {
        (0..num_groups)
            .map(|g| (starts[g + 1] - starts[g]).min(k))
            .sum()
    });
    let mut rows: Vec<u32> = Vec::with_capacity(kept);
    let mut ranks: Vec<i64> = Vec::with_capacity(kept);
    for g in 0..num_groups {
        let segment = &order[starts[g]..starts[g + 1]];
        let segment = &segment[..limit.unwrap_or(usize::MAX).min(segment.len())];
        let (mut rank, mut dense) = (0i64, 0i64);
        for (k, &row) in segment.iter().enumerate() {
            let peer = match &order_keys {
                // Without ORDER BY every row of a partition is a peer.
                None => k > 0,
                Some(keys) => k > 0 && keys.peers(row, segment[k - 1]),
            };
            if !peer {
                rank = k as i64 + 1;
                dense += 1;
            }
            rows.push(row);
            ranks.push(match func {
                WindowFunc::RowNumber => k as i64 + 1,
                WindowFunc::Rank => rank,
                WindowFunc::DenseRank => dense,
            });
        }
    }
    let sorted = take_record_batch(&all, &UInt32Array::from(rows))?;
    let mut columns = sorted.columns().to_vec();
    columns.push(Arc::new(Int64Array::from(ranks)));
    Ok(vec![RecordBatch::try_new(schema.clone(), columns)?])
}
