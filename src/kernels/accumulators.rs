//! Per-group aggregate state, updated a batch at a time.
//!
//! An accumulator receives one batch's argument columns plus two parallel
//! lists: the rows to take and the group of each. The loops are monomorphic
//! (generic over the arrow native type), so the only dynamic call is one per
//! batch, never one per row.

use std::any::Any;
use std::sync::Arc;

use arrow::array::*;
use arrow::compute::cast;
use arrow::datatypes::*;
use arrow::row::{RowConverter, SortField};

use crate::error::{Result, SlothError};
use crate::expr::AggFunc;

mod bitwise;
mod co_moments;
mod collect;
mod distinct;
mod first_by;
mod picks;
use bitwise::Bitwise;
use co_moments::BivariateAcc;
pub(crate) use co_moments::CoMoments;
use collect::{ArrayAgg, StringAgg};
use distinct::{Distinct, DistinctInput};
use first_by::FirstBy;
use picks::Picks;

/// Aggregate state for all groups of one aggregate expression.
pub trait Accumulator: Any + Send + Sync {
    /// Adds `values[..][rows[k]]` to group `groups[k]` for every k.
    /// `num_groups` is the number of groups that exist so far.
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        num_groups: usize,
    ) -> Result<()>;
    /// The final value per group, for `num_groups` groups.
    fn finish(&mut self, num_groups: usize) -> Result<ArrayRef>;
    /// Adds the state of `other`'s groups `src[k]` to this accumulator's
    /// groups `dst[k]` (`other` is the same kind of accumulator, from another
    /// thread; `num_groups` is this side's group count).
    fn merge(
        &mut self,
        other: &dyn Accumulator,
        src: &[u32],
        dst: &[u32],
        num_groups: usize,
    ) -> Result<()>;
    /// Bytes of state that grow with the values seen rather than with the
    /// groups (input arrays held to pick from, collected values), which the
    /// aggregate reserves beside its flat per-group estimate; 0 for
    /// fixed-size states (sums, counts, extremes of numbers). Distinct
    /// sets report 0 too: partitioning by the group keys cannot split one
    /// group's set, so counting it would fail `count(distinct)` over few
    /// groups under a small limit, where it ran before; spilling them needs
    /// the distinct aggregate planned as a group-by on keys and value.
    fn held_bytes(&self) -> usize {
        0
    }
}

/// Bytes the rows of `a` take: of a slice, its share of the buffers it
/// shares with the whole (an input split into batches keeps one buffer).
fn slice_bytes(a: &ArrayRef) -> usize {
    a.to_data()
        .get_slice_memory_size()
        .unwrap_or_else(|_| a.get_array_memory_size())
}

/// Makes `held` hold `bytes`, adding what its allocation grew by to
/// `counted` (the bytes a state's encoded rows take, kept as they grow).
fn replace_counted(held: &mut Vec<u8>, bytes: &[u8], counted: &mut usize) {
    let before = held.capacity();
    held.clear();
    held.extend_from_slice(bytes);
    *counted += held.capacity() - before;
}

/// Bytes a vector's allocation takes.
fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// Downcasts the other side of a merge to this accumulator's type.
fn same<T: 'static>(other: &dyn Accumulator) -> &T {
    (other as &dyn Any)
        .downcast_ref::<T>()
        .expect("merging accumulators of the same kind")
}

