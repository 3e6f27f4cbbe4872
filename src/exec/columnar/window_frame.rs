//! Window aggregates over explicit frames: `agg(x) OVER (.. ORDER BY ..
//! ROWS | GROUPS | RANGE BETWEEN a PRECEDING AND b FOLLOWING)`, each row
//! aggregating the rows of its partition its frame spans.
//!
//! Each row's frame is first resolved to a range of positions in window
//! order ([`frame_bounds`], by [`WindowFrame::partition_bounds`]); the
//! values are taken into window order once; then each partition is folded
//! by one of three loops, chosen by the frame's shape, none of which
//! revisits a row more than the frame needs (both ends of the frames only
//! move forward):
//!
//! ```text
//! UNBOUNDED PRECEDING AND ..   one running fold forward (the end only grows)
//! .. AND UNBOUNDED FOLLOWING   one running fold backward (the start only shrinks)
//! n PRECEDING AND m FOLLOWING  a queue of the frame's rows with its fold kept
//!                              (each row joins and leaves it once)
//! ```
//! Sums and counts add, min and max keep the extreme (of strings too,
//! compared as arrow rows), and avg divides a framed Float64 sum by a
//! framed count.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowNativeTypeOp, AsArray, Int64Array, PrimitiveArray, UInt32Array,
};
use arrow::compute::{cast, take};
use arrow::datatypes::{ArrowPrimitiveType, DataType, Int64Type};
use arrow::downcast_primitive_array;
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, SortField};

use super::window_aggregate::{Spec, folded_exactly, means};
use crate::error::{Result, SlothError};
use crate::expr::{AggFunc, RangeMeasure, WindowFrame};
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::evaluate_array;

impl Spec<'_> {
    /// Each row with the aggregate of the rows of its frame: `frame`,
    /// whose rows are `bounds` ([`frame_bounds`]).
    pub fn framed(
        &self,
        frame: WindowFrame,
        bounds: &[(usize, usize)],
    ) -> Result<Vec<RecordBatch>> {
        let frame = Frames { frame, bounds };
        let in_order = |a: &ArrayRef| -> Result<ArrayRef> {
            Ok(take(a, &UInt32Array::from(self.order.to_vec()), None)?)
        };
        let value = || in_order(&evaluate_array(&self.args[0], self.all)?);
        // Non-null values per row, framed: a count (0 over an empty
        // frame), and avg's divisor.
        let counts = |value: Option<&ArrayRef>| -> Result<ArrayRef> {
            let nulls = value.and_then(|v| v.logical_nulls());
            let ones: Int64Array = (0..self.order.len())
                .map(|i| Some(i64::from(nulls.as_ref().is_none_or(|n| n.is_valid(i)))))
                .collect();
            let counts = fold(
                &(Arc::new(ones) as ArrayRef),
                self.starts,
                frame,
                AggFunc::Sum,
            )?;
            let counts: Int64Array = counts
                .as_primitive::<Int64Type>()
                .iter()
                .map(|c| Some(c.unwrap_or(0)))
                .collect();
            Ok(Arc::new(counts) as ArrayRef)
        };
        let column = match self.func {
            AggFunc::CountStar => counts(None)?,
            AggFunc::Count => counts(Some(&value()?))?,
            AggFunc::Sum | AggFunc::Min | AggFunc::Max => {
                let per_row = cast(&value()?, self.out_type())?;
                folded_exactly(self.func, &per_row, |v| {
                    fold(v, self.starts, frame, self.func)
                })?
            }
            AggFunc::Mean => {
                let value = value()?;
                let sums = fold(
                    &cast(&value, &DataType::Float64)?,
                    self.starts,
                    frame,
                    AggFunc::Sum,
                )?;
                means(&sums, &counts(Some(&value))?)
            }
            other => {
                return Err(SlothError::unsupported(format!(
                    "{}() over a window frame (sum, count, min, max and avg are supported)",
                    other.name()
                )));
            }
        };
        let column = crate::kernels::cast_if_needed(&column, self.out_type())?;
        self.emit(column)
    }
}

/// A frame and its rows: `bounds[i]` is the positions `lo..hi` (in
/// window order) of the frame of the row at position `i`.
#[derive(Clone, Copy)]
struct Frames<'a> {
    frame: WindowFrame,
    bounds: &'a [(usize, usize)],
}

