//! Window functions: the ranking `row_number`, `rank`, `dense_rank`, and
//! aggregates over whole partitions (`sum(x) OVER (PARTITION BY k)`).
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
//! A large input is first cut down in parallel: each thread keeps, of a
//! range of rows, the first `k` of every partition in that range
//! ([`preselect`]), and the window runs over what the threads kept.
//!
//! Aggregates (whole partitions, or running with ORDER BY) are in
//! [`super::window_aggregate`].

use std::cmp::Ordering;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Float64Array, Int64Array, UInt32Array};
use arrow::compute::{SortOptions, take, take_record_batch};
use arrow::datatypes::{DataType, Float64Type, Int64Type, SchemaRef};
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, Rows, SortField};
use rayon::prelude::*;

use super::window_aggregate;
use super::window_frame;
use crate::error::Result;
use crate::expr::{FramePick, WindowFunc};
use crate::kernels::hash_table::{GroupTable, KeyEncoder};
use crate::kernels::packed_keys::NullKeys;
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::{evaluate_array, evaluate_sort_key};

/// What a window operator computes.
#[derive(Clone)]
pub struct WindowSpec<'a> {
    /// The function.
    pub func: WindowFunc,
    /// Its arguments (an aggregate's).
    pub args: &'a [PhysicalExpr],
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
            .map(|(e, _)| evaluate_sort_key(e, all))
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
        if let Some(packed) = pack_order_keys(&keys, order_by)? {
            return Ok(OrderKeys::Normalized {
                keys: packed,
                nulls: None,
                nulls_first: false,
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

/// Several order keys packed into one `u64` per row that orders as they
/// do, when each is a number or date and their value ranges fit 64 bits
/// together: each key becomes a bit field of `image - min` (its normalized
/// image, inverted when descending), with one more bit above it when it
/// has nulls, set for the values under NULLS FIRST and for the nulls under
/// NULLS LAST; the first key takes the highest bits. Sorting and peer tests
/// then compare integers instead of arrow rows (a `memcmp` each).
///
/// ```text
/// ORDER BY o_orderdate, o_orderkey   (dates over 2,406 days, keys under 6M)
/// 12 bits (date - min) | 23 bits (key - min)   = 35 bits
/// ```
fn pack_order_keys(
    keys: &[ArrayRef],
    order_by: &[(PhysicalExpr, SortOptions)],
) -> Result<Option<Vec<u64>>> {
    if keys.len() < 2 {
        return Ok(None);
    }
    let n = keys[0].len();
    let mut packed = vec![0u64; n];
    let mut used = 0u32;
    for (key, (_, options)) in keys.iter().zip(order_by) {
        let Some(images) = normalize(key, options.descending)? else {
            return Ok(None);
        };
        let nulls = key.logical_nulls().filter(|n| n.null_count() > 0);
        let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
        let (min, max) = images
            .iter()
            .enumerate()
            .filter(|(i, _)| valid(*i))
            .fold((u64::MAX, 0u64), |(lo, hi), (_, &v)| (lo.min(v), hi.max(v)));
        let range = max.saturating_sub(min);
        let value_bits = 64 - range.leading_zeros();
        let width = value_bits + u32::from(nulls.is_some());
        used += width;
        if used > 64 {
            return Ok(None);
        }
        // With nulls, the bit above the value says which side they sort on.
        let (value_flag, null_code) = match (&nulls, options.nulls_first) {
            (None, _) => (0, 0),
            (Some(_), true) => (1u64 << value_bits, 0),
            (Some(_), false) => (0, 1u64 << value_bits),
        };
        for (i, (p, &v)) in packed.iter_mut().zip(&images).enumerate() {
            let code = if valid(i) {
                value_flag | (v - min)
            } else {
                null_code
            };
            // `width` may be 0 (one value, no nulls): the shift adds nothing.
            *p = p.checked_shl(width).unwrap_or(0) | code;
        }
    }
    Ok(Some(packed))
}

/// Inputs of at least this many rows are pre-selected in parallel under a
/// per-partition limit ([`preselect`]).
const PRESELECT_ROWS: usize = 1 << 20;

/// The partition of each of rows `0..n` by the partition `keys` (none: one
/// partition), numbered in order of first appearance, and how many there are.
fn partition_ids(keys: &[ArrayRef], n: usize) -> Result<(Vec<u32>, usize)> {
    if keys.is_empty() {
        return Ok((vec![0u32; n], 1));
    }
    let types: Vec<DataType> = keys.iter().map(|k| k.data_type().clone()).collect();
    let encoder = KeyEncoder::new(&types, NullKeys::Group)?;
    let mut hashes = Vec::new();
    let encoded = encoder.encode(keys, &mut hashes)?;
    let mut table = GroupTable::for_batch(&encoder, &encoded);
    let mut groups = Vec::with_capacity(n);
    table.insert_batch(&encoder, &encoded, &hashes, &mut groups)?;
    Ok((groups, table.len()))
}

/// Rows `0..n` bucketed by the partition `keys` ([`partition_ids`]): the
/// start of each partition's rows in the returned order, plus the end.
/// Rows keep their input order within a partition.
fn bucket_by_partition(keys: &[ArrayRef], n: usize) -> Result<(Vec<usize>, Vec<u32>)> {
    let (groups, num_groups) = partition_ids(keys, n)?;
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
    Ok((starts, order))
}

/// Up to this many rows per partition, [`preselect`] keeps each
/// partition's first rows as it reads them rather than bucketing and
/// sorting its rows.
const STREAMED_LIMIT: usize = 8;

/// The rows, in input order, that can be among the first `k` of their
/// partition: each thread takes a contiguous range of rows and keeps the
/// first `k` of every partition within it. The first `k` of a partition
/// overall are among those (rows order by key, then by input position, a
/// total order), so the window over these rows keeps the same rows and
/// numbers them alike, while its single-threaded partitioning and sorts see
/// at most `k` rows per partition and range instead of all of them
/// (db-benchmark q8: 400K of 10M rows, for the 200K it keeps).
fn preselect(
    all: &RecordBatch,
    partition_by: &[PhysicalExpr],
    order_by: &[(PhysicalExpr, SortOptions)],
    k: usize,
) -> Result<Vec<u32>> {
    let n = all.num_rows();
    let keys = partition_by
        .iter()
        .map(|p| evaluate_array(p, all))
        .collect::<Result<Vec<_>>>()?;
    let order_keys = OrderKeys::new(order_by, all)?;
    let ranges = rayon::current_num_threads();
    let per_range = n.div_ceil(ranges);
    let kept: Vec<Vec<u32>> = (0..ranges)
        .into_par_iter()
        .map(|r| {
            let lo = (r * per_range).min(n);
            let len = per_range.min(n - lo);
            let keys: Vec<ArrayRef> = keys.iter().map(|a| a.slice(lo, len)).collect();
            if let OrderKeys::Normalized {
                keys: order,
                nulls,
                nulls_first,
            } = &order_keys
                && k <= STREAMED_LIMIT
            {
                // Each partition's best `k` so far, best first, as the rows
                // come: reads the order keys in sequence, not gathered.
                let (groups, num_groups) = partition_ids(&keys, len)?;
                let mut best = vec![u128::MAX; num_groups * k];
                for (j, &g) in groups.iter().enumerate() {
                    let row = (lo + j) as u32;
                    let c = OrderKeys::composite(order, nulls.as_ref(), *nulls_first, row);
                    let top = &mut best[g as usize * k..(g as usize + 1) * k];
                    if c < top[k - 1] {
                        let at = top.partition_point(|&x| x < c);
                        top.copy_within(at..k - 1, at + 1);
                        top[at] = c;
                    }
                }
                let mut kept: Vec<u32> = best
                    .into_iter()
                    .filter(|&c| c != u128::MAX)
                    .map(|c| c as u32)
                    .collect();
                kept.sort_unstable();
                return Ok(kept);
            }
            let (starts, mut order) = bucket_by_partition(&keys, len)?;
            order.iter_mut().for_each(|i| *i += lo as u32);
            let mut kept = Vec::new();
            let mut scratch = Vec::new();
            for w in starts.windows(2) {
                let segment = &mut order[w[0]..w[1]];
                order_keys.sort(segment, Some(k), &mut scratch);
                kept.extend_from_slice(&segment[..k.min(segment.len())]);
            }
            kept.sort_unstable();
            Ok(kept)
        })
        .collect::<Result<_>>()?;
    Ok(kept.concat())
}

/// Appends `func() OVER (PARTITION BY partition_by ORDER BY order_by)`.
pub fn window(
    input: Vec<RecordBatch>,
    input_schema: &SchemaRef,
    spec: WindowSpec<'_>,
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    window_preselecting_from(input, input_schema, spec, schema, PRESELECT_ROWS)
}

/// [`window`], pre-selecting rows under a limit from `preselect_rows` rows.
fn window_preselecting_from(
    input: Vec<RecordBatch>,
    input_schema: &SchemaRef,
    spec: WindowSpec<'_>,
    schema: &SchemaRef,
    preselect_rows: usize,
) -> Result<Vec<RecordBatch>> {
    let WindowSpec {
        func,
        args,
        partition_by,
        order_by,
        limit,
    } = spec;
    let mut all = crate::kernels::concat_owned(input_schema, input)?;
    if all.num_rows() == 0 {
        return Ok(vec![]);
    }
    if let (Some(k), false) = (limit, order_by.is_empty())
        && all.num_rows() >= preselect_rows
        && rayon::current_num_threads() > 1
    {
        let candidates = preselect(&all, partition_by, order_by, k)?;
        all = take_record_batch(&all, &UInt32Array::from(candidates))?;
    }
    let n = all.num_rows();
    // 1. Partition ids, and rows bucketed by partition (counting sort).
    let keys = partition_by
        .iter()
        .map(|p| evaluate_array(p, &all))
        .collect::<Result<Vec<_>>>()?;
    let (starts, mut order) = bucket_by_partition(&keys, n)?;
    let num_groups = starts.len() - 1;
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
    if let Some(shift) = func.shift() {
        return shifted(&all, args, shift, (&starts, &order), schema);
    }
    let peers = |a: u32, b: u32| order_keys.as_ref().is_none_or(|k| k.peers(a, b));
    // Each row's frame, where the function has one of its own.
    let bounds = match func {
        WindowFunc::Value(_, Some(frame)) | WindowFunc::FramedAggregate(_, frame) => Some(
            window_frame::frame_bounds(frame, &all, order_by, (&starts, &order), &peers)?,
        ),
        _ => None,
    };
    if let WindowFunc::Value(pick, _) = func {
        let frames = Frames {
            bounds: bounds.as_deref(),
            peers: &peers,
        };
        return frame_values(&all, &args[0], pick, frames, (&starts, &order), schema);
    }
    if func.is_distribution() {
        return distribution(&all, func, (&starts, &order), &peers, schema);
    }
    if let WindowFunc::Aggregate(agg) | WindowFunc::FramedAggregate(agg, _) = func {
        let spec = window_aggregate::Spec {
            all: &all,
            func: agg,
            args,
            starts: &starts,
            order: &order,
            schema,
        };
        return match (func, &order_keys) {
            (WindowFunc::FramedAggregate(_, frame), _) => {
                spec.framed(frame, bounds.as_deref().unwrap_or_default())
            }
            (_, None) => spec.whole_partitions(),
            (_, Some(keys)) => spec.running(|a, b| keys.peers(a, b)),
        };
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
                WindowFunc::PercentRank
                | WindowFunc::CumeDist
                | WindowFunc::Ntile(_)
                | WindowFunc::Aggregate(_)
                | WindowFunc::FramedAggregate(..)
                | WindowFunc::Lag(_)
                | WindowFunc::Lead(_)
                | WindowFunc::ShiftPresent(_)
                | WindowFunc::Value(..) => unreachable!("returned above"),
            });
        }
    }
    with_column(&all, rows, Arc::new(Int64Array::from(ranks)), schema)
}

