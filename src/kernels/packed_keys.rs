//! Keys packed into one `u128`: several short columns hashed and compared
//! as a single integer.
//!
//! Group-by and join keys are often a few small integers, dates or short
//! strings (TPC-H Q1's `l_returnflag, l_linestatus`, db-benchmark's `id1`
//! … `id3`). Arrow's row format handles any key but costs a variable-length
//! encoding, a byte hash and a `memcmp` per row; packed, the same key is
//! one 16-byte load, a multiply-fold hash and one comparison.
//!
//! The layout is fixed per operator from the key types: each column owns a
//! slot of bytes — an integer its width, a string one length byte and up to
//! `max_len` bytes — and, where null keys form a group of their own, the top
//! byte holds one null bit per column. Strings share what the integers
//! leave of the 16 bytes, so a value longer than its slot does not fit: the
//! caller then falls back to the row format ([`PackedLayout::encode`]
//! reports it) or, for a join probe, treats the row as matching nothing.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, GenericByteViewBuilder, GenericStringBuilder, Int64Array,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Int64Type, StringViewType};

use crate::error::Result;

/// Bytes of a packed key.
const KEY_BYTES: usize = 16;

/// What one key column occupies in a packed key (or a wide key row,
/// [`super::wide_keys`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot {
    /// An integer-like value, truncated to `bytes` (its type's width).
    Int { bytes: u32, signed: bool },
    /// A string: length in the slot's first byte, then up to `max_len` bytes.
    Str { max_len: usize },
}

impl Slot {
    /// The slot of a key of type `t` (integer-like or string), a string
    /// taking `str_bytes` bytes with its length.
    pub(crate) fn of(t: &DataType, str_bytes: usize) -> Slot {
        match t {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Slot::Str {
                max_len: str_bytes - 1,
            },
            _ => Slot::Int {
                bytes: int_width(t),
                signed: !is_unsigned(t),
            },
        }
    }

    /// Bytes the slot takes.
    pub(crate) fn size(self) -> usize {
        match self {
            Slot::Int { bytes, .. } => bytes as usize,
            Slot::Str { max_len } => max_len + 1,
        }
    }
}

/// How null keys are packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullKeys {
    /// Null keys form a group of their own (`GROUP BY`, `PARTITION BY`): a
    /// null bit per column is part of the key.
    Group,
    /// Null keys match nothing (join keys): rows with a null key are marked
    /// in a null buffer and their packed value is meaningless.
    NeverMatch,
}

/// The slots of a packed key, one per key column.
#[derive(Debug, Clone)]
pub struct PackedLayout {
    slots: Vec<(Slot, u32)>,
    types: Vec<DataType>,
    nulls: NullKeys,
}

/// Bit offset of the null bits when null keys form a group.
const NULL_BITS: u32 = 8 * (KEY_BYTES as u32 - 1);

impl PackedLayout {
    /// The layout for keys of `types`, or `None` when they cannot share 16
    /// bytes (too many or too wide columns, or types without a packed form).
    pub fn new(types: &[DataType], nulls: NullKeys) -> Option<Self> {
        use DataType::*;
        if types.is_empty() || (nulls == NullKeys::Group && types.len() > 8) {
            return None;
        }
        let mut budget = KEY_BYTES - usize::from(nulls == NullKeys::Group);
        let mut strings = 0;
        for t in types {
            match t {
                Boolean | Int8 | UInt8 => budget = budget.checked_sub(1)?,
                Int16 | UInt16 => budget = budget.checked_sub(2)?,
                Int32 | UInt32 | Date32 => budget = budget.checked_sub(4)?,
                Int64 | Date64 | Timestamp(..) => budget = budget.checked_sub(8)?,
                Utf8 | LargeUtf8 | Utf8View => strings += 1,
                _ => return None,
            }
        }
        // Strings split what is left evenly; each needs a length byte and
        // room for at least two bytes of text to be worth packing.
        let str_bytes = budget.checked_div(strings).unwrap_or(0);
        if strings > 0 && str_bytes < 3 {
            return None;
        }
        let mut offset = 0u32;
        let slots = types
            .iter()
            .map(|t| {
                let slot = Slot::of(t, str_bytes);
                let at = offset;
                offset += 8 * slot.size() as u32;
                (slot, at)
            })
            .collect();
        Some(PackedLayout {
            slots,
            types: types.to_vec(),
            nulls,
        })
    }

