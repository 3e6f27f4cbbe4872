//! Group-by keys too wide for a `u128` packed into fixed-width byte rows of
//! up to 64 bytes.
//!
//! db-benchmark q10 groups by three short strings and three `Int64`s: 49
//! bytes of key, past [`super::packed_keys`]'s 16. Arrow's row format takes
//! them, at the cost of a variable-length encoding (66 bytes here), offsets,
//! a byte `memcmp` per probe and a slow decode of 10M groups at the end.
//! Here each row of keys is a fixed number of bytes, a multiple of 8, with
//! every column at a fixed place: an integer its type's width, little-endian;
//! a string a length byte and up to `max_len` bytes; then one byte of null
//! bits (a null key's slot is zero and its bit set). Equal keys have equal
//! bytes, so a key is hashed and compared as a fixed-width byte string, and
//! decoded by reading each column's slot back.
//!
//! The layout is chosen from the key types alone, so every thread's table
//! agrees: integers take their width; strings share what is left of 64
//! bytes. A longer string does not fit: [`WideLayout::encode`] says so and
//! the table moves to arrow's row format, as a packed one does.
//!
//! Only grouping uses this form (null keys form a group); join keys that do
//! not pack take byte rows.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, GenericStringBuilder, Int64Array};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Int64Type};

use super::hash_table::is_int_key;
use super::packed_keys::{Slot, int_width};
use crate::error::{Result, SlothError};

/// Widest key row, in bytes.
pub const MAX_WIDTH: usize = 64;

/// Where each key column sits in a fixed-width key row.
#[derive(Debug, Clone)]
pub struct WideLayout {
    /// Each column's slot and its byte offset.
    slots: Vec<(Slot, usize)>,
    types: Vec<DataType>,
    /// Bytes per row (a multiple of 8); the last holds the null bits.
    width: usize,
}

impl WideLayout {
    /// The layout for grouping keys of `types`, or `None` when they are not
    /// all integers and strings, are more than 8, or leave a string less
    /// than two bytes.
    pub fn new(types: &[DataType]) -> Option<Self> {
        use DataType::*;
        if types.is_empty() || types.len() > 8 {
            return None;
        }
        let mut int_bytes = 0usize;
        let mut strings = 0;
        for t in types {
            match t {
                Utf8 | LargeUtf8 | Utf8View => strings += 1,
                t if *t == Boolean || is_int_key(t) => int_bytes += int_width(t) as usize,
                _ => return None,
            }
        }
        // The null byte comes last; integers alone take what they need,
        // strings share the rest of the widest row.
        let width = if strings == 0 {
            (int_bytes + 1).next_multiple_of(8)
        } else {
            MAX_WIDTH
        };
        let str_bytes = (width.checked_sub(int_bytes + 1)?)
            .checked_div(strings)
            .unwrap_or(0);
        if width > MAX_WIDTH || (strings > 0 && str_bytes < 3) {
            return None;
        }
        let mut at = 0;
        let slots = types
            .iter()
            .map(|t| {
                let slot = Slot::of(t, str_bytes);
                at += slot.size();
                (slot, at - slot.size())
            })
            .collect();
        Some(WideLayout {
            slots,
            types: types.to_vec(),
            width,
        })
    }

    /// Bytes per key row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The key rows of one batch into `out` (`width` bytes per row), or
    /// `Ok(false)` when a string is longer than its slot.
    pub fn encode(&self, columns: &[ArrayRef], out: &mut Vec<u8>) -> Result<bool> {
        let n = columns.first().map_or(0, |c| c.len());
        let w = self.width;
        out.clear();
        out.resize(n * w, 0);
        for (c, (&(slot, at), col)) in self.slots.iter().zip(columns).enumerate() {
            match slot {
                Slot::Int { bytes, .. } => {
                    let values = arrow::compute::cast(col, &DataType::Int64)?;
                    let values = values.as_primitive::<Int64Type>().values();
                    match bytes {
                        1 => put_ints::<1>(out, w, at, values),
                        2 => put_ints::<2>(out, w, at, values),
                        4 => put_ints::<4>(out, w, at, values),
                        _ => put_ints::<8>(out, w, at, values),
                    }
                }
                Slot::Str { max_len } => {
                    if !put_strings(col, max_len, out, w, at) {
                        return Ok(false);
                    }
                }
            }
            if let Some(nulls) = col.logical_nulls().filter(|n| n.null_count() > 0) {
                for i in (0..n).filter(|&i| nulls.is_null(i)) {
                    let row = &mut out[i * w..(i + 1) * w];
                    row[at..at + slot.size()].fill(0);
                    row[w - 1] |= 1 << c;
                }
            }
        }
        Ok(true)
    }