/// The type each argument is cast to before it reaches the accumulator.
pub fn input_types(func: AggFunc, args: &[DataType]) -> Vec<DataType> {
    let f64s = || args.iter().map(|_| DataType::Float64).collect();
    match func {
        // Decimals are summed as they come: the i128 values do not change
        // with the declared precision, so no cast is needed.
        AggFunc::Sum | AggFunc::Mean if matches!(args.first(), Some(DataType::Decimal128(..))) => {
            args.to_vec()
        }
        AggFunc::Sum => {
            vec![crate::expr::agg_output_type(func, args).unwrap_or(DataType::Int64)]
        }
        AggFunc::Mean
        | AggFunc::Std
        | AggFunc::Var
        | AggFunc::Median
        | AggFunc::Quantile(_)
        | AggFunc::Bivariate(_) => f64s(),
        AggFunc::Bitwise(_) => args.iter().map(Bitwise::input_type).collect(),
        // Values and separator as text; the key as it is.
        AggFunc::StringAgg(_) => (args.iter().enumerate())
            .map(|(i, t)| if i < 2 { DataType::Utf8 } else { t.clone() })
            .collect(),
        _ => args.to_vec(),
    }
}

/// Creates the accumulator for `func` whose inputs have `types`
/// (already the types from [`input_types`]).
pub fn create(
    func: AggFunc,
    distinct: bool,
    types: &[DataType],
    out: &DataType,
) -> Result<Box<dyn Accumulator>> {
    let t = types.first().cloned().unwrap_or(DataType::Null);
    Ok(match func {
        AggFunc::CountStar => Box::new(Count {
            counts: vec![],
            count_nulls: true,
        }),
        AggFunc::Count if distinct => Box::new(Distinct::new(&t, false)?),
        // DISTINCT changes nothing for these.
        AggFunc::Min | AggFunc::Max if distinct => create(func, false, types, out)?,
        _ if distinct => Box::new(DistinctInput::new(func, &t, out)?),
        AggFunc::NUnique => Box::new(Distinct::new(&t, true)?),
        AggFunc::Count => Box::new(Count {
            counts: vec![],
            count_nulls: false,
        }),
        AggFunc::Sum => match out {
            DataType::Int64 => Box::new(Sum::<Int64Type>::new(out.clone())),
            DataType::UInt64 => Box::new(Sum::<UInt64Type>::new(out.clone())),
            DataType::Float64 => Box::new(Sum::<Float64Type>::new(out.clone())),
            DataType::Decimal128(..) => Box::new(Sum::<Decimal128Type>::new(out.clone())),
            t => return Err(SlothError::types(format!("sum() of {t}"))),
        },
        AggFunc::Mean => match t {
            DataType::Decimal128(_, scale) => Box::new(DecimalMean {
                scale,
                sums: vec![],
                counts: vec![],
            }),
            _ => Box::new(Moments::new(Moment::Mean)),
        },
        AggFunc::Var => Box::new(Moments::new(Moment::Var)),
        AggFunc::Std => Box::new(Moments::new(Moment::Std)),
        AggFunc::Median => Box::new(Quantile::new(0.5)),
        AggFunc::Quantile(q) => {
            if !(0.0..=1.0).contains(&q) {
                return Err(SlothError::plan(format!("quantile {q} is not in [0, 1]")));
            }
            Box::new(Quantile::new(q))
        }
        AggFunc::Bivariate(stat) => Box::new(BivariateAcc {
            stat,
            state: vec![],
        }),
        AggFunc::Bitwise(op) => Box::new(Bitwise::new(op, out)),
        AggFunc::StringAgg(order) => Box::new(StringAgg::new(order, types.get(2))?),
        AggFunc::ArrayAgg(order) => Box::new(ArrayAgg::new(order, &t, types.get(1))?),
        AggFunc::FirstBy(order) => Box::new(FirstBy::new(
            order,
            types.get(1).unwrap_or(&DataType::Null),
        )?),
        AggFunc::First => Box::new(Pick {
            first: true,
            picks: Picks::default(),
        }),
        AggFunc::Last => Box::new(Pick {
            first: false,
            picks: Picks::default(),
        }),
        AggFunc::Min | AggFunc::Max => min_max(func == AggFunc::Max, &t)?,
    })
}