/// `percent_rank`, `cume_dist` or `ntile` (`func`): the rows of `all` in
/// window order (`order`, partition `g` at `starts[g]..starts[g + 1]`),
/// each with its value, from its position, its partition's size and its
/// run of peers (`peers` says whether two rows tie in window order).
fn distribution(
    all: &RecordBatch,
    func: WindowFunc,
    (starts, order): (&[usize], &[u32]),
    peers: &dyn Fn(u32, u32) -> bool,
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let mut values = Vec::with_capacity(order.len());
    for w in starts.windows(2) {
        let segment = &order[w[0]..w[1]];
        let mut first = 0;
        while first < segment.len() {
            let mut end = first + 1;
            while end < segment.len() && peers(segment[end], segment[first]) {
                end += 1;
            }
            values.extend(
                (first..end).filter_map(|k| func.distribution(k, segment.len(), first..end)),
            );
            first = end;
        }
    }
    let column: ArrayRef = match func {
        WindowFunc::Ntile(_) => Arc::new(Int64Array::from_iter_values(
            values.into_iter().map(|v| v as i64),
        )),
        _ => Arc::new(Float64Array::from(values)),
    };
    with_column(all, order.to_vec(), column, schema)
}

/// `lag`/`lead(value [, n [, default]])` (`args`: value, then default if
/// any): the rows of `all` in window order (`order`, partition `g` at
/// `starts[g]..starts[g + 1]`), each with `value` of the row `shift` places
/// away in its partition; past either end, the default of the row itself,
/// or null.
fn shifted(
    all: &RecordBatch,
    args: &[PhysicalExpr],
    shift: (isize, bool),
    (starts, order): (&[usize], &[u32]),
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let values = evaluate_array(&args[0], all)?;
    let mut sources: Vec<Option<u32>> = Vec::with_capacity(order.len());
    for w in starts.windows(2) {
        let segment = &order[w[0]..w[1]];
        let present = |j: usize| values.is_valid(segment[j] as usize);
        sources.extend((0..segment.len()).map(|k| {
            WindowFunc::shifted_position(shift, k, segment.len(), present).map(|j| segment[j])
        }));
    }
    let missing = BooleanArray::from_iter(sources.iter().map(|s| Some(s.is_none())));
    let mut shifted = take(&values, &UInt32Array::from(sources), None)?;
    if let Some(default) = args.get(1)
        && missing.true_count() > 0
    {
        let default = evaluate_array(default, all)?;
        let default = take(&default, &UInt32Array::from(order.to_vec()), None)?;
        shifted = arrow::compute::kernels::zip::zip(&missing, &default, &shifted)?;
    }
    with_column(all, order.to_vec(), shifted, schema)
}

