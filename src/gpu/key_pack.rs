//! Several integer keys packed into the one Int64 key the kernels hash.
//!
//! The kernels' hash tables hold one 64-bit key per slot. A group-by or
//! join on several integer columns runs on them when the columns' value
//! ranges multiply to less than 2^63: each column becomes a code
//! `value - min` (plus one, with 0 for null, when nulls form groups of
//! their own), and the codes are combined as digits of a mixed-radix
//! number, the last column varying fastest.
//!
//! ```text
//! keys (a: 10..=12, b: 0..=1, nulls kept)   radices a: 4, b: 3
//! (10, 0)    -> (1, 1) -> 1 * 3 + 1 = 4
//! (12, null) -> (3, 0) -> 3 * 3 + 0 = 9
//! ```
//! Packing reads each column once, a column at a time, so its loops have
//! no per-row dispatch; unpacking runs per group, not per row.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int64Array};
use arrow::buffer::NullBuffer;

/// How nulls in a key column are packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nulls {
    /// Null is a value of its own (code 0): group-by, where the null key
    /// is a group.
    Group,
    /// A row with a null in any key column has a null packed key: joins,
    /// where null never equals anything.
    Propagate,
}

/// The radix and offset of each key column, to unpack group keys.
#[derive(Debug, Clone)]
pub struct KeyPacking {
    /// Per column: the smallest value, and the number of codes it takes.
    digits: Vec<(i64, u64)>,
    nulls: Nulls,
}

/// The smallest and largest non-null value of each column, over all the
/// arrays given for it (one per join side, for instance).
fn ranges(columns: &[&[&Int64Array]]) -> Vec<Option<(i64, i64)>> {
    columns
        .iter()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|a| Some((arrow::compute::min(*a)?, arrow::compute::max(*a)?)))
                .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
        })
        .collect()
}

impl KeyPacking {
    /// The packing of these key columns, or why they do not fit 64 bits.
    /// `columns[j]` lists the arrays of key column `j` (each packed later
    /// with [`KeyPacking::pack`]), all widened to Int64.
    pub fn new(columns: &[&[&Int64Array]], nulls: Nulls) -> Result<KeyPacking, String> {
        let extra = u128::from(nulls == Nulls::Group);
        let mut total: u128 = 1;
        let mut digits = Vec::with_capacity(columns.len());
        for range in ranges(columns) {
            let (min, codes) = match range {
                Some((lo, hi)) => (lo, (hi as i128 - lo as i128) as u128 + 1 + extra),
                None => (0, 1),
            };
            total = total.saturating_mul(codes);
            if total > i64::MAX as u128 {
                return Err("the keys' value ranges do not pack into 64 bits".into());
            }
            digits.push((min, codes as u64));
        }
        Ok(KeyPacking { digits, nulls })
    }

    /// One packed key per row of the key columns (all of one length).
    /// Under [`Nulls::Propagate`] the result is null where any key is.
    pub fn pack(&self, columns: &[&Int64Array]) -> Int64Array {
        let n = columns.first().map_or(0, |c| c.len());
        let mut packed = vec![0i64; n];
        let with_null_code = self.nulls == Nulls::Group;
        for (column, &(min, codes)) in columns.iter().zip(&self.digits) {
            // Valid codes and their partial sums stay below 2^63 (checked
            // in `new`); the values under a null under `Propagate` may be
            // anything, hence wrapping arithmetic (their result is masked).
            let radix = codes as i64;
            let values = column.values();
            match column.nulls().filter(|_| with_null_code) {
                None => {
                    let shift = i64::from(with_null_code) - min;
                    for (p, &v) in packed.iter_mut().zip(values.iter()) {
                        *p = p.wrapping_mul(radix).wrapping_add(v.wrapping_add(shift));
                    }
                }
                Some(valid) => {
                    for (i, (p, &v)) in packed.iter_mut().zip(values.iter()).enumerate() {
                        let code = if valid.is_valid(i) { v - min + 1 } else { 0 };
                        *p = *p * radix + code;
                    }
                }
            }
        }
        let nulls = match self.nulls {
            Nulls::Group => None,
            Nulls::Propagate => columns
                .iter()
                .fold(None, |acc, c| NullBuffer::union(acc.as_ref(), c.nulls())),
        };
        Int64Array::new(packed.into(), nulls)
    }

