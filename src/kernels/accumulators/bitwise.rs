//! `bit_and`, `bit_or` and `bit_xor` per group.
//!
//! Values arrive as Int64 (signed inputs, sign-extended) or UInt64; the
//! operators act on the 64 bits alike, and a narrower result is the low
//! bits of the wide one, so one loop serves every integer width and the
//! result is cast back to the argument's type.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, UInt64Array};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Int64Type, UInt64Type};

use super::{Accumulator, grow, same};
use crate::error::Result;
use crate::expr::BitOp;

/// Per group, the bits so far (`None` until a non-null value arrives).
pub(super) struct Bitwise {
    op: BitOp,
    out: DataType,
    bits: Vec<Option<u64>>,
}

impl Bitwise {
    pub(super) fn new(op: BitOp, out: &DataType) -> Self {
        Bitwise {
            op,
            out: out.clone(),
            bits: vec![],
        }
    }

    /// The type values are widened to before they arrive.
    pub(super) fn input_type(t: &DataType) -> DataType {
        if t.is_unsigned_integer() {
            DataType::UInt64
        } else {
            DataType::Int64
        }
    }

    fn combine(&self, acc: &mut Option<u64>, v: u64) {
        *acc = Some(match (*acc, self.op) {
            (None, _) => v,
            (Some(a), BitOp::And) => a & v,
            (Some(a), BitOp::Or) => a | v,
            (Some(a), BitOp::Xor) => a ^ v,
        });
    }
}

impl Accumulator for Bitwise {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        grow(&mut self.bits, n, None);
        let a = &values[0];
        let bits: Vec<u64> = match a.data_type() {
            DataType::UInt64 => a.as_primitive::<UInt64Type>().values().to_vec(),
            _ => (a.as_primitive::<Int64Type>().values().iter())
                .map(|&v| v as u64)
                .collect(),
        };
        for (&r, &g) in rows.iter().zip(groups) {
            if a.is_valid(r as usize) {
                let mut acc = self.bits[g as usize];
                self.combine(&mut acc, bits[r as usize]);
                self.bits[g as usize] = acc;
            }
        }
        Ok(())
    }
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        grow(&mut self.bits, n, None);
        for (&s, &d) in src.iter().zip(dst) {
            if let Some(Some(v)) = other.bits.get(s as usize) {
                let mut acc = self.bits[d as usize];
                self.combine(&mut acc, *v);
                self.bits[d as usize] = acc;
            }
        }
        Ok(())
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        grow(&mut self.bits, n, None);
        let wide: ArrayRef = if self.out.is_unsigned_integer() {
            Arc::new(self.bits.iter().copied().collect::<UInt64Array>())
        } else {
            Arc::new(
                (self.bits.iter())
                    .map(|b| b.map(|v| v as i64))
                    .collect::<Int64Array>(),
            )
        };
        Ok(cast(&wide, &self.out)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int16Array;

    #[test]
    fn narrow_signed_values_keep_their_bits_and_type() {
        let values: ArrayRef = Arc::new(Int16Array::from(vec![Some(-4), Some(6), None, Some(3)]));
        let wide = cast(&values, &Bitwise::input_type(values.data_type())).unwrap();
        let groups = [0, 0, 0, 1];
        for (op, want) in [
            (BitOp::And, -4i16 & 6),
            (BitOp::Or, -4 | 6),
            (BitOp::Xor, -4 ^ 6),
        ] {
            let mut acc = Bitwise::new(op, &DataType::Int16);
            acc.update(std::slice::from_ref(&wide), &[0, 1, 2, 3], &groups, 3)
                .unwrap();
            let out = acc.finish(3).unwrap();
            let out = out.as_primitive::<arrow::datatypes::Int16Type>();
            assert_eq!(out.value(0), want, "{op:?}");
            assert_eq!(out.value(1), 3, "{op:?}: one value is itself");
            assert!(out.is_null(2), "{op:?}: a group without values");
        }
    }
}