/// How each row's frame is found: its explicit frame's `bounds` if any
/// (positions in window order, [`window_frame::frame_bounds`]), else SQL's
/// default, the partition's start to the row's last peer (`peers`: whether
/// two rows have the same order key; every row's peer without ORDER BY).
struct Frames<'a> {
    bounds: Option<&'a [(usize, usize)]>,
    peers: &'a dyn Fn(u32, u32) -> bool,
}

/// `first_value` / `last_value` / `nth_value`: the rows of `all` in window
/// order, each with `value` of the row `pick` chooses from its frame.
fn frame_values(
    all: &RecordBatch,
    value: &PhysicalExpr,
    pick: FramePick,
    frames: Frames<'_>,
    (starts, order): (&[usize], &[u32]),
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let values = evaluate_array(value, all)?;
    let mut sources: Vec<Option<u32>> = Vec::with_capacity(order.len());
    let mut last_peer: Vec<usize> = Vec::new();
    for w in starts.windows(2) {
        let segment = &order[w[0]..w[1]];
        let len = segment.len();
        if len == 0 {
            continue;
        }
        if frames.bounds.is_none() {
            // Each position's last peer, from the end backwards.
            last_peer.clear();
            last_peer.resize(len, len - 1);
            for k in (0..len - 1).rev() {
                if (frames.peers)(segment[k], segment[k + 1]) {
                    last_peer[k] = last_peer[k + 1];
                } else {
                    last_peer[k] = k;
                }
            }
        }
        let first = w[0];
        sources.extend((0..len).map(|k| {
            let (lo, hi) = match frames.bounds {
                Some(bounds) => (bounds[first + k].0 - first, bounds[first + k].1 - first),
                None => (0, last_peer[k] + 1),
            };
            pick.pick(lo, hi, |i| values.is_valid(segment[i] as usize))
                .map(|i| segment[i])
        }));
    }
    let picked = take(&values, &UInt32Array::from(sources), None)?;
    with_column(all, order.to_vec(), picked, schema)
}