fn min_max(max: bool, t: &DataType) -> Result<Box<dyn Accumulator>> {
    macro_rules! prim {
        ($ty:ty) => {
            Box::new(MinMax::<$ty> {
                max,
                best: vec![],
                seen: vec![],
                data_type: t.clone(),
            })
        };
    }
    Ok(match t {
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        DataType::Float32 => prim!(Float32Type),
        DataType::Float64 => prim!(Float64Type),
        DataType::Date32 => prim!(Date32Type),
        DataType::Date64 => prim!(Date64Type),
        DataType::Decimal128(..) => prim!(Decimal128Type),
        DataType::Timestamp(TimeUnit::Second, _) => prim!(TimestampSecondType),
        DataType::Timestamp(TimeUnit::Millisecond, _) => prim!(TimestampMillisecondType),
        DataType::Timestamp(TimeUnit::Microsecond, _) => prim!(TimestampMicrosecondType),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => prim!(TimestampNanosecondType),
        // Strings, booleans and the rest: compare via the row format, keep the winner's position.
        _ => Box::new(MinMaxRows::new(max, t)?),
    })
}

fn grow<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) {
    if v.len() < n {
        v.resize(n, fill);
    }
}

/// At most this many groups get [`scatter_add`]'s lane copies.
const LANES_MAX_GROUPS: usize = 16;

/// Adds `value(r)` into `sums[g]` for each row `r` and its group `g`, and
/// calls `mark(g)` in the same pass (a sum marks the groups that got a
/// value: a second pass over `groups` took a third of its time on
/// db-benchmark q1).
///
/// With few groups, consecutive rows mostly hit the same slot, and each add
/// waits for the previous one's store to the same address. Four copies of
/// the slots, taken in turn, let four chains of adds run at once; they are
/// summed into `sums` at the end.
fn scatter_add<V: Copy>(
    sums: &mut [V],
    (rows, groups): (&[u32], &[u32]),
    (zero, add): (V, impl Fn(V, V) -> V),
    value: impl Fn(usize) -> V,
    mut mark: impl FnMut(u32),
) {
    let n = sums.len();
    if n > LANES_MAX_GROUPS || rows.len() < 64 {
        for (&r, &g) in rows.iter().zip(groups) {
            sums[g as usize] = add(sums[g as usize], value(r as usize));
            mark(g);
        }
        return;
    }
    const LANES: usize = 4;
    let mut lanes = [[zero; LANES_MAX_GROUPS]; LANES];
    let (rows4, groups4) = (rows.chunks_exact(LANES), groups.chunks_exact(LANES));
    let (rest_rows, rest_groups) = (rows4.remainder(), groups4.remainder());
    for (r, g) in rows4.zip(groups4) {
        for l in 0..LANES {
            let slot = &mut lanes[l][g[l] as usize % LANES_MAX_GROUPS];
            *slot = add(*slot, value(r[l] as usize));
            mark(g[l]);
        }
    }
    for (&r, &g) in rest_rows.iter().zip(rest_groups) {
        sums[g as usize] = add(sums[g as usize], value(r as usize));
        mark(g);
    }
    for lane in &lanes {
        for (s, &v) in sums.iter_mut().zip(lane) {
            *s = add(*s, v);
        }
    }
}

struct Count {
    counts: Vec<i64>,
    count_nulls: bool,
}

impl Accumulator for Count {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        grow(&mut self.counts, n, 0);
        let nulls = if self.count_nulls {
            None
        } else {
            values[0].logical_nulls()
        };
        match nulls {
            None => scatter_add(
                &mut self.counts,
                (rows, groups),
                (0, |a, b| a + b),
                |_| 1,
                |_| {},
            ),
            Some(nulls) => {
                for (&r, &g) in rows.iter().zip(groups) {
                    self.counts[g as usize] += nulls.is_valid(r as usize) as i64;
                }
            }
        }
        Ok(())
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        grow(&mut self.counts, n, 0);
        Ok(Arc::new(Int64Array::from(std::mem::take(&mut self.counts))))
    }
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        grow(&mut self.counts, n, 0);
        for (&s, &d) in src.iter().zip(dst) {
            self.counts[d as usize] += other.counts.get(s as usize).copied().unwrap_or(0);
        }
        Ok(())
    }
}

