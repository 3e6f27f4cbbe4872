//! Join keys of several integer columns packed into one `i64` by the value
//! ranges of the join's build side.
//!
//! By type alone, two `Int64` keys need 16 bytes ([`super::packed_keys`]):
//! a `u128` to build, hash, store and compare per row. Once a join's build
//! side is in memory its keys' ranges are known, and they are usually far
//! narrower than their type: TPC-H Q9 joins lineitem to partsupp on
//! `(partkey, suppkey)`, 1..200000 and 1..10000 at SF1, 18 and 14 bits.
//! Offset by each column's minimum and shifted into place, the pair is one
//! 32-bit value, and the join takes the single-integer path (an `i64` table
//! probed with no per-row indirection). A probe row whose value lies
//! outside the build's range for its column equals no build key, so it is
//! marked like a null key (matches nothing).
//!
//! ```text
//! build (partkey, suppkey) ∈ [1, 200000] × [1, 10000]
//! packed = (partkey - 1) << 14 | (suppkey - 1)          // 32 bits
//! probe (7, 10001): suppkey past the build's range      → no match
//! ```

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Int64Type};

use super::hash_table::is_int_key;
use crate::error::Result;

/// Where one key column sits in the packed key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Range {
    min: i64,
    max: i64,
    shift: u32,
}

/// The packing of a join's integer keys by the build side's value ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeLayout {
    columns: Vec<Range>,
}

/// Bits needed for the offsets `0..=max - min`.
fn bits_for(min: i64, max: i64) -> u32 {
    let width = (max as i128 - min as i128) as u128;
    128 - width.leading_zeros()
}

impl RangeLayout {
    /// The layout for a join whose build keys are `columns` (at least two,
    /// all integer-like), or `None` when their ranges need more than 64
    /// bits together or a column holds no value.
    pub fn for_build(columns: &[ArrayRef]) -> Result<Option<Self>> {
        if columns.len() < 2 || !columns.iter().all(|c| is_int_key(c.data_type())) {
            return Ok(None);
        }
        let mut ranges = Vec::with_capacity(columns.len());
        for c in columns {
            let values = arrow::compute::cast(c, &DataType::Int64)?;
            let values = values.as_primitive::<Int64Type>();
            match (arrow::compute::min(values), arrow::compute::max(values)) {
                (Some(min), Some(max)) => ranges.push((min, max)),
                _ => return Ok(None),
            }
        }
        // Last column in the low bits.
        let mut shift = 0u32;
        let mut columns = Vec::with_capacity(ranges.len());
        for &(min, max) in ranges.iter().rev() {
            columns.push(Range { min, max, shift });
            shift += bits_for(min, max);
            if shift > 64 {
                return Ok(None);
            }
        }
        columns.reverse();
        Ok(Some(RangeLayout { columns }))
    }

    /// Packs the keys of one batch. The returned null buffer marks rows
    /// that match nothing: a null key, or a value outside the build's range.
    pub fn encode(&self, columns: &[ArrayRef]) -> Result<(ScalarBuffer<i64>, Option<NullBuffer>)> {
        let n = columns.first().map_or(0, |c| c.len());
        let mut packed = vec![0i64; n];
        let mut nulls: Option<NullBuffer> = None;
        for (range, column) in self.columns.iter().zip(columns) {
            let values = arrow::compute::cast(column, &DataType::Int64)?;
            let values = values.as_primitive::<Int64Type>().values();
            let mut outside = false;
            for (k, &v) in packed.iter_mut().zip(values.iter()) {
                outside |= v < range.min || v > range.max;
                // Out-of-range rows get garbage here; they are marked below.
                *k |= (v.wrapping_sub(range.min) as u64).wrapping_shl(range.shift) as i64;
            }
            let mut invalid = column.logical_nulls();
            if outside {
                let inside = BooleanBuffer::collect_bool(n, |i| {
                    (range.min..=range.max).contains(&values[i])
                });
                invalid = NullBuffer::union(invalid.as_ref(), Some(&NullBuffer::new(inside)));
            }
            nulls = NullBuffer::union(nulls.as_ref(), invalid.as_ref());
        }
        Ok((packed.into(), nulls))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Int32Array, Int64Array};

    use super::*;

    fn i64s(v: &[Option<i64>]) -> ArrayRef {
        Arc::new(Int64Array::from(v.to_vec()))
    }

    #[test]
    fn packs_by_the_build_ranges_and_marks_probe_values_outside_them() {
        let build = [
            i64s(&[Some(1), Some(200_000), Some(7)]),
            Arc::new(Int32Array::from(vec![10_000, 1, 3])) as ArrayRef,
        ];
        let layout = RangeLayout::for_build(&build).unwrap().unwrap();
        // 18 bits for partkey above 14 bits for suppkey.
        assert_eq!(layout.columns[0].shift, 14);
        let (keys, nulls) = layout.encode(&build).unwrap();
        assert_eq!(&keys[..], &[9_999, 199_999 << 14, (6 << 14) | 2]);
        assert!(nulls.is_none());

        let probe = [
            i64s(&[Some(7), Some(7), Some(0), None, Some(i64::MIN)]),
            Arc::new(Int32Array::from(vec![3, 10_001, 3, 3, 3])) as ArrayRef,
        ];
        let (keys, nulls) = layout.encode(&probe).unwrap();
        let nulls = nulls.unwrap();
        assert_eq!(keys[0], (6 << 14) | 2);
        assert_eq!(
            (0..5).map(|i| nulls.is_valid(i)).collect::<Vec<_>>(),
            [true, false, false, false, false]
        );
    }

    #[test]
    fn wide_ranges_single_keys_and_empty_builds_are_not_packed() {
        let wide = [
            i64s(&[Some(i64::MIN), Some(i64::MAX)]),
            i64s(&[Some(0), Some(1)]),
        ];
        assert_eq!(RangeLayout::for_build(&wide).unwrap(), None);
        let one = [i64s(&[Some(1)])];
        assert_eq!(RangeLayout::for_build(&one).unwrap(), None);
        let empty = [i64s(&[None]), i64s(&[Some(1)])];
        assert_eq!(RangeLayout::for_build(&empty).unwrap(), None);
        // Exactly 64 bits still fit.
        let full = [
            i64s(&[Some(i64::MIN), Some(i64::MAX)]),
            i64s(&[Some(5), Some(5)]),
        ];
        let layout = RangeLayout::for_build(&full).unwrap().unwrap();
        let (keys, _) = layout.encode(&full).unwrap();
        assert_eq!(&keys[..], &[0, -1]);
    }
}