/// Each row's frame as positions `lo..hi` in window order (`order`,
/// partition `g` at `starts[g]..starts[g + 1]`): `peers` says whether two
/// rows of `all` tie in the window order, and a RANGE frame with an offset
/// reads the one order key of `order_by`.
pub(super) fn frame_bounds(
    frame: WindowFrame,
    all: &RecordBatch,
    order_by: &[(PhysicalExpr, arrow::compute::SortOptions)],
    (starts, order): (&[usize], &[u32]),
    peers: &dyn Fn(u32, u32) -> bool,
) -> Result<Vec<(usize, usize)>> {
    let (keys, measure) = match (frame.needs_key_values(), order_by) {
        (true, [(key, options)]) => {
            let key = evaluate_array(key, all)?;
            let measure = frame.measure(key.data_type(), options.descending)?;
            let keys: Vec<Option<f64>> = as_numbers(&key)?.iter().collect();
            (keys, measure)
        }
        (true, _) => {
            return Err(SlothError::plan(format!(
                "'{frame}' needs exactly one ORDER BY key"
            )));
        }
        (false, _) => (Vec::new(), RangeMeasure::default()),
    };
    let mut bounds = Vec::with_capacity(order.len());
    for w in starts.windows(2) {
        let (first, segment) = (w[0], &order[w[0]..w[1]]);
        let peer = |k: usize| peers(segment[k - 1], segment[k]);
        let key = |k: usize| keys.get(segment[k] as usize).copied().flatten();
        let local = frame.partition_bounds(segment.len(), peer, key, measure);
        bounds.extend(local.into_iter().map(|(lo, hi)| (first + lo, first + hi)));
    }
    Ok(bounds)
}

/// A numeric, DATE or TIMESTAMP column as numbers (days, or the
/// timestamp's unit), for RANGE frames.
fn as_numbers(key: &ArrayRef) -> Result<arrow::array::Float64Array> {
    let integral = match key.data_type() {
        DataType::Date32 => Some(DataType::Int32),
        DataType::Timestamp(..) => Some(DataType::Int64),
        t if t.is_numeric() => None,
        t => {
            return Err(SlothError::plan(format!(
                "a RANGE frame with an offset needs a numeric, DATE or TIMESTAMP order key, not {t}"
            )));
        }
    };
    let key = match integral {
        Some(t) => cast(key, &t)?,
        None => key.clone(),
    };
    Ok(cast(&key, &DataType::Float64)?
        .as_primitive::<arrow::datatypes::Float64Type>()
        .clone())
}

/// `func` (sum, min or max) folded over each row's frame of `values` (in
/// window order; partition `g` at `starts[g]..starts[g + 1]`), nulls
/// skipped; null where the frame holds no value. Numbers fold their
/// values; min and max of other types (strings) fold row indices, compared
/// as arrow rows.
fn fold(values: &ArrayRef, starts: &[usize], frame: Frames<'_>, func: AggFunc) -> Result<ArrayRef> {
    downcast_primitive_array!(
        values => Ok(Arc::new(match func {
            AggFunc::Min => fold_values(values, starts, frame, |a, b| if b < a { b } else { a }),
            AggFunc::Max => fold_values(values, starts, frame, |a, b| if b > a { b } else { a }),
            _ => fold_values(values, starts, frame, |a, b| a.add_wrapping(b)),
        }) as ArrayRef),
        _ if matches!(func, AggFunc::Min | AggFunc::Max) => {
            let converter = RowConverter::new(vec![SortField::new(values.data_type().clone())])?;
            let rows = converter.convert_columns(std::slice::from_ref(values))?;
            let max = func == AggFunc::Max;
            let nulls = values.logical_nulls();
            let valid = |j: usize| nulls.as_ref().is_none_or(|n| n.is_valid(j));
            let picks = fold_positions(values.len(), starts, frame, |j| valid(j).then_some(j), |a, b| {
                let order = rows.row(b).cmp(&rows.row(a));
                if (max && order.is_gt()) || (!max && order.is_lt()) { b } else { a }
            });
            let picks: UInt32Array = picks.into_iter().map(|p| p.map(|p| p as u32)).collect();
            Ok(take(values, &picks, None)?)
        }
        t => Err(SlothError::unsupported(format!(
            "{}() of {t} over a window frame",
            func.name()
        )))
    )
}

fn fold_values<T: ArrowPrimitiveType>(
    values: &PrimitiveArray<T>,
    starts: &[usize],
    frame: Frames<'_>,
    op: impl Fn(T::Native, T::Native) -> T::Native,
) -> PrimitiveArray<T> {
    let get = |j: usize| values.is_valid(j).then(|| values.value(j));
    let out = fold_positions(values.len(), starts, frame, get, op);
    PrimitiveArray::<T>::from_iter(out).with_data_type(values.data_type().clone())
}