/// Integer sums switch to checked additions once the magnitudes added so
/// far could reach this (about half of `i64::MAX`, a margin for the float
/// estimate): below it no sum can have overflowed, so the fast wrapping
/// loops are exact.
const CHECKED_FROM: f64 = 4.0e18;

struct Sum<T: ArrowPrimitiveType> {
    sums: Vec<T::Native>,
    seen: Vec<bool>,
    data_type: DataType,
    /// An upper bound of |sum| over every group: the largest magnitude of
    /// each batch times its rows, added up (integer sums only).
    bound: f64,
    /// Adds are checked: the bound passed [`CHECKED_FROM`].
    checked: bool,
}

/// The largest magnitude in an Int64 or UInt64 array (nulls' slots
/// included: an upper bound is all it serves), in one pass; `None` for
/// other types.
fn largest_magnitude(values: &ArrayRef) -> Option<f64> {
    Some(match values.data_type() {
        DataType::Int64 => {
            let v = values.as_primitive::<Int64Type>().values();
            v.iter().fold(0u64, |m, x| m.max(x.unsigned_abs())) as f64
        }
        DataType::UInt64 => {
            let v = values.as_primitive::<UInt64Type>().values();
            v.iter().fold(0u64, |m, x| m.max(*x)) as f64
        }
        _ => return None,
    })
}

/// Whether a sum of some of `values` (Int64 or UInt64) could come near
/// the type's limit, so that adds must be checked.
pub(crate) fn integer_sum_may_overflow(values: &ArrayRef) -> bool {
    largest_magnitude(values).is_some_and(|m| m * values.len() as f64 >= CHECKED_FROM)
}

/// The error of an integer sum past its type (`sum()` never wraps).
pub(crate) fn sum_overflow(data_type: &DataType) -> SlothError {
    SlothError::Data(format!(
        "sum() overflowed {data_type}; cast its argument to DECIMAL(38, 0) to sum it exactly"
    ))
}

impl<T: ArrowPrimitiveType> Sum<T> {
    fn new(data_type: DataType) -> Self {
        Sum {
            sums: vec![],
            seen: vec![],
            data_type,
            bound: 0.0,
            checked: false,
        }
    }

    /// Grows the bound by `rows` values of `values`; integer types only
    /// (floats go to infinity, decimals have 128 bits for 38 digits).
    fn note_magnitude(&mut self, values: &ArrayRef, rows: usize) {
        if self.checked {
            return;
        }
        let Some(largest) = largest_magnitude(values) else {
            return;
        };
        self.bound += largest * rows as f64;
        self.checked |= self.bound >= CHECKED_FROM;
    }

    fn overflow(&self) -> SlothError {
        sum_overflow(&self.data_type)
    }

    /// `a + b`, checked once the sums could overflow.
    fn add(&self, a: T::Native, b: T::Native) -> Result<T::Native> {
        if self.checked {
            a.add_checked(b).map_err(|_| self.overflow())
        } else {
            Ok(a.add_wrapping(b))
        }
    }
}