    /// The key columns of `rows` (key rows back to back), as the layout's
    /// types.
    pub fn decode(&self, rows: &[u8]) -> Result<Vec<ArrayRef>> {
        let w = self.width;
        let n = rows.len() / w;
        self.slots
            .iter()
            .zip(&self.types)
            .enumerate()
            .map(|(c, (&(slot, at), t))| {
                let is_null = |i: usize| rows[i * w + w - 1] & (1 << c) != 0;
                let nulls = (0..n)
                    .any(is_null)
                    .then(|| NullBuffer::from_iter((0..n).map(|i| !is_null(i))));
                let row = |i: usize| &rows[i * w + at..i * w + at + slot.size()];
                match slot {
                    Slot::Int { bytes, signed } => {
                        let values: ScalarBuffer<i64> = (0..n)
                            .map(|i| {
                                let mut b = [0u8; 8];
                                b[..bytes as usize].copy_from_slice(row(i));
                                let v = u64::from_le_bytes(b);
                                let unused = 64 - 8 * bytes;
                                if signed && unused > 0 {
                                    ((v << unused) as i64) >> unused
                                } else {
                                    v as i64
                                }
                            })
                            .collect();
                        let a = Int64Array::new(values, nulls);
                        Ok(arrow::compute::cast(&a, t)?)
                    }
                    Slot::Str { .. } => {
                        let text = |i: usize| {
                            let s = row(i);
                            &s[1..=s[0] as usize]
                        };
                        decode_strings(n, text, nulls, t)
                    }
                }
            })
            .collect()
    }
}

/// Writes the low `B` bytes of each value at byte `at` of its row.
fn put_ints<const B: usize>(out: &mut [u8], w: usize, at: usize, values: &[i64]) {
    for (row, &v) in out.chunks_exact_mut(w).zip(values) {
        row[at..at + B].copy_from_slice(&v.to_le_bytes()[..B]);
    }
}

/// Writes each string of `col` (length byte, then bytes) at byte `at` of
/// its row; false when one is longer than `max_len`. Null strings' slots
/// are cleared afterwards by the caller.
fn put_strings(col: &ArrayRef, max_len: usize, out: &mut [u8], w: usize, at: usize) -> bool {
    let mut put = |i: usize, b: &[u8]| {
        let row = &mut out[i * w + at..];
        row[0] = b.len() as u8;
        row[1..=b.len()].copy_from_slice(b);
    };
    match col.data_type() {
        DataType::Utf8View => {
            let a = col.as_string_view();
            for (i, &view) in a.views().iter().enumerate() {
                let len = view as u32 as usize;
                if len > 12 && a.is_null(i) {
                    // A null's view may hold anything; its slot stays zero.
                } else if len > max_len {
                    return false;
                } else if len <= 12 {
                    // Inline: the bytes follow the length in the view.
                    put(i, &view.to_le_bytes()[4..4 + len]);
                } else {
                    put(i, a.value(i).as_bytes());
                }
            }
        }
        DataType::Utf8 => return put_offset_strings(col.as_string::<i32>(), max_len, put),
        DataType::LargeUtf8 => return put_offset_strings(col.as_string::<i64>(), max_len, put),
        other => unreachable!("wide layout admitted a {other} key as a string"),
    }
    true
}

/// [`put_strings`] for strings with offsets.
fn put_offset_strings<O: arrow::array::OffsetSizeTrait>(
    a: &arrow::array::GenericStringArray<O>,
    max_len: usize,
    mut put: impl FnMut(usize, &[u8]),
) -> bool {
    for (i, s) in a.iter().enumerate() {
        let s = s.unwrap_or_default().as_bytes();
        if s.len() > max_len {
            return false;
        }
        put(i, s);
    }
    true
}