/// `op` folded over the `get(j)` of each position's frame (`None`s
/// skipped), partition by partition: one pass forward when the frame starts
/// at the partition's start, one backward when it ends at the partition's
/// end, else each frame's rows.
fn fold_positions<A: Copy>(
    len: usize,
    starts: &[usize],
    frame: Frames<'_>,
    get: impl Fn(usize) -> Option<A>,
    op: impl Fn(A, A) -> A,
) -> Vec<Option<A>> {
    let combine = |acc: Option<A>, v: Option<A>| match (acc, v) {
        (Some(a), Some(b)) => Some(op(a, b)),
        (a, None) => a,
        (None, b) => b,
    };
    let mut out: Vec<Option<A>> = vec![None; len];
    for w in starts.windows(2) {
        let (first, end) = (w[0], w[1]);
        // Row i's frame, as positions lo..hi.
        let lo = |i: usize| frame.bounds[i].0;
        let hi = |i: usize| frame.bounds[i].1;
        match (frame.frame.start, frame.frame.end) {
            (None, _) => {
                let (mut acc, mut upto) = (None, first);
                for (i, slot) in out[first..end].iter_mut().enumerate() {
                    while upto < hi(first + i) {
                        acc = combine(acc, get(upto));
                        upto += 1;
                    }
                    *slot = acc;
                }
            }
            (Some(_), None) => {
                let (mut acc, mut from) = (None, end);
                for i in (first..end).rev() {
                    while from > lo(i) {
                        from -= 1;
                        acc = combine(acc, get(from));
                    }
                    out[i] = acc;
                }
            }
            (Some(_), Some(_)) => {
                // Both ends only move forward: the frame is a queue, rows
                // joining at its back and leaving at its front.
                let mut frame = FrameQueue::new(&combine);
                let (mut from, mut to) = (first, first);
                for (i, slot) in out[first..end].iter_mut().enumerate() {
                    let (l, h) = (lo(first + i), hi(first + i).max(lo(first + i)));
                    if l >= to {
                        frame.clear();
                        (from, to) = (l, l);
                    }
                    for j in to..h {
                        frame.push(get(j));
                    }
                    to = to.max(h);
                    for _ in from..l {
                        frame.pop();
                    }
                    from = from.max(l);
                    *slot = frame.value();
                }
            }
        }
    }
    out
}

/// A queue of values whose fold `combine` gives in amortized constant
/// time per push and pop, for any associative `combine` (sums of floats,
/// minima of strings), with no inverse needed: the back is a stack with a
/// running fold, the front a stack of the folds of its values to its end,
/// refilled from the back when it runs out.
struct FrameQueue<'a, A, F: Fn(Option<A>, Option<A>) -> Option<A>> {
    combine: &'a F,
    back: Vec<Option<A>>,
    back_fold: Option<A>,
    /// `front[k]`: the fold of the front's values from k to its end (the
    /// queue's front is the stack's top).
    front: Vec<Option<A>>,
}

impl<'a, A: Copy, F: Fn(Option<A>, Option<A>) -> Option<A>> FrameQueue<'a, A, F> {
    fn new(combine: &'a F) -> Self {
        FrameQueue {
            combine,
            back: Vec::new(),
            back_fold: None,
            front: Vec::new(),
        }
    }

    fn push(&mut self, value: Option<A>) {
        self.back.push(value);
        self.back_fold = (self.combine)(self.back_fold, value);
    }

    fn pop(&mut self) {
        if self.front.is_empty() {
            // The back, newest last, becomes the front, oldest on top.
            let mut fold = None;
            for &v in self.back.iter().rev() {
                fold = (self.combine)(v, fold);
                self.front.push(fold);
            }
            self.back.clear();
            self.back_fold = None;
        }
        self.front.pop();
    }

    fn clear(&mut self) {
        self.back.clear();
        self.back_fold = None;
        self.front.clear();
    }