impl<T: ArrowPrimitiveType> Accumulator for Sum<T> {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        grow(&mut self.sums, n, T::Native::default());
        grow(&mut self.seen, n, false);
        self.note_magnitude(&values[0], rows.len());
        let a = values[0].as_primitive::<T>();
        let v: &[T::Native] = a.values();
        match a.nulls().filter(|n| n.null_count() > 0) {
            None if !self.checked => {
                let zero = T::Native::default();
                let add = |a: T::Native, b| a.add_wrapping(b);
                let seen = self.seen.as_mut_slice();
                let mark = |g: u32| seen[g as usize] = true;
                scatter_add(&mut self.sums, (rows, groups), (zero, add), |r| v[r], mark);
            }
            nulls => {
                for (&r, &g) in rows.iter().zip(groups) {
                    if nulls.is_none_or(|n| n.is_valid(r as usize)) {
                        let g = g as usize;
                        self.sums[g] = self.add(self.sums[g], v[r as usize])?;
                        self.seen[g] = true;
                    }
                }
            }
        }
        Ok(())
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        grow(&mut self.sums, n, T::Native::default());
        grow(&mut self.seen, n, false);
        let nulls = NullBuffer::from(std::mem::take(&mut self.seen));
        let a = PrimitiveArray::<T>::new(std::mem::take(&mut self.sums).into(), Some(nulls));
        Ok(Arc::new(a.with_data_type(self.data_type.clone())))
    }
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        grow(&mut self.sums, n, T::Native::default());
        grow(&mut self.seen, n, false);
        self.bound += other.bound;
        self.checked |= other.checked || self.bound >= CHECKED_FROM;
        for (&s, &d) in src.iter().zip(dst) {
            if other.seen.get(s as usize).copied().unwrap_or(false) {
                let d = d as usize;
                self.sums[d] = self.add(self.sums[d], other.sums[s as usize])?;
                self.seen[d] = true;
            }
        }
        Ok(())
    }
}

use arrow::buffer::NullBuffer;

struct MinMax<T: ArrowPrimitiveType> {
    max: bool,
    best: Vec<T::Native>,
    seen: Vec<bool>,
    data_type: DataType,
}

impl<T: ArrowPrimitiveType> Accumulator for MinMax<T> {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        grow(&mut self.best, n, T::Native::default());
        grow(&mut self.seen, n, false);
        // A negative NaN is below every number by bits; SQL has one NaN, above.
        let a = crate::kernels::float_zero::canonical_floats(&values[0]);
        let a = a.as_primitive::<T>();
        let v: &[T::Native] = a.values();
        let nulls = a.nulls().filter(|n| n.null_count() > 0);
        for (&r, &g) in rows.iter().zip(groups) {
            let r = r as usize;
            if nulls.is_some_and(|n| n.is_null(r)) {
                continue;
            }
            let (g, x) = (g as usize, v[r]);
            let better = if self.max {
                x.is_gt(self.best[g])
            } else {
                x.is_lt(self.best[g])
            };
            if !self.seen[g] || better {
                self.best[g] = x;
                self.seen[g] = true;
            }
        }
        Ok(())
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        grow(&mut self.best, n, T::Native::default());
        grow(&mut self.seen, n, false);
        let nulls = NullBuffer::from(std::mem::take(&mut self.seen));
        let a = PrimitiveArray::<T>::new(std::mem::take(&mut self.best).into(), Some(nulls));
        Ok(Arc::new(a.with_data_type(self.data_type.clone())))
    }
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        grow(&mut self.best, n, T::Native::default());
        grow(&mut self.seen, n, false);
        for (&s, &d) in src.iter().zip(dst) {
            let (s, d) = (s as usize, d as usize);
            if !other.seen.get(s).copied().unwrap_or(false) {
                continue;
            }
            let x = other.best[s];
            let better = if self.max {
                x.is_gt(self.best[d])
            } else {
                x.is_lt(self.best[d])
            };
            if !self.seen[d] || better {
                self.best[d] = x;
                self.seen[d] = true;
            }
        }
        Ok(())
    }
}

/// Min/max of any type arrow can row-encode: compares encoded rows, keeps
/// the winner's bytes and its position ([`Picks`]), and gathers the winners
/// at the end.
struct MinMaxRows {
    max: bool,
    converter: RowConverter,
    /// Per group: the encoded row of its value so far.
    best: Vec<Option<Vec<u8>>>,
    /// Bytes the rows in `best` hold, kept as they grow.
    best_bytes: usize,
    picks: Picks,
}