/// The `rows` of `all`, in that order, with `column` (one value per row
/// taken) appended: a window's output.
pub(super) fn with_column(
    all: &RecordBatch,
    rows: Vec<u32>,
    column: ArrayRef,
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let taken = take_record_batch(all, &UInt32Array::from(rows))?;
    let mut columns = taken.columns().to_vec();
    columns.push(column);
    Ok(vec![RecordBatch::try_new(schema.clone(), columns)?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::col;
    use arrow::array::{Date32Array, Float64Array, Int32Array};
    use arrow::datatypes::{Field, Schema};

    /// Packed order keys sort rows exactly as arrow rows of the same keys
    /// do, for every mix of directions and null placements, nulls and
    /// negative values included. (Floats span 64 bits of image, so they
    /// pack only as a lone key, the `normalize` path.)
    #[test]
    fn packed_order_keys_order_as_arrow_rows() {
        let n = 500;
        let a: ArrayRef = Arc::new(Int32Array::from_iter(
            (0..n).map(|i| (i % 7 != 3).then_some(i % 11 - 5)),
        ));
        let b: ArrayRef = Arc::new(Date32Array::from_iter(
            (0..n).map(|i| (i % 13 != 0).then_some(9000 + (i * 37) % 50)),
        ));
        let c: ArrayRef = Arc::new(Int64Array::from_iter_values(
            (0..n).map(|i| -(((i * 7919) % 101) as i64)),
        ));
        let batch = RecordBatch::try_from_iter([("a", a), ("b", b), ("c", c)]).unwrap();
        let schema = batch.schema();
        let compile = |name: &str| PhysicalExpr::compile(&col(name), &schema).unwrap();
        for (descending, nulls_first) in
            [(false, false), (false, true), (true, false), (true, true)]
        {
            let options = SortOptions {
                descending,
                nulls_first,
            };
            let flipped = SortOptions {
                descending: !descending,
                nulls_first: !nulls_first,
            };
            let order_by = [
                (compile("a"), options),
                (compile("b"), flipped),
                (compile("c"), options),
            ];
            let keys = OrderKeys::new(&order_by, &batch).unwrap();
            assert!(matches!(keys, OrderKeys::Normalized { .. }), "packed");
            let fields = order_by
                .iter()
                .map(|(e, o)| SortField::new_with_options(e.data_type.clone(), *o))
                .collect();
            let columns: Vec<ArrayRef> = batch.columns().to_vec();
            let rows = OrderKeys::Rows(
                RowConverter::new(fields)
                    .unwrap()
                    .convert_columns(&columns)
                    .unwrap(),
            );
            let sorted = |k: &OrderKeys| {
                let mut order: Vec<u32> = (0..n as u32).collect();
                k.sort(&mut order, None, &mut Vec::new());
                order
            };
            let (packed_order, rows_order) = (sorted(&keys), sorted(&rows));
            assert_eq!(
                packed_order, rows_order,
                "desc={descending} nulls_first={nulls_first}"
            );
            for w in packed_order.windows(2) {
                assert_eq!(keys.peers(w[0], w[1]), rows.peers(w[0], w[1]));
            }
        }
    }

    /// The window's rows, sorted (partitions may come in another order).
    fn run(batch: &RecordBatch, limit: Option<usize>, preselect_rows: usize) -> Vec<String> {
        let schema = batch.schema();
        let compile = |name: &str| PhysicalExpr::compile(&col(name), &schema).unwrap();
        let partition_by = [compile("p")];
        let order_by = [(
            compile("v"),
            SortOptions {
                descending: true,
                nulls_first: false,
            },
        )];
        let mut fields = schema.fields().to_vec();
        fields.push(Arc::new(Field::new("rn", DataType::Int64, false)));
        let out_schema = Arc::new(Schema::new(fields));
        let spec = WindowSpec {
            func: WindowFunc::RowNumber,
            args: &[],
            partition_by: &partition_by,
            order_by: &order_by,
            limit,
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let input = vec![
            batch.slice(0, 700),
            batch.slice(700, batch.num_rows() - 700),
        ];
        let out = pool
            .install(|| window_preselecting_from(input, &schema, spec, &out_schema, preselect_rows))
            .unwrap();
        let all = arrow::compute::concat_batches(&out_schema, &out).unwrap();
        let mut rows: Vec<String> = (0..all.num_rows())
            .map(|r| {
                let cell = |c: usize| {
                    arrow::util::display::array_value_to_string(all.column(c), r).unwrap()
                };
                format!("{}|{}|{}|{}", cell(0), cell(1), cell(2), cell(3))
            })
            .collect();
        rows.sort();
        rows
    }

    #[test]
    fn preselected_rows_give_the_same_first_rows_per_partition() {
        // 5,000 rows in 37 partitions, order values with many ties and some
        // nulls, and a row id to tell tied rows apart.
        let n = 5_000i64;
        let p = Int64Array::from_iter_values((0..n).map(|i| (i * 7) % 37));
        let v =
            Float64Array::from_iter((0..n).map(|i| (i % 11 != 0).then(|| ((i * 13) % 5) as f64)));
        let id = Int64Array::from_iter_values(0..n);
        let schema = Arc::new(Schema::new(vec![
            Field::new("p", DataType::Int64, false),
            Field::new("v", DataType::Float64, true),
            Field::new("id", DataType::Int64, false),
        ]));
        let batch =
            RecordBatch::try_new(schema, vec![Arc::new(p), Arc::new(v), Arc::new(id)]).unwrap();
        for k in [1, 2, 5, 200] {
            let plain = run(&batch, Some(k), usize::MAX);
            let expected = if k > 136 { n as usize } else { 37 * k };
            assert_eq!(plain.len(), expected, "k={k}");
            assert_eq!(run(&batch, Some(k), 0), plain, "k={k}");
        }
    }
}