    fn value(&self) -> Option<A> {
        (self.combine)(self.front.last().copied().flatten(), self.back_fold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(
        values: &[Option<i64>],
        starts: &[usize],
        start: Option<isize>,
        end: Option<isize>,
        func: AggFunc,
    ) -> Vec<Option<i64>> {
        let a: ArrayRef = Arc::new(Int64Array::from(values.to_vec()));
        let frame = WindowFrame::rows(start, end);
        let mut bounds = Vec::new();
        for w in starts.windows(2) {
            let local =
                frame.partition_bounds(w[1] - w[0], |_| false, |_| None, RangeMeasure::default());
            bounds.extend(local.into_iter().map(|(lo, hi)| (w[0] + lo, w[0] + hi)));
        }
        let frames = Frames {
            frame,
            bounds: &bounds,
        };
        let out = fold(&a, starts, frames, func).unwrap();
        out.as_primitive::<Int64Type>().iter().collect()
    }

    #[test]
    fn each_frame_shape_folds_its_rows_within_the_partition() {
        // Two partitions: [1, 2, null, 4] and [10, 20].
        let v = [Some(1), Some(2), None, Some(4), Some(10), Some(20)];
        let starts = [0, 4, 6];
        let sum = AggFunc::Sum;
        // 1 PRECEDING AND 1 FOLLOWING
        assert_eq!(
            framed(&v, &starts, Some(-1), Some(1), sum),
            [Some(3), Some(3), Some(6), Some(4), Some(30), Some(30)]
        );
        // UNBOUNDED PRECEDING AND CURRENT ROW
        assert_eq!(
            framed(&v, &starts, None, Some(0), sum),
            [Some(1), Some(3), Some(3), Some(7), Some(10), Some(30)]
        );
        // CURRENT ROW AND UNBOUNDED FOLLOWING
        assert_eq!(
            framed(&v, &starts, Some(0), None, sum),
            [Some(7), Some(6), Some(4), Some(4), Some(30), Some(20)]
        );
        // 2 PRECEDING AND 1 PRECEDING: empty on each partition's first row.
        assert_eq!(
            framed(&v, &starts, Some(-2), Some(-1), AggFunc::Max),
            [None, Some(1), Some(2), Some(2), None, Some(10)]
        );
        // UNBOUNDED PRECEDING AND 1 PRECEDING
        assert_eq!(
            framed(&v, &starts, None, Some(-1), AggFunc::Min),
            [None, Some(1), Some(1), Some(1), None, Some(10)]
        );
        // 1 FOLLOWING AND UNBOUNDED FOLLOWING
        assert_eq!(
            framed(&v, &starts, Some(1), None, sum),
            [Some(6), Some(4), Some(4), None, Some(20), None]
        );
        // UNBOUNDED both ways: the whole partition.
        assert_eq!(
            framed(&v, &starts, None, None, sum),
            [Some(7), Some(7), Some(7), Some(7), Some(30), Some(30)]
        );
    }

    /// The frame queue folds as a fold of each frame's rows afresh does,
    /// over frames whose ends move forward by uneven steps, empty ones and
    /// jumps past the previous frame included.
    #[test]
    fn the_frame_queue_folds_each_frame_as_a_fresh_fold_does() {
        let n = 300;
        let values: Vec<Option<i64>> = (0..n)
            .map(|i| (i % 7 != 3).then_some((i * 7919 % 101) as i64 - 50))
            .collect();
        // Monotone bounds: ends that advance by 0-3 rows, some frames empty.
        let mut bounds = Vec::with_capacity(n);
        let (mut lo, mut hi) = (0usize, 0usize);
        for i in 0..n {
            hi = (hi + (i * 13 % 4)).min(n);
            lo = (lo + (i * 7 % 3)).min(n);
            if i % 50 == 49 {
                lo = (hi + 5).min(n);
                hi = lo;
            }
            bounds.push((lo, hi.max(lo)));
        }
        let starts = [0, n];
        let frames = Frames {
            frame: WindowFrame::rows(Some(-1), Some(1)),
            bounds: &bounds,
        };
        let a: ArrayRef = Arc::new(Int64Array::from(values.clone()));
        for func in [AggFunc::Sum, AggFunc::Min, AggFunc::Max] {
            let out = fold(&a, &starts, frames, func).unwrap();
            let out: Vec<Option<i64>> = out.as_primitive::<Int64Type>().iter().collect();
            for (i, &(l, h)) in bounds.iter().enumerate() {
                let frame = values[l..h].iter().flatten();
                let expected = match func {
                    AggFunc::Sum => frame.copied().reduce(|a, b| a + b),
                    AggFunc::Min => frame.copied().min(),
                    _ => frame.copied().max(),
                };
                assert_eq!(out[i], expected, "{func:?} at {i}, frame {l}..{h}");
            }
        }
    }
}