impl MinMaxRows {
    fn new(max: bool, t: &DataType) -> Result<Self> {
        Ok(MinMaxRows {
            max,
            converter: RowConverter::new(vec![SortField::new(t.clone())])?,
            best: vec![],
            best_bytes: 0,
            picks: Picks::default(),
        })
    }

    fn grow(&mut self, n: usize) {
        grow(&mut self.best, n, None);
        self.picks.grow(n);
    }

    /// Makes `at` group `g`'s value if `row` beats its best.
    fn offer(&mut self, g: usize, row: &[u8], at: (usize, usize)) {
        let better = match &self.best[g] {
            None => true,
            Some(b) if self.max => row > b.as_slice(),
            Some(b) => row < b.as_slice(),
        };
        if better {
            let best = self.best[g].get_or_insert_with(Vec::new);
            replace_counted(best, row, &mut self.best_bytes);
            self.picks.set(g, at);
        }
    }
}

impl Accumulator for MinMaxRows {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        self.grow(n);
        let batch = self.picks.add(&values[0]);
        let encoded = self.converter.convert_columns(&values[..1])?;
        let nulls = values[0].logical_nulls();
        for (&r, &g) in rows.iter().zip(groups) {
            let r = r as usize;
            if nulls.as_ref().is_some_and(|n| n.is_null(r)) {
                continue;
            }
            self.offer(g as usize, encoded.row(r).as_ref(), (batch, r));
        }
        self.picks.compact()
    }
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        self.grow(n);
        let offset = self.picks.absorb(&other.picks);
        for (&s, &d) in src.iter().zip(dst) {
            let s = s as usize;
            if let (Some(Some(bytes)), Some((batch, row))) = (other.best.get(s), other.picks.get(s))
            {
                self.offer(d as usize, bytes, (batch + offset, row));
            }
        }
        self.picks.compact()
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        self.picks.finish(n)
    }
    fn held_bytes(&self) -> usize {
        self.best_bytes + vec_bytes(&self.best) + self.picks.held_bytes()
    }
}

/// `first(x)` or `last(x)`: the first or last value each group saw.
struct Pick {
    first: bool,
    picks: Picks,
}

impl Accumulator for Pick {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        self.picks.grow(n);
        let batch = self.picks.add(&values[0]);
        for (&r, &g) in rows.iter().zip(groups) {
            let g = g as usize;
            if !self.first || self.picks.get(g).is_none() {
                self.picks.set(g, (batch, r as usize));
            }
        }
        self.picks.compact()
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        self.picks.finish(n)
    }
    /// `other` saw later input than `self` (merges go in input order).
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        self.picks.grow(n);
        let offset = self.picks.absorb(&other.picks);
        for (&s, &d) in src.iter().zip(dst) {
            let Some((batch, row)) = other.picks.get(s as usize) else {
                continue;
            };
            let d = d as usize;
            if !self.first || self.picks.get(d).is_none() {
                self.picks.set(d, (batch + offset, row));
            }
        }
        self.picks.compact()
    }
    fn held_bytes(&self) -> usize {
        self.picks.held_bytes()
    }
}

/// Exact mean of decimals: i128 sums and counts, divided once at the end.
struct DecimalMean {
    scale: i8,
    sums: Vec<i128>,
    counts: Vec<i64>,
}