    /// Packs the keys of one batch into `out`, or returns `Ok(false)` when a
    /// string is longer than its slot and `overflow_is_null` is false.
    ///
    /// With `overflow_is_null`, such rows are instead marked in the returned
    /// null buffer (for a join probe: a key too long for the build side's
    /// layout cannot equal any of its keys). The null buffer marks rows with
    /// any null key when nulls never match.
    pub fn encode(
        &self,
        columns: &[ArrayRef],
        out: &mut Vec<u128>,
        overflow_is_null: bool,
    ) -> Result<Option<Option<NullBuffer>>> {
        let n = columns.first().map_or(0, |c| c.len());
        out.clear();
        out.resize(n, 0);
        let mut overflow: Option<NullBuffer> = None;
        for (c, ((slot, shift), col)) in self.slots.iter().zip(columns).enumerate() {
            let nulls = col.logical_nulls();
            match slot {
                Slot::Int { bytes, .. } => {
                    let values = arrow::compute::cast(col, &DataType::Int64)?;
                    let mask = low_bits(8 * bytes);
                    for (k, &v) in out
                        .iter_mut()
                        .zip(values.as_primitive::<Int64Type>().values())
                    {
                        *k |= ((v as u64 as u128) & mask) << shift;
                    }
                }
                Slot::Str { max_len } => {
                    if !pack_strings(col, *max_len, *shift, nulls.as_ref(), out) {
                        if !overflow_is_null {
                            return Ok(None);
                        }
                        // Pack again, leaving out the rows that do not fit.
                        let fit = NullBuffer::new(string_fits(col, *max_len));
                        let skip = NullBuffer::union(nulls.as_ref(), Some(&fit));
                        clear_slot(out, slot, *shift);
                        pack_strings(col, *max_len, *shift, skip.as_ref(), out);
                        overflow = Some(match overflow {
                            Some(o) => NullBuffer::union(Some(&o), Some(&fit)).expect("some"),
                            None => fit,
                        });
                    }
                }
            }
            if let Some(nulls) = &nulls {
                let slot_mask = !(slot_bits(slot) << shift);
                for i in nulls.iter().enumerate().filter(|(_, v)| !v).map(|(i, _)| i) {
                    out[i] &= slot_mask;
                    if self.nulls == NullKeys::Group {
                        out[i] |= 1u128 << (NULL_BITS + c as u32);
                    }
                }
            }
        }
        let mut nulls = match self.nulls {
            NullKeys::Group => None,
            NullKeys::NeverMatch => columns.iter().fold(None::<NullBuffer>, |acc, k| {
                NullBuffer::union(acc.as_ref(), k.logical_nulls().as_ref())
            }),
        };
        if let Some(o) = overflow {
            nulls = NullBuffer::union(nulls.as_ref(), Some(&o));
        }
        Ok(Some(nulls))
    }

    /// The key columns of packed `keys`, as the layout's types.
    pub fn decode(&self, keys: &[u128]) -> Result<Vec<ArrayRef>> {
        self.slots
            .iter()
            .zip(&self.types)
            .enumerate()
            .map(|(c, ((slot, shift), t))| {
                let null_bit = 1u128 << (NULL_BITS + c as u32);
                let is_null = |k: u128| self.nulls == NullKeys::Group && k & null_bit != 0;
                let nulls = keys.iter().any(|&k| is_null(k)).then(|| {
                    NullBuffer::from(keys.iter().map(|&k| !is_null(k)).collect::<Vec<_>>())
                });
                match slot {
                    Slot::Int { bytes, signed } => {
                        let width = 8 * bytes;
                        let values = keys.iter().map(|&k| {
                            let v = ((k >> shift) as u64) & low_bits(width) as u64;
                            if *signed && width < 64 {
                                ((v << (64 - width)) as i64) >> (64 - width)
                            } else {
                                v as i64
                            }
                        });
                        let a = Int64Array::new(values.collect(), nulls);
                        Ok(arrow::compute::cast(&a, t)?)
                    }
                    Slot::Str { .. } => {
                        let bytes = keys.iter().map(|&k| unpack_string(k >> shift));
                        decode_strings(bytes, nulls.as_ref(), t)
                    }
                }
            })
            .collect()
    }
}