/// A string column of `n` values whose bytes `text` gives (valid UTF-8:
/// they were whole strings when encoded).
fn decode_strings<'a>(
    n: usize,
    text: impl Fn(usize) -> &'a [u8],
    nulls: Option<NullBuffer>,
    t: &DataType,
) -> Result<ArrayRef> {
    let utf8 = |b: &'a [u8]| {
        std::str::from_utf8(b).map_err(|e| SlothError::Data(format!("wide key: {e}")))
    };
    let valid = |i: usize| nulls.as_ref().is_none_or(|m| m.is_valid(i));
    Ok(match t {
        DataType::Utf8View => {
            let mut b = arrow::array::StringViewBuilder::with_capacity(n);
            for i in 0..n {
                if valid(i) {
                    b.append_value(utf8(text(i))?);
                } else {
                    b.append_null();
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }
        DataType::Utf8 | DataType::LargeUtf8 => {
            let mut b = GenericStringBuilder::<i64>::new();
            for i in 0..n {
                if valid(i) {
                    b.append_value(utf8(text(i))?);
                } else {
                    b.append_null();
                }
            }
            let a: ArrayRef = Arc::new(b.finish());
            arrow::compute::cast(&a, t)?
        }
        other => unreachable!("wide layout admitted a {other} key as a string"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int8Array, Int32Array, StringArray, StringViewArray, UInt16Array};

    fn round_trip(columns: Vec<ArrayRef>) -> (Vec<u8>, usize) {
        let types: Vec<DataType> = columns.iter().map(|c| c.data_type().clone()).collect();
        let layout = WideLayout::new(&types).expect("fits");
        let mut rows = Vec::new();
        assert!(layout.encode(&columns, &mut rows).unwrap());
        let back = layout.decode(&rows).unwrap();
        for (a, b) in back.iter().zip(&columns) {
            assert_eq!(a.as_ref(), b.as_ref());
        }
        (rows, layout.width())
    }

    #[test]
    fn db_benchmark_q10_keys_round_trip_in_64_bytes() {
        let s = |v: Vec<Option<&str>>| Arc::new(StringViewArray::from(v)) as ArrayRef;
        let i = |v: Vec<Option<i64>>| Arc::new(Int64Array::from(v)) as ArrayRef;
        let columns = vec![
            s(vec![Some("id001"), Some("id002"), None, Some("id001")]),
            s(vec![Some("id100"), Some(""), Some("x"), Some("id100")]),
            s(vec![
                Some("id0000000001"),
                Some("a"),
                Some("b"),
                Some("id0000000001"),
            ]),
            i(vec![Some(1), Some(-1), None, Some(1)]),
            i(vec![
                Some(i64::MIN),
                Some(i64::MAX),
                Some(0),
                Some(i64::MIN),
            ]),
            i(vec![None, Some(7), Some(0), None]),
        ];
        let (rows, w) = round_trip(columns);
        assert_eq!(w, 64);
        let row = |r: usize| &rows[r * w..(r + 1) * w];
        assert_eq!(row(0), row(3));
        assert_ne!(row(0), row(1));
    }

    #[test]
    fn nulls_zero_and_empty_strings_are_distinct() {
        let s: ArrayRef = Arc::new(StringArray::from(vec![Some(""), None, Some("")]));
        let i: ArrayRef = Arc::new(Int32Array::from(vec![Some(0), Some(0), None]));
        let j: ArrayRef = Arc::new(Int64Array::from(vec![1, 1, 1]));
        let k: ArrayRef = Arc::new(Int64Array::from(vec![2, 2, 2]));
        let (rows, w) = round_trip(vec![s, i, j, k]);
        let distinct: std::collections::HashSet<&[u8]> = rows.chunks(w).collect();
        assert_eq!(distinct.len(), 3);
    }

    #[test]
    fn narrow_and_unsigned_integers_keep_their_values() {
        let a: ArrayRef = Arc::new(Int8Array::from(vec![-128, 127, -1]));
        let b: ArrayRef = Arc::new(UInt16Array::from(vec![0, 65535, 1]));
        let c: ArrayRef = Arc::new(Int64Array::from(vec![-5, 5, 0]));
        let d: ArrayRef = Arc::new(Int64Array::from(vec![9, -9, 0]));
        let (_, w) = round_trip(vec![a, b, c, d]);
        assert_eq!(w, 24);
    }

    #[test]
    fn a_string_longer_than_its_slot_does_not_fit() {
        let long = "x".repeat(55);
        let s: ArrayRef = Arc::new(StringViewArray::from(vec!["short", long.as_str()]));
        let t: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let layout = WideLayout::new(&[DataType::Utf8View, DataType::Int64]).unwrap();
        assert!(!layout.encode(&[s, t], &mut Vec::new()).unwrap());
    }

    #[test]
    fn layouts_that_cannot_fit_are_refused() {
        use DataType::*;
        assert!(WideLayout::new(&[Float64, Int64]).is_none());
        assert!(WideLayout::new(&vec![Int64; 8]).is_none());
        assert!(WideLayout::new(&vec![Int64; 7]).is_some());
        assert!(WideLayout::new(&vec![Utf8; 8]).is_some());
    }
}