impl Accumulator for DecimalMean {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        grow(&mut self.sums, n, 0);
        grow(&mut self.counts, n, 0);
        let a = values[0].as_primitive::<Decimal128Type>();
        let v: &[i128] = a.values();
        let nulls = a.nulls().filter(|n| n.null_count() > 0);
        let Some(nulls) = nulls else {
            let add = |a: i128, b| a.wrapping_add(b);
            scatter_add(&mut self.sums, (rows, groups), (0, add), |r| v[r], |_| {});
            scatter_add(
                &mut self.counts,
                (rows, groups),
                (0, |a, b| a + b),
                |_| 1,
                |_| {},
            );
            return Ok(());
        };
        for (&r, &g) in rows.iter().zip(groups) {
            if nulls.is_null(r as usize) {
                continue;
            }
            self.sums[g as usize] = self.sums[g as usize].wrapping_add(v[r as usize]);
            self.counts[g as usize] += 1;
        }
        Ok(())
    }
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        grow(&mut self.sums, n, 0);
        grow(&mut self.counts, n, 0);
        for (&s, &d) in src.iter().zip(dst) {
            let (Some(&sum), Some(&count)) =
                (other.sums.get(s as usize), other.counts.get(s as usize))
            else {
                continue;
            };
            self.sums[d as usize] = self.sums[d as usize].wrapping_add(sum);
            self.counts[d as usize] += count;
        }
        Ok(())
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        grow(&mut self.sums, n, 0);
        grow(&mut self.counts, n, 0);
        let unit = 10f64.powi(self.scale as i32);
        let out: Float64Array = self
            .sums
            .iter()
            .zip(&self.counts)
            .map(|(&s, &c)| (c > 0).then(|| s as f64 / unit / c as f64))
            .collect();
        Ok(Arc::new(out))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Moment {
    Mean,
    Var,
    Std,
}

/// Count, mean and M2 per group (Welford's update): mean, variance, stddev.
struct Moments {
    kind: Moment,
    state: Vec<(f64, f64, f64)>,
}

impl Moments {
    fn new(kind: Moment) -> Self {
        Moments {
            kind,
            state: vec![],
        }
    }
}

fn f64_values(a: &ArrayRef) -> (&[f64], Option<&NullBuffer>) {
    let a = a.as_primitive::<Float64Type>();
    (a.values(), a.nulls().filter(|n| n.null_count() > 0))
}

impl Accumulator for Moments {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        grow(&mut self.state, n, (0.0, 0.0, 0.0));
        let (v, nulls) = f64_values(&values[0]);
        let mean_only = self.kind == Moment::Mean;
        for (&r, &g) in rows.iter().zip(groups) {
            let r = r as usize;
            if nulls.is_some_and(|n| n.is_null(r)) {
                continue;
            }
            let (count, mean, m2) = &mut self.state[g as usize];
            let x = v[r];
            *count += 1.0;
            if mean_only {
                // Sum for now; divided in finish.
                *mean += x;
            } else {
                let d = x - *mean;
                *mean += d / *count;
                *m2 += d * (x - *mean);
            }
        }
        Ok(())
    }
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        grow(&mut self.state, n, (0.0, 0.0, 0.0));
        let mean_only = self.kind == Moment::Mean;
        for (&s, &d) in src.iter().zip(dst) {
            let Some(&(nb, mb, m2b)) = other.state.get(s as usize) else {
                continue;
            };
            let (na, ma, m2a) = &mut self.state[d as usize];
            if nb == 0.0 {
                continue;
            }
            if mean_only {
                *na += nb;
                *ma += mb;
                continue;
            }
            // Chan et al.'s parallel update of count, mean and M2.
            let n = *na + nb;
            let delta = mb - *ma;
            *m2a += m2b + delta * delta * *na * nb / n;
            *ma += delta * nb / n;
            *na = n;
        }
        Ok(())
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        grow(&mut self.state, n, (0.0, 0.0, 0.0));
        let out: Float64Array = self
            .state
            .iter()
            .map(|&(count, mean, m2)| match self.kind {
                Moment::Mean => (count > 0.0).then(|| mean / count),
                Moment::Var => (count > 1.0).then(|| m2 / (count - 1.0)),
                Moment::Std => (count > 1.0).then(|| (m2 / (count - 1.0)).sqrt()),
            })
            .collect();
        Ok(Arc::new(out))
    }
}

struct Quantile {
    q: f64,
    values: Vec<Vec<f64>>,
    /// Values held, over all groups.
    count: usize,
}