    /// The key columns of packed group keys (Int64, null where the packed
    /// code was 0 under [`Nulls::Group`]).
    pub fn unpack(&self, packed: &Int64Array) -> Vec<ArrayRef> {
        let mut rest: Vec<i64> = packed.values().to_vec();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.digits.len());
        for &(min, codes) in self.digits.iter().rev() {
            let radix = codes as i64;
            let column: Int64Array = rest
                .iter_mut()
                .map(|p| {
                    let code = *p % radix;
                    *p /= radix;
                    match self.nulls {
                        Nulls::Group if code == 0 => None,
                        Nulls::Group => Some(min + code - 1),
                        Nulls::Propagate => Some(min + code),
                    }
                })
                .collect();
            columns.push(Arc::new(column));
        }
        columns.reverse();
        columns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(values: &[Option<i64>]) -> Int64Array {
        Int64Array::from(values.to_vec())
    }

    #[test]
    fn packed_keys_unpack_to_the_same_columns_nulls_included() {
        let a = column(&[Some(10), Some(12), None, Some(-5), Some(10)]);
        let b = column(&[Some(0), None, Some(1), Some(i64::MAX / 64), Some(0)]);
        let p = KeyPacking::new(&[&[&a], &[&b]], Nulls::Group).unwrap();
        let packed = p.pack(&[&a, &b]);
        assert_eq!(packed.null_count(), 0);
        // Equal keys pack equal, different keys differently.
        assert_eq!(packed.value(0), packed.value(4));
        let mut distinct: Vec<i64> = packed.values().to_vec();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4);
        let back = p.unpack(&packed);
        assert_eq!(back[0].as_ref(), &a as &dyn Array);
        assert_eq!(back[1].as_ref(), &b as &dyn Array);
    }

    #[test]
    fn the_example_of_the_module_doc() {
        let a = column(&[Some(10), Some(12), Some(11)]);
        let b = column(&[Some(0), None, Some(1)]);
        let p = KeyPacking::new(&[&[&a], &[&b]], Nulls::Group).unwrap();
        assert_eq!(p.pack(&[&a, &b]).values()[..2], [4, 9]);
    }

    #[test]
    fn join_keys_pack_over_both_sides_and_nulls_propagate() {
        let (l1, l2) = (
            column(&[Some(1), Some(2), None]),
            column(&[Some(7), Some(9), Some(7)]),
        );
        let (r1, r2) = (column(&[Some(2), Some(5)]), column(&[Some(9), None]));
        let p = KeyPacking::new(&[&[&l1, &r1], &[&l2, &r2]], Nulls::Propagate).unwrap();
        let (left, right) = (p.pack(&[&l1, &l2]), p.pack(&[&r1, &r2]));
        assert_eq!(left.value(1), right.value(0));
        assert_ne!(left.value(0), right.value(0));
        assert!(left.is_null(2) && right.is_null(1));
        assert_eq!(left.null_count() + right.null_count(), 2);
    }

    #[test]
    fn ranges_too_wide_for_64_bits_are_refused() {
        let wide = column(&[Some(i64::MIN + 1), Some(i64::MAX)]);
        let small = column(&[Some(0), Some(1)]);
        let err = KeyPacking::new(&[&[&wide], &[&small]], Nulls::Group).unwrap_err();
        assert!(err.contains("do not pack into 64 bits"), "{err}");
        // One wide column alone fits only if its range does.
        assert!(KeyPacking::new(&[&[&wide]], Nulls::Group).is_err());
    }

    #[test]
    fn all_null_columns_take_one_code() {
        let a = column(&[None, None]);
        let b = column(&[Some(3), Some(4)]);
        let p = KeyPacking::new(&[&[&a], &[&b]], Nulls::Group).unwrap();
        let back = p.unpack(&p.pack(&[&a, &b]));
        assert_eq!(back[0].null_count(), 2);
        assert_eq!(back[1].as_ref(), &b as &dyn Array);
    }
}
