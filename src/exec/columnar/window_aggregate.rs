//! Window aggregates: `agg(x) OVER (PARTITION BY ..)` over each whole
//! partition, and with an ORDER BY the running aggregate that SQL's default
//! frame gives (`RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`: every
//! row of the partition up to the current one and its peers, the rows that
//! tie with it on the order keys).
//!
//! Both run the group-by's accumulators once over all rows: with a group
//! per partition, or per peer group. Running values are then combined along
//! each partition: sums and counts add up, min and max keep the extreme,
//! and avg divides the running sum by the running count.
//!
//! ```text
//! x (ordered):          1    2    2    5
//! per peer group:       1    4         5
//! sum(x) OVER (ORDER BY x):  1    5    5   10
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, ArrowNativeTypeOp, AsArray, PrimitiveArray, UInt32Array};
use arrow::compute::{CastOptions, cast, cast_with_options, take};
use arrow::datatypes::{ArrowPrimitiveType, DataType, Float64Type, Int64Type, SchemaRef};
use arrow::downcast_primitive_array;
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, SortField};

use crate::error::{Result, SlothError};
use crate::expr::AggFunc;
use crate::kernels::accumulators;
use crate::kernels::cast_if_needed;
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::evaluate_array;

/// One window aggregate over rows already in window order.
pub(super) struct Spec<'a> {
    /// The window's input.
    pub all: &'a RecordBatch,
    /// The aggregate.
    pub func: AggFunc,
    /// Its arguments.
    pub args: &'a [PhysicalExpr],
    /// Partition `g` is `order[starts[g]..starts[g + 1]]`.
    pub starts: &'a [usize],
    /// Row indices of `all`, partition by partition, each in window order.
    pub order: &'a [u32],
    /// The output: the input's columns and the aggregate's.
    pub schema: &'a SchemaRef,
}

impl Spec<'_> {
    pub(super) fn out_type(&self) -> &DataType {
        self.schema
            .field(self.schema.fields().len() - 1)
            .data_type()
    }

    /// Each row with its whole partition's aggregate.
    pub fn whole_partitions(&self) -> Result<Vec<RecordBatch>> {
        let mut groups = vec![0u32; self.order.len()];
        for (g, w) in self.starts.windows(2).enumerate() {
            groups[w[0]..w[1]].fill(g as u32);
        }
        let per_partition = self.aggregate(self.func, &groups, self.starts.len() - 1)?;
        let per_partition = cast_if_needed(&per_partition, self.out_type())?;
        self.emit(take(&per_partition, &UInt32Array::from(groups), None)?)
    }

    /// Each row with the aggregate of its partition up to its last peer;
    /// `peers(a, b)`: rows `a` and `b` of `all` tie on the order keys.
    pub fn running(&self, peers: impl Fn(u32, u32) -> bool) -> Result<Vec<RecordBatch>> {
        // Peer groups in order; `restart` marks each partition's first.
        let mut groups = vec![0u32; self.order.len()];
        let mut restart: Vec<bool> = Vec::new();
        for w in self.starts.windows(2) {
            for (pos, group) in (w[0]..w[1]).zip(&mut groups[w[0]..w[1]]) {
                let first = pos == w[0];
                if first || !peers(self.order[pos - 1], self.order[pos]) {
                    restart.push(first);
                }
                *group = (restart.len() - 1) as u32;
            }
        }
        let n = restart.len();
        let running = match self.func {
            AggFunc::Sum | AggFunc::Count | AggFunc::CountStar | AggFunc::Min | AggFunc::Max => {
                let per_peer =
                    cast_if_needed(&self.aggregate(self.func, &groups, n)?, self.out_type())?;
                folded_exactly(self.func, &per_peer, |v| {
                    combine_along(v, &restart, self.func)
                })?
            }
            AggFunc::Mean => {
                let sums = self.aggregate_f64_sums(&groups, n)?;
                let sums = combine_along(&sums, &restart, AggFunc::Sum)?;
                let counts = self.aggregate(AggFunc::Count, &groups, n)?;
                let counts = combine_along(&counts, &restart, AggFunc::Sum)?;
                means(&sums, &counts)
            }
            other => {
                return Err(SlothError::unsupported(format!(
                    "running {}() (OVER with ORDER BY takes sum, count, min, max and avg)",
                    other.name()
                )));
            }
        };
        self.emit(take(&running, &UInt32Array::from(groups), None)?)
    }

    /// `func` of the rows at each position of `order`, grouped by `groups`.
    fn aggregate(&self, func: AggFunc, groups: &[u32], num_groups: usize) -> Result<ArrayRef> {
        let values = self
            .args
            .iter()
            .map(|a| evaluate_array(a, self.all))
            .collect::<Result<Vec<_>>>()?;
        self.aggregate_values(func, &values, groups, num_groups)
    }

    /// Sums of the argument as `Float64`, per group (for a running mean).
    fn aggregate_f64_sums(&self, groups: &[u32], num_groups: usize) -> Result<ArrayRef> {
        let value = evaluate_array(&self.args[0], self.all)?;
        let value = arrow::compute::cast(&value, &DataType::Float64)?;
        self.aggregate_values(AggFunc::Sum, &[value], groups, num_groups)
    }

    /// `func` of `values` (one array per argument) as [`Self::aggregate`].
    fn aggregate_values(
        &self,
        func: AggFunc,
        values: &[ArrayRef],
        groups: &[u32],
        num_groups: usize,
    ) -> Result<ArrayRef> {
        let types: Vec<DataType> = values.iter().map(|v| v.data_type().clone()).collect();
        let types = accumulators::input_types(func, &types);
        let values = accumulators::cast_inputs(values, &types)?;
        let out = crate::expr::agg_output_type(func, &types)?;
        let mut acc = accumulators::create(func, false, &types, &out)?;
        acc.update(&values, self.order, groups, num_groups)?;
        acc.finish(num_groups)
    }

    /// The rows in window order with `column` appended.
    pub(super) fn emit(&self, column: ArrayRef) -> Result<Vec<RecordBatch>> {
        super::window::with_column(self.all, self.order.to_vec(), column, self.schema)
    }
}