impl Quantile {
    fn new(q: f64) -> Self {
        Quantile {
            q,
            values: vec![],
            count: 0,
        }
    }
}

impl Accumulator for Quantile {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        grow(&mut self.values, n, Vec::new());
        let (v, nulls) = f64_values(&values[0]);
        for (&r, &g) in rows.iter().zip(groups) {
            if !nulls.is_some_and(|n| n.is_null(r as usize)) {
                self.values[g as usize].push(v[r as usize]);
                self.count += 1;
            }
        }
        Ok(())
    }
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        grow(&mut self.values, n, Vec::new());
        for (&s, &d) in src.iter().zip(dst) {
            if let Some(v) = other.values.get(s as usize) {
                self.values[d as usize].extend_from_slice(v);
                self.count += v.len();
            }
        }
        Ok(())
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        grow(&mut self.values, n, Vec::new());
        let out: Float64Array = self
            .values
            .iter_mut()
            .map(|v| quantile(v, self.q))
            .collect();
        Ok(Arc::new(out))
    }
    fn held_bytes(&self) -> usize {
        self.count * std::mem::size_of::<f64>() + vec_bytes(&self.values)
    }
}

/// Linear-interpolated quantile (as Polars' and NumPy's default); reorders `v`.
pub(crate) fn quantile(v: &mut [f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let frac = pos - lo as f64;
    let (_, &mut lo_v, rest) = v.select_nth_unstable_by(lo, f64::total_cmp);
    if frac == 0.0 || rest.is_empty() {
        return Some(lo_v);
    }
    let hi_v = rest.iter().copied().fold(f64::INFINITY, f64::min);
    Some(lo_v + (hi_v - lo_v) * frac)
}

/// Casts argument columns to the accumulator's input types.
pub fn cast_inputs(values: &[ArrayRef], types: &[DataType]) -> Result<Vec<ArrayRef>> {
    values
        .iter()
        .zip(types)
        .map(|(v, t)| {
            if v.data_type() == t {
                Ok(v.clone())
            } else {
                Ok(cast(v, t)?)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_interpolates_like_numpy() {
        // numpy.quantile([1, 2, 3, 4], 0.5) == 2.5; 0.25 -> 1.75
        assert_eq!(quantile(&mut [4.0, 1.0, 3.0, 2.0], 0.5), Some(2.5));
        assert_eq!(quantile(&mut [4.0, 1.0, 3.0, 2.0], 0.25), Some(1.75));
        assert_eq!(quantile(&mut [7.0], 0.9), Some(7.0));
        assert_eq!(quantile(&mut [], 0.5), None);
    }

    #[test]
    fn scatter_add_with_lanes_equals_the_plain_loop() {
        // 1,003 selected rows (not a multiple of four), groups of every size
        // around the lane limit.
        let rows: Vec<u32> = (0..2006).step_by(2).collect();
        for n in [1, 3, LANES_MAX_GROUPS, LANES_MAX_GROUPS + 1] {
            let groups: Vec<u32> = rows.iter().map(|&r| (r * 7 / 5) % n as u32).collect();
            let value = |r: usize| (r as i64) * 3 - 1000;
            let mut plain = vec![5i64; n];
            for (&r, &g) in rows.iter().zip(&groups) {
                plain[g as usize] += value(r as usize);
            }
            let mut laned = vec![5i64; n];
            let mut marked = vec![0usize; n];
            let mark = |g: u32| marked[g as usize] += 1;
            scatter_add(&mut laned, (&rows, &groups), (0, |a, b| a + b), value, mark);
            assert_eq!(laned, plain, "{n} groups");
            // Every row marks its group once, in the lane path too.
            let mut expected = vec![0usize; n];
            groups.iter().for_each(|&g| expected[g as usize] += 1);
            assert_eq!(marked, expected, "{n} groups");
        }
    }
}
