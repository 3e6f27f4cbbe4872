//! The raw results the kernels leave in device memory, and their assembly
//! into Arrow arrays on the host. Shared by the CUDA path and its CPU port.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, UInt64Array};
use arrow::datatypes::{DataType, SchemaRef};

use super::key_pack::KeyPacking;
use crate::error::Result;

/// The aggregates the GPU computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggKind {
    /// `count(x)` and `count(*)`.
    Count,
    /// `sum(x)`.
    Sum,
    /// `avg(x)`.
    Mean,
    /// `min(x)`.
    Min,
    /// `max(x)`.
    Max,
}

/// An aggregate's input column, as the kernels read it.
pub enum Values<'a> {
    /// Float64 values and validity bitmap.
    F64(&'a [f64], Option<&'a [u8]>),
    /// Int64 values and validity bitmap.
    I64(&'a [i64], Option<&'a [u8]>),
    /// No values: `count(*)` over the rows.
    Rows,
}

impl Values<'_> {
    /// The validity bitmap (none: all valid).
    pub fn validity(&self) -> Option<&[u8]> {
        match self {
            Values::F64(_, v) | Values::I64(_, v) => *v,
            Values::Rows => None,
        }
    }
}

/// Per-group values of one aggregate.
#[derive(Debug)]
pub enum RawValues {
    /// Float64 per group.
    F64(Vec<f64>),
    /// Int64 per group.
    I64(Vec<i64>),
    /// Counts only.
    None,
}

/// One aggregate's per-group state.
#[derive(Debug)]
pub struct RawAgg {
    /// Values (sums, minima, maxima).
    pub values: RawValues,
    /// Non-null inputs per group.
    /// `None` when not counted (see [`needs_counts`]): every group then
    /// has a value.
    pub counts: Option<Vec<u64>>,
}

/// A group-by's result as the kernels leave it, in group order.
#[derive(Debug)]
pub struct RawGroupBy {
    /// The key of each group (any value for the null key's group).
    pub keys: Vec<i64>,
    /// The group of the null key, if any row had one.
    pub null_group: Option<usize>,
    /// One per aggregate.
    pub aggs: Vec<RawAgg>,
}

impl RawGroupBy {
    /// Number of groups.
    pub fn groups(&self) -> usize {
        self.keys.len()
    }
}

/// Whether an aggregate's kernel must count its non-null inputs per group:
/// counts and means need them, and so does any aggregate of a column with
/// nulls (a group whose values are all null gets null). A sum, minimum or
/// maximum of a column without nulls skips that atomic per row.
pub fn needs_counts(kind: AggKind, values: &Values<'_>) -> bool {
    matches!(kind, AggKind::Count | AggKind::Mean)
        || matches!(values, Values::Rows)
        || values.validity().is_some()
}

/// A join's matches: (build row, probe row) pairs, and each probe row's
/// match count (0: unmatched, for left and anti joins).
pub type JoinPairs = (Vec<i64>, Vec<i64>, Vec<u32>);

/// Builds the output batch: the key column (or the key columns unpacked
/// from it), then one column per aggregate, each cast to the type the
/// plan's schema gives it.
pub fn assemble(
    raw: &RawGroupBy,
    kinds: &[AggKind],
    schema: &SchemaRef,
    packing: Option<&KeyPacking>,
) -> Result<RecordBatch> {
    let keys: Int64Array = (0..raw.groups())
        .map(|g| (raw.null_group != Some(g)).then_some(raw.keys[g]))
        .collect();
    let mut columns: Vec<ArrayRef> = match packing {
        Some(p) => p.unpack(&keys),
        None => vec![Arc::new(keys)],
    };
    for (agg, kind) in raw.aggs.iter().zip(kinds) {
        let present = |g: usize| agg.counts.as_ref().is_none_or(|c| c[g] > 0);
        let count = |g: usize| agg.counts.as_ref().expect("counted")[g] as f64;
        let col: ArrayRef = match (kind, &agg.values) {
            (AggKind::Count, _) => {
                Arc::new(UInt64Array::from(agg.counts.clone().expect("counted")))
            }
            (AggKind::Mean, RawValues::F64(v)) => Arc::new(Float64Array::from_iter(
                (0..raw.groups()).map(|g| present(g).then(|| v[g] / count(g))),
            )),
            (AggKind::Mean, RawValues::I64(v)) => Arc::new(Float64Array::from_iter(
                (0..raw.groups()).map(|g| present(g).then(|| v[g] as f64 / count(g))),
            )),
            (_, RawValues::F64(v)) => Arc::new(Float64Array::from_iter(
                (0..raw.groups()).map(|g| present(g).then(|| v[g])),
            )),
            (_, RawValues::I64(v)) => Arc::new(Int64Array::from_iter(
                (0..raw.groups()).map(|g| present(g).then(|| v[g])),
            )),
            (_, RawValues::None) => unreachable!("only count has no values"),
        };
        columns.push(col);
    }
    let columns = columns
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| crate::kernels::cast_if_needed(c, f.data_type()))
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

/// An Arrow validity bitmap starting at bit 0, as the kernels read it.
pub fn validity_bytes(a: &dyn Array) -> Option<Vec<u8>> {
    let nulls = a.logical_nulls()?;
    let bits = nulls.inner();
    Some(if bits.offset() == 0 {
        bits.values()[..bits.len().div_ceil(8)].to_vec()
    } else {
        let mut out = vec![0u8; bits.len().div_ceil(8)];
        for (i, b) in bits.iter().enumerate() {
            out[i >> 3] |= (b as u8) << (i & 7);
        }
        out
    })
}

/// True when the column type can be a GPU key or value (as Int64 or Float64).
pub fn lane_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            Some(DataType::Int64)
        }
        DataType::Float32 | DataType::Float64 => Some(DataType::Float64),
        _ => None,
    }
}