/// `fold` (of `func` over `values`), with an integer sum whose values
/// could add up past their type folded in 128 bits, where fewer than 2^64
/// values cannot overflow, and brought back to the type checked: a sum
/// past it is `sum()`'s overflow error, never a wrapped value. Anything
/// else, and sums whose largest value times their count stays in range
/// (nearly all), fold as they are.
pub(super) fn folded_exactly(
    func: AggFunc,
    values: &ArrayRef,
    fold: impl FnOnce(&ArrayRef) -> Result<ArrayRef>,
) -> Result<ArrayRef> {
    let data_type = values.data_type();
    let may_overflow = match data_type {
        DataType::Int64 | DataType::UInt64 => accumulators::integer_sum_may_overflow(values),
        t => t.is_integer(),
    };
    if func != AggFunc::Sum || !may_overflow {
        return fold(values);
    }
    let sums = fold(&cast(values, &DataType::Decimal128(38, 0))?)?;
    let checked = CastOptions {
        safe: false,
        ..CastOptions::default()
    };
    cast_with_options(&sums, data_type, &checked).map_err(|_| accumulators::sum_overflow(data_type))
}

/// Float64 `sums` over Int64 `counts`, position by position: null where
/// the count is 0 or the sum null.
pub(super) fn means(sums: &ArrayRef, counts: &ArrayRef) -> ArrayRef {
    let (sums, counts) = (
        sums.as_primitive::<Float64Type>(),
        counts.as_primitive::<Int64Type>(),
    );
    let means: PrimitiveArray<Float64Type> = (0..sums.len())
        .map(|i| {
            (sums.is_valid(i) && counts.value(i) > 0)
                .then(|| sums.value(i) / counts.value(i) as f64)
        })
        .collect();
    Arc::new(means)
}

/// Combines `per_group` values along each partition (a partition starts
/// where `restart` is set): min and max keep the extreme, the others add.
/// Nulls (groups with no value) leave the running value as it was.
fn combine_along(per_group: &ArrayRef, restart: &[bool], func: AggFunc) -> Result<ArrayRef> {
    downcast_primitive_array!(
        per_group => Ok(Arc::new(match func {
            AggFunc::Min => running(per_group, restart, |a, b| if b < a { b } else { a }),
            AggFunc::Max => running(per_group, restart, |a, b| if b > a { b } else { a }),
            _ => running(per_group, restart, |a, b| a.add_wrapping(b)),
        })),
        _ if matches!(func, AggFunc::Min | AggFunc::Max) => {
            running_extreme(per_group, restart, func == AggFunc::Max)
        }
        t => Err(SlothError::unsupported(format!(
            "running {}() over {t}",
            func.name()
        )))
    )
}

/// Running min / max of any orderable type (strings): values compared as
/// arrow rows (a `memcmp`), the best so far taken by index.
fn running_extreme(per_group: &ArrayRef, restart: &[bool], max: bool) -> Result<ArrayRef> {
    let converter = RowConverter::new(vec![SortField::new(per_group.data_type().clone())])?;
    let rows = converter.convert_columns(std::slice::from_ref(per_group))?;
    let mut best: Option<usize> = None;
    let picks: UInt32Array = (0..per_group.len())
        .map(|i| {
            if restart[i] {
                best = None;
            }
            if per_group.is_valid(i) {
                let better = best.is_none_or(|b| {
                    let order = rows.row(i).cmp(&rows.row(b));
                    if max { order.is_gt() } else { order.is_lt() }
                });
                if better {
                    best = Some(i);
                }
            }
            best.map(|b| b as u32)
        })
        .collect();
    Ok(take(per_group, &picks, None)?)
}

fn running<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    restart: &[bool],
    combine: impl Fn(T::Native, T::Native) -> T::Native,
) -> PrimitiveArray<T> {
    let mut acc: Option<T::Native> = None;
    let out: PrimitiveArray<T> = (0..a.len())
        .map(|i| {
            if restart[i] {
                acc = None;
            }
            if a.is_valid(i) {
                let v = a.value(i);
                acc = Some(acc.map_or(v, |x| combine(x, v)));
            }
            acc
        })
        .collect();
    out.with_data_type(a.data_type().clone())
}