/// True for the unsigned integer-like key types (whose packed bytes are
/// not sign-extended when read back).
pub(crate) fn is_unsigned(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Boolean | DataType::UInt8 | DataType::UInt16 | DataType::UInt32
    )
}

/// Bytes an integer-like key of type `t` takes packed (its type's width).
pub(crate) fn int_width(t: &DataType) -> u32 {
    use DataType::*;
    match t {
        Boolean | Int8 | UInt8 => 1,
        Int16 | UInt16 => 2,
        Int32 | UInt32 | Date32 => 4,
        _ => 8,
    }
}

#[inline(always)]
fn low_bits(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

fn slot_bits(slot: &Slot) -> u128 {
    match slot {
        Slot::Int { bytes, .. } => low_bits(8 * bytes),
        Slot::Str { max_len } => low_bits(8 * (*max_len as u32 + 1)),
    }
}

/// Length byte, then the bytes, little-endian.
#[inline(always)]
fn pack_bytes(b: &[u8]) -> u128 {
    let mut buf = [0u8; KEY_BYTES];
    buf[0] = b.len() as u8;
    buf[1..=b.len()].copy_from_slice(b);
    u128::from_le_bytes(buf)
}

fn unpack_string(slot: u128) -> ([u8; KEY_BYTES], usize) {
    let buf = slot.to_le_bytes();
    let len = buf[0] as usize;
    let mut out = [0u8; KEY_BYTES];
    out[..len].copy_from_slice(&buf[1..=len]);
    (out, len)
}

/// `MASKS[n]`: the low `n` bytes set.
const MASKS: [u128; KEY_BYTES + 1] = {
    let mut m = [0u128; KEY_BYTES + 1];
    let mut n = 1;
    while n <= KEY_BYTES {
        m[n] = (m[n - 1] << 8) | 0xFF;
        n += 1;
    }
    m
};

fn clear_slot(out: &mut [u128], slot: &Slot, shift: u32) {
    let keep = !(slot_bits(slot) << shift);
    out.iter_mut().for_each(|k| *k &= keep);
}

/// ORs the strings of `col` into `out` at `shift`, leaving the rows that
/// `skip` marks null zero; false when another string is longer than
/// `max_len` (what was packed is then incomplete).
fn pack_strings(
    col: &ArrayRef,
    max_len: usize,
    shift: u32,
    skip: Option<&NullBuffer>,
    out: &mut [u128],
) -> bool {
    let skip = skip.filter(|s| s.null_count() > 0);
    match col.data_type() {
        DataType::Utf8View => {
            let a = col.as_string_view();
            let views = a.views();
            let mut fits = true;
            if skip.is_none() && a.data_buffers().is_empty() {
                // Every string is inline (at most 12 bytes): no branch per
                // row (TPC-H Q1's flags, db-benchmark's `id1`/`id2`).
                for (&view, k) in views.iter().zip(out.iter_mut()) {
                    let len = (view as u32 as usize).min(12);
                    fits &= len <= max_len;
                    let data = (view >> 32) & MASKS[len];
                    *k |= ((data << 8) | len as u128) << shift;
                }
                return fits;
            }
            for (i, (&view, k)) in views.iter().zip(out.iter_mut()).enumerate() {
                if skip.is_some_and(|s| s.is_null(i)) {
                    continue;
                }
                let len = view as u32 as usize;
                fits &= len <= max_len;
                if len <= 12 {
                    // Inline view: the bytes sit right after the length.
                    let data = (view >> 32) & MASKS[len];
                    *k |= ((data << 8) | len as u128) << shift;
                } else if len <= max_len {
                    *k |= pack_bytes(a.value(i).as_bytes()) << shift;
                }
            }
            fits
        }
        DataType::Utf8 => pack_offset_strings(col.as_string::<i32>(), max_len, shift, skip, out),
        DataType::LargeUtf8 => {
            pack_offset_strings(col.as_string::<i64>(), max_len, shift, skip, out)
        }
        other => unreachable!("packed layout admitted a {other} key as a string"),
    }
}

fn pack_offset_strings<O: arrow::array::OffsetSizeTrait>(
    a: &arrow::array::GenericStringArray<O>,
    max_len: usize,
    shift: u32,
    skip: Option<&NullBuffer>,
    out: &mut [u128],
) -> bool {
    let offsets = a.value_offsets();
    let data = a.value_data();
    let mut fits = true;
    for (i, k) in out.iter_mut().enumerate() {
        if skip.is_some_and(|s| s.is_null(i)) {
            continue;
        }
        let (start, end) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
        if end - start > max_len {
            fits = false;
        } else {
            *k |= pack_bytes(&data[start..end]) << shift;
        }
    }
    fits
}

/// Per row of a string column: whether it is at most `max_len` bytes.
fn string_fits(col: &ArrayRef, max_len: usize) -> arrow::buffer::BooleanBuffer {
    fn offsets_fit<O: arrow::array::OffsetSizeTrait>(
        o: &[O],
        max_len: usize,
    ) -> arrow::buffer::BooleanBuffer {
        o.windows(2)
            .map(|w| (w[1] - w[0]).as_usize() <= max_len)
            .collect()
    }
    match col.data_type() {
        DataType::Utf8View => col
            .as_string_view()
            .views()
            .iter()
            .map(|&v| v as u32 as usize <= max_len)
            .collect(),
        DataType::Utf8 => offsets_fit(col.as_string::<i32>().value_offsets(), max_len),
        DataType::LargeUtf8 => offsets_fit(col.as_string::<i64>().value_offsets(), max_len),
        other => unreachable!("packed layout admitted a {other} key as a string"),
    }
}

fn decode_strings(
    values: impl Iterator<Item = ([u8; KEY_BYTES], usize)>,
    nulls: Option<&NullBuffer>,
    t: &DataType,
) -> Result<ArrayRef> {
    let valid = |i: usize| nulls.is_none_or(|n| n.is_valid(i));
    // The bytes were whole valid strings when packed.
    fn text(b: &[u8]) -> Result<&str> {
        std::str::from_utf8(b)
            .map_err(|e| crate::error::SlothError::Data(format!("packed key: {e}")))
    }
    macro_rules! build {
        ($builder:expr) => {{
            let mut b = $builder;
            for (i, (buf, len)) in values.enumerate() {
                if valid(i) {
                    b.append_value(text(&buf[..len])?);
                } else {
                    b.append_null();
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    Ok(match t {
        DataType::Utf8View => build!(GenericByteViewBuilder::<StringViewType>::new()),
        DataType::Utf8 => build!(GenericStringBuilder::<i32>::new()),
        DataType::LargeUtf8 => build!(GenericStringBuilder::<i64>::new()),
        other => unreachable!("packed layout admitted a {other} key as a string"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Date32Array, Int32Array, StringArray, StringViewArray};

    fn round_trip(columns: Vec<ArrayRef>, nulls: NullKeys) -> Vec<u128> {
        let types: Vec<DataType> = columns.iter().map(|c| c.data_type().clone()).collect();
        let layout = PackedLayout::new(&types, nulls).expect("packable");
        let mut keys = Vec::new();
        layout
            .encode(&columns, &mut keys, false)
            .unwrap()
            .expect("fits");
        if nulls == NullKeys::Group {
            let back = layout.decode(&keys).unwrap();
            for (a, b) in back.iter().zip(&columns) {
                assert_eq!(a.as_ref(), b.as_ref());
            }
        }
        keys
    }

    #[test]
    fn mixed_keys_round_trip_with_nulls() {
        let s: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("A"),
            None,
            Some(""),
            Some("R"),
            Some("A"),
        ]));
        let i: ArrayRef = Arc::new(Int32Array::from(vec![
            Some(-3),
            Some(7),
            None,
            Some(0),
            Some(-3),
        ]));
        let d: ArrayRef = Arc::new(Date32Array::from(vec![1, 2, 3, 4, 1]));
        let keys = round_trip(vec![s, i, d], NullKeys::Group);
        assert_eq!(keys[0], keys[4]);
        let distinct: std::collections::HashSet<u128> = keys.iter().copied().collect();
        assert_eq!(distinct.len(), 4);
    }

    #[test]
    fn null_and_empty_string_and_zero_are_distinct_groups() {
        let s: ArrayRef = Arc::new(StringArray::from(vec![Some(""), None]));
        let keys = round_trip(vec![s], NullKeys::Group);
        assert_ne!(keys[0], keys[1]);
        let i: ArrayRef = Arc::new(Int32Array::from(vec![Some(0), None]));
        let keys = round_trip(vec![i], NullKeys::Group);
        assert_ne!(keys[0], keys[1]);
    }

    #[test]
    fn strings_that_differ_only_in_trailing_zero_bytes_differ() {
        let s: ArrayRef = Arc::new(StringArray::from(vec!["ab", "ab\0", "a"]));
        let keys = round_trip(vec![s], NullKeys::Group);
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[0], keys[2]);
    }

    #[test]
    fn view_and_offset_strings_pack_alike() {
        let words = ["id001", "id0000012345", "x", "fourteen-char!"];
        let v: ArrayRef = Arc::new(StringViewArray::from(words.to_vec()));
        let o: ArrayRef = Arc::new(StringArray::from(words.to_vec()));
        assert_eq!(
            round_trip(vec![v], NullKeys::Group),
            round_trip(vec![o], NullKeys::Group)
        );
    }

    #[test]
    fn inline_views_without_buffers_pack_as_with_them() {
        // Short strings only: a view array without data buffers (the
        // branch-free path) and the same views beside an unused buffer.
        let words = ["id001", "", "abcdef", "x"];
        let bare = StringViewArray::from(words.to_vec());
        assert!(bare.data_buffers().is_empty());
        let with_buffer = StringViewArray::try_new(
            bare.views().clone(),
            vec![arrow::buffer::Buffer::from(b"unused".to_vec())],
            None,
        )
        .unwrap();
        let o: ArrayRef = Arc::new(StringArray::from(words.to_vec()));
        let expected = round_trip(vec![o.clone(), o], NullKeys::Group);
        for v in [bare, with_buffer] {
            let v: ArrayRef = Arc::new(v);
            assert_eq!(round_trip(vec![v.clone(), v], NullKeys::Group), expected);
        }
    }

    #[test]
    fn too_long_strings_fail_or_become_null() {
        let s: ArrayRef = Arc::new(StringArray::from(vec![
            "short",
            "a string longer than fits",
        ]));
        let layout = PackedLayout::new(&[DataType::Utf8], NullKeys::NeverMatch).unwrap();
        let mut keys = Vec::new();
        assert!(
            layout
                .encode(std::slice::from_ref(&s), &mut keys, false)
                .unwrap()
                .is_none()
        );
        let nulls = layout
            .encode(&[s], &mut keys, true)
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(nulls.is_valid(0) && nulls.is_null(1));
    }

    #[test]
    fn layouts_that_do_not_fit_are_refused() {
        use DataType::*;
        assert!(PackedLayout::new(&[Int64, Int64], NullKeys::NeverMatch).is_some());
        assert!(PackedLayout::new(&[Int64, Int64], NullKeys::Group).is_none());
        assert!(PackedLayout::new(&[Float64], NullKeys::Group).is_none());
        assert!(PackedLayout::new(&[Int64, Utf8, Utf8, Utf8], NullKeys::Group).is_none());
    }
}
