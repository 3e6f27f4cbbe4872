//! Key encoding and the hash table shared by hash aggregation and hash join.
//!
//! Keys take one of four forms, chosen per operator from the key types:
//! - a single integer-like key (ints, dates) is hashed and compared as `i64`
//!   with no per-row indirection;
//! - a few small integers and short strings are packed into one `u128`
//!   ([`PackedLayout`]) and hashed and compared as such;
//! - grouping keys of integers and strings too wide for that take
//!   fixed-width rows of up to 64 bytes ([`WideLayout`]);
//! - anything else (floats, decimals, long strings, many keys) is encoded
//!   by arrow's [`RowConverter`] into comparable byte rows.
//!
//! A packed or wide table whose batch holds a string too long for its slot
//! moves to byte rows once, keeping its group ids
//! ([`GroupTable::insert_batch`]).
//!
//! [`GroupTable`] maps keys to dense group ids `0..n`. Integer and packed
//! keys sit in a flat open-addressing table next to their id
//! ([`FlatTable`]: one cache miss per probe, prefetched a few rows ahead in
//! the batch loops); wide keys live in group order beside a table of ids
//! and hash tags ([`WideTable`]); byte-row keys in one flat buffer beside a
//! hashbrown table of ids. A new group costs no allocation beyond amortized
//! vector growth.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Int64Type};
use arrow::row::{RowConverter, Rows, SortField};
use hashbrown::HashTable;

use super::flat_table::{FlatKey, FlatTable, WideTable, prefetch_ahead};
use super::packed_keys::{NullKeys, PackedLayout};
use super::range_keys::RangeLayout;
use super::wide_keys::WideLayout;
use crate::error::Result;

/// Multiply-fold hash for 64-bit keys: good high and low bits, two instructions.
#[inline(always)]
pub fn hash_i64(v: i64) -> u64 {
    let x = (v as u64 as u128)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15_u128 ^ 0x5851_F42D_4C95_7F2D_0000_0000_0000_0000);
    (x as u64) ^ ((x >> 64) as u64)
}

/// The partition (of `partitions`) a key hash falls in, by its high bits:
/// the tables index with the low ones.
#[inline]
pub fn partition_of(hash: u64, partitions: usize) -> usize {
    ((hash >> 40) as usize) % partitions
}

/// Hash of a packed key: both halves folded through [`hash_i64`].
#[inline(always)]
pub fn hash_u128(v: u128) -> u64 {
    hash_i64((v as u64 ^ hash_i64((v >> 64) as i64).rotate_left(29)) as i64)
}

const NULL_HASH: u64 = 0x2545_F491_4F6C_DD1D;

/// Hash of a byte string (byte-row keys).
#[inline(always)]
pub(crate) fn hash_bytes(b: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x51_07_4a).hash_one(b)
}

/// True if a single key of this type takes the `i64` fast path.
pub fn is_int_key(t: &DataType) -> bool {
    use DataType::*;
    matches!(
        t,
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | Date32 | Date64 | Timestamp(..)
    )
}

/// How keys of an operator are encoded.
pub enum KeyEncoder {
    /// A single integer-like key, as `i64`.
    Int,
    /// Packed into a `u128` while every value fits, byte rows otherwise.
    Packed(PackedLayout, RowConverter),
    /// Grouping keys too wide for a `u128`, in fixed-width byte rows of up
    /// to 64 bytes while every value fits, arrow's byte rows otherwise.
    Wide(WideLayout, RowConverter),
    /// Several integer join keys packed into one `i64` by the build side's
    /// value ranges ([`RangeLayout`]); encoded as [`KeyBatch::Int`].
    Ranges(RangeLayout),
    /// Anything else, as byte rows.
    Rows(RowConverter),
}

/// The keys of one batch, encoded.
pub enum KeyBatch {
    /// `i64` values with validity.
    Int(ScalarBuffer<i64>, Option<NullBuffer>),
    /// Packed keys; `nulls` marks rows that match nothing (join keys only).
    Packed(Vec<u128>, Option<NullBuffer>),
    /// Fixed-width key rows of `width` bytes, back to back (nulls inside).
    Wide { rows: Vec<u8>, width: usize },
    /// Byte rows; `nulls` marks rows where any key is null.
    Rows(Rows, Option<NullBuffer>),
}

impl KeyEncoder {
    /// Picks the encoding for keys of these types; `nulls` says whether null
    /// keys group together or match nothing.
    pub fn new(types: &[DataType], nulls: NullKeys) -> Result<Self> {
        if types.len() == 1 && is_int_key(&types[0]) {
            return Ok(KeyEncoder::Int);
        }
        let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
        let rows = RowConverter::new(fields)?;
        if let Some(layout) = PackedLayout::new(types, nulls) {
            return Ok(KeyEncoder::Packed(layout, rows));
        }
        Ok(
            match WideLayout::new(types).filter(|_| nulls == NullKeys::Group) {
                Some(layout) => KeyEncoder::Wide(layout, rows),
                None => KeyEncoder::Rows(rows),
            },
        )
    }

    /// The encoder for a join whose build side's keys are `build` (null
    /// keys match nothing): several integer keys whose ranges fit in 64
    /// bits together take the single-integer path ([`RangeLayout`]).
    pub fn for_join_build(build: &[ArrayRef]) -> Result<Self> {
        if let Some(layout) = RangeLayout::for_build(build)? {
            return Ok(KeyEncoder::Ranges(layout));
        }
        let types: Vec<DataType> = build.iter().map(|k| k.data_type().clone()).collect();
        Self::new(&types, NullKeys::NeverMatch)
    }

    /// Encodes one batch of key columns and computes their hashes, packed
    /// when every key fits.
    pub fn encode(&self, keys: &[ArrayRef], hashes: &mut Vec<u64>) -> Result<KeyBatch> {
        hashes.clear();
        let keys = &normalized_keys(keys);
        match self {
            KeyEncoder::Int => {
                let a = arrow::compute::cast(&keys[0], &DataType::Int64)?;
                let nulls = a.logical_nulls();
                let v = a.as_primitive::<Int64Type>().values().clone();
                Ok(int_keys(v, nulls, hashes))
            }
            KeyEncoder::Ranges(layout) => {
                let (v, nulls) = layout.encode(keys)?;
                Ok(int_keys(v, nulls, hashes))
            }
            KeyEncoder::Packed(layout, conv) => {
                let mut packed = Vec::new();
                match layout.encode(keys, &mut packed, false)? {
                    Some(nulls) => {
                        hashes.extend(packed.iter().map(|&k| hash_u128(k)));
                        Ok(KeyBatch::Packed(packed, nulls))
                    }
                    None => encode_rows(conv, keys, hashes),
                }
            }
            KeyEncoder::Wide(layout, conv) => {
                let mut rows = Vec::new();
                if !layout.encode(keys, &mut rows)? {
                    return encode_rows(conv, keys, hashes);
                }
                let width = layout.width();
                hashes.extend(rows.chunks_exact(width).map(hash_bytes));
                Ok(KeyBatch::Wide { rows, width })
            }
            KeyEncoder::Rows(conv) => encode_rows(conv, keys, hashes),
        }
    }

    /// Encodes keys to insert into `table`: byte rows for a table that has
    /// moved to them, packed when every key fits otherwise.
    pub fn encode_to_insert(
        &self,
        table: &GroupTable,
        keys: &[ArrayRef],
        hashes: &mut Vec<u64>,
    ) -> Result<KeyBatch> {
        match (self, table) {
            (KeyEncoder::Packed(_, conv) | KeyEncoder::Wide(_, conv), GroupTable::Rows { .. }) => {
                hashes.clear();
                encode_rows(conv, &normalized_keys(keys), hashes)
            }
            _ => self.encode(keys, hashes),
        }
    }

    /// Encodes keys to look up in `table`, in its form: for a packed table,
    /// a key too long to pack becomes null, as it equals no key there.
    pub fn encode_to_probe(
        &self,
        table: &GroupTable,
        keys: &[ArrayRef],
        hashes: &mut Vec<u64>,
    ) -> Result<KeyBatch> {
        match (self, table) {
            (KeyEncoder::Packed(layout, _), GroupTable::Packed { .. }) => {
                hashes.clear();
                let mut packed = Vec::new();
                let nulls = layout
                    .encode(&normalized_keys(keys), &mut packed, true)?
                    .expect("overflowing keys become null");
                hashes.extend(packed.iter().map(|&k| hash_u128(k)));
                Ok(KeyBatch::Packed(packed, nulls))
            }
            _ => self.encode_to_insert(table, keys, hashes),
        }
    }

    fn converter(&self) -> &RowConverter {
        match self {
            KeyEncoder::Packed(_, conv) | KeyEncoder::Wide(_, conv) | KeyEncoder::Rows(conv) => {
                conv
            }
            KeyEncoder::Int | KeyEncoder::Ranges(_) => {
                unreachable!("integer keys have no row converter")
            }
        }
    }
}

/// Keys with `-0.0` made `0.0`: float keys group and join by IEEE
/// equality (`kernels/float_zero.rs`).
pub fn normalized_keys(keys: &[ArrayRef]) -> Vec<ArrayRef> {
    keys.iter()
        .map(crate::kernels::float_zero::canonical_floats)
        .collect()
}

/// Integer keys with their hashes (null keys get one fixed hash).
fn int_keys(v: ScalarBuffer<i64>, nulls: Option<NullBuffer>, hashes: &mut Vec<u64>) -> KeyBatch {
    hashes.extend(v.iter().map(|&x| hash_i64(x)));
    if let Some(n) = &nulls {
        for (h, valid) in hashes.iter_mut().zip(n.iter()) {
            if !valid {
                *h = NULL_HASH;
            }
        }
    }
    KeyBatch::Int(v, nulls)
}

/// The group of `k` in `table`, added (with its key appended to `keys`,
/// in group order) if new.
#[inline(always)]
fn insert_key<K: FlatKey>(table: &mut FlatTable<K>, keys: &mut Vec<K>, k: K, hash: u64) -> u32 {
    let next = keys.len() as u32;
    let g = table.find_or_insert(k, hash, next);
    if g == next {
        keys.push(k);
    }
    g
}

/// Appends the group of each of the `n` rows `row(0..n)` (`key` is `None`
/// for a null key, whose group `null_group` gives), prefetching the slot of
/// the row [`super::flat_table::PREFETCH_DISTANCE`] ahead. Runs of equal keys (sorted or
/// clustered input) reuse the previous row's group without probing.
#[inline(always)]
fn insert_flat<K: FlatKey + PartialEq>(
    table: &mut FlatTable<K>,
    keys: &mut Vec<K>,
    (n, row): (usize, impl Fn(usize) -> usize),
    key: impl Fn(usize) -> Option<K>,
    hashes: &[u64],
    mut null_group: impl FnMut(&mut Vec<K>) -> u32,
    groups: &mut Vec<u32>,
) {
    groups.reserve(n);
    let mut prev: Option<(K, u32)> = None;
    for j in 0..n {
        prefetch_ahead(j, n, |k| hashes[row(k)], |h| table.prefetch(h));
        let i = row(j);
        let g = match key(i) {
            None => null_group(keys),
            Some(k) => match prev {
                Some((pk, pg)) if pk == k => pg,
                _ => {
                    let g = insert_key(table, keys, k, hashes[i]);
                    prev = Some((k, g));
                    g
                }
            },
        };
        groups.push(g);
    }
}

fn encode_rows(conv: &RowConverter, keys: &[ArrayRef], hashes: &mut Vec<u64>) -> Result<KeyBatch> {
    let rows = conv.convert_columns(keys)?;
    hashes.extend(rows.iter().map(|r| hash_bytes(r.as_ref())));
    let nulls = keys.iter().fold(None::<NullBuffer>, |acc, k| {
        NullBuffer::union(acc.as_ref(), k.logical_nulls().as_ref())
    });
    Ok(KeyBatch::Rows(rows, nulls))
}

impl KeyBatch {
    /// True for byte-row keys.
    pub fn is_rows(&self) -> bool {
        matches!(self, KeyBatch::Rows(..))
    }

    /// True if any key of row `i` is null.
    #[inline]
    pub fn is_null(&self, i: usize) -> bool {
        match self {
            KeyBatch::Int(_, n) | KeyBatch::Packed(_, n) | KeyBatch::Rows(_, n) => {
                n.as_ref().is_some_and(|n| n.is_null(i))
            }
            KeyBatch::Wide { .. } => false,
        }
    }
}

/// Maps keys to dense group ids.
pub enum GroupTable {
    /// Single integer keys, stored inline with their group id so a probe
    /// touches one cache line, and a rehash recomputes hashes from the keys.
    Int {
        table: FlatTable<i64>,
        /// Key of each group, in group order (0 for the null group).
        keys: Vec<i64>,
        null_group: Option<u32>,
    },
    /// Packed keys, stored inline with their group id.
    Packed {
        table: FlatTable<u128>,
        /// Key of each group, in group order.
        keys: Vec<u128>,
    },
    /// Fixed-width key rows, kept in group order beside the table.
    Wide(WideTable),
    /// Byte-row keys: the table holds group ids; keys live in one buffer.
    Rows {
        table: HashTable<u32>,
        hashes: Vec<u64>,
        data: Vec<u8>,
        offsets: Vec<usize>,
    },
}

impl GroupTable {
    /// An empty table for keys encoded by `encoder` (packed ones, where the
    /// encoder packs).
    pub fn new(encoder: &KeyEncoder) -> Self {
        match encoder {
            KeyEncoder::Int | KeyEncoder::Ranges(_) => GroupTable::Int {
                table: FlatTable::default(),
                keys: Vec::new(),
                null_group: None,
            },
            KeyEncoder::Packed(..) => GroupTable::Packed {
                table: FlatTable::default(),
                keys: Vec::new(),
            },
            KeyEncoder::Wide(layout, _) => GroupTable::Wide(WideTable::new(layout.width())),
            KeyEncoder::Rows(_) => Self::new_rows(),
        }
    }

    fn new_rows() -> Self {
        GroupTable::Rows {
            table: HashTable::new(),
            hashes: Vec::new(),
            data: Vec::new(),
            offsets: vec![0],
        }
    }

    /// An empty table for keys in the form of `keys`.
    pub fn for_batch(encoder: &KeyEncoder, keys: &KeyBatch) -> Self {
        match keys {
            KeyBatch::Rows(..) => Self::new_rows(),
            _ => Self::new(encoder),
        }
    }

    /// An empty table in the same form as `other`.
    pub fn new_like(encoder: &KeyEncoder, other: &GroupTable) -> Self {
        match other {
            GroupTable::Rows { .. } => Self::new_rows(),
            _ => Self::new(encoder),
        }
    }

    /// True if the table holds byte-row keys.
    pub fn is_rows(&self) -> bool {
        matches!(self, GroupTable::Rows { .. })
    }

    /// Moves a packed or wide table to byte rows, keeping every group's id;
    /// other tables are left as they are.
    pub fn convert_to_rows(&mut self, encoder: &KeyEncoder) -> Result<()> {
        let columns = match (&*self, encoder) {
            (GroupTable::Packed { keys, .. }, KeyEncoder::Packed(layout, _)) => {
                layout.decode(keys)?
            }
            (GroupTable::Wide(t), KeyEncoder::Wide(layout, _)) => layout.decode(t.keys())?,
            (GroupTable::Int { .. } | GroupTable::Rows { .. }, _) => return Ok(()),
            _ => unreachable!("table built by another encoder"),
        };
        let conv = encoder.converter();
        let mut hashes = Vec::with_capacity(self.len());
        let KeyBatch::Rows(rows, _) = encode_rows(conv, &columns, &mut hashes)? else {
            unreachable!("encode_rows returns rows")
        };
        let mut rows_table = Self::new_rows();
        for (i, &h) in hashes.iter().enumerate() {
            rows_table.insert_bytes(rows.row(i).as_ref(), h);
        }
        *self = rows_table;
        Ok(())
    }

    /// Makes room for `groups` more groups (their keys sized like the
    /// average key so far), so a table expected to grow large does not
    /// copy itself at every doubling.
    pub fn reserve(&mut self, groups: usize) {
        match self {
            GroupTable::Int { table, keys, .. } => {
                table.reserve(groups);
                keys.reserve(groups);
            }
            GroupTable::Packed { table, keys } => {
                table.reserve(groups);
                keys.reserve(groups);
            }
            GroupTable::Wide(table) => table.reserve(groups),
            GroupTable::Rows {
                table,
                hashes,
                data,
                offsets,
            } => {
                let key_bytes = data.len() / hashes.len().max(1);
                table.reserve(groups, |&g| hashes[g as usize]);
                data.reserve(groups * key_bytes);
                offsets.reserve(groups);
                hashes.reserve(groups);
            }
        }
    }

    /// Bytes the table and its keys take (capacities, not lengths: what
    /// the allocator handed out).
    pub fn memory_size(&self) -> usize {
        match self {
            GroupTable::Int { table, keys, .. } => table.memory_size() + keys.capacity() * 8,
            GroupTable::Packed { table, keys } => table.memory_size() + keys.capacity() * 16,
            GroupTable::Wide(table) => table.memory_size(),
            GroupTable::Rows {
                table,
                hashes,
                data,
                offsets,
            } => {
                table.capacity() * (4 + 1)
                    + hashes.capacity() * 8
                    + data.capacity()
                    + offsets.capacity() * 8
            }
        }
    }

    /// Number of groups so far.
    pub fn len(&self) -> usize {
        match self {
            GroupTable::Int { keys, .. } => keys.len(),
            GroupTable::Packed { keys, .. } => keys.len(),
            GroupTable::Wide(table) => table.len(),
            GroupTable::Rows { hashes, .. } => hashes.len(),
        }
    }

    /// True if no group exists yet.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The group of row `i` of `keys`, created if new. Null keys form a group
    /// of their own (SQL `GROUP BY` semantics).
    #[inline]
    pub fn find_or_insert(&mut self, keys: &KeyBatch, hash: u64, i: usize) -> u32 {
        match keys {
            KeyBatch::Int(a, nulls) => {
                if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                    self.null_group()
                } else {
                    self.insert_int(a[i], hash)
                }
            }
            KeyBatch::Packed(keys, _) => self.insert_packed(keys[i], hash),
            KeyBatch::Wide { rows, width } => {
                let GroupTable::Wide(table) = self else {
                    unreachable!("key batch encoded by another encoder")
                };
                table.find_or_insert(&rows[i * width..(i + 1) * width], hash)
            }
            KeyBatch::Rows(rows, _) => self.insert_bytes(rows.row(i).as_ref(), hash),
        }
    }

    /// Appends the group of every row of `keys` to `groups` (creating new
    /// groups), one match on the encoding per batch rather than per row.
    ///
    /// A packed table given byte rows (a key too long to pack) moves to byte
    /// rows first; `keys` must otherwise be in the table's form
    /// ([`KeyEncoder::encode_to_insert`]).
    pub fn insert_batch(
        &mut self,
        encoder: &KeyEncoder,
        keys: &KeyBatch,
        hashes: &[u64],
        groups: &mut Vec<u32>,
    ) -> Result<()> {
        self.insert_rows(encoder, keys, hashes, None, groups)
    }

    /// As [`GroupTable::insert_batch`], for the rows `rows` of `keys` only
    /// (one group appended per row, in that order); `None` is every row.
    pub fn insert_rows(
        &mut self,
        encoder: &KeyEncoder,
        keys: &KeyBatch,
        hashes: &[u64],
        rows: Option<&[u32]>,
        groups: &mut Vec<u32>,
    ) -> Result<()> {
        if matches!(keys, KeyBatch::Rows(..)) {
            self.convert_to_rows(encoder)?;
        }
        match rows {
            None => self.insert_selected(keys, hashes, hashes.len(), |j| j, groups),
            Some(r) => self.insert_selected(keys, hashes, r.len(), |j| r[j] as usize, groups),
        }
        Ok(())
    }

    /// Appends the group of rows `row(0..n)` of `keys`, in the table's form.
    #[inline]
    fn insert_selected(
        &mut self,
        keys: &KeyBatch,
        hashes: &[u64],
        n: usize,
        row: impl Fn(usize) -> usize,
        groups: &mut Vec<u32>,
    ) {
        match (self, keys) {
            (
                GroupTable::Int {
                    table,
                    keys,
                    null_group,
                },
                KeyBatch::Int(values, nulls),
            ) => {
                let key =
                    |i: usize| (!nulls.as_ref().is_some_and(|n| n.is_null(i))).then(|| values[i]);
                let null = |keys: &mut Vec<i64>| {
                    *null_group.get_or_insert_with(|| {
                        keys.push(0);
                        keys.len() as u32 - 1
                    })
                };
                insert_flat(table, keys, (n, row), key, hashes, null, groups);
            }
            (GroupTable::Packed { table, keys }, KeyBatch::Packed(values, _)) => {
                let key = |i: usize| Some(values[i]);
                let null = |_: &mut Vec<u128>| unreachable!("packed keys hold their nulls");
                insert_flat(table, keys, (n, row), key, hashes, null, groups);
            }
            (GroupTable::Wide(table), KeyBatch::Wide { rows, width }) => {
                groups.reserve(n);
                for j in 0..n {
                    prefetch_ahead(j, n, |k| hashes[row(k)], |h| table.prefetch(h));
                    let i = row(j);
                    groups.push(table.find_or_insert(&rows[i * width..(i + 1) * width], hashes[i]));
                }
            }
            (table @ GroupTable::Rows { .. }, KeyBatch::Rows(r, _)) => {
                groups.extend((0..n).map(|j| {
                    let i = row(j);
                    table.insert_bytes(r.row(i).as_ref(), hashes[i])
                }));
            }
            _ => unreachable!("key batch encoded by another encoder"),
        }
    }

    #[inline]
    fn insert_packed(&mut self, k: u128, hash: u64) -> u32 {
        let GroupTable::Packed { table, keys } = self else {
            unreachable!("key batch encoded by another encoder")
        };
        insert_key(table, keys, k, hash)
    }

    fn null_group(&mut self) -> u32 {
        let GroupTable::Int {
            keys, null_group, ..
        } = self
        else {
            unreachable!("key batch encoded by another encoder")
        };
        *null_group.get_or_insert_with(|| {
            keys.push(0);
            keys.len() as u32 - 1
        })
    }

    #[inline]
    fn insert_int(&mut self, k: i64, hash: u64) -> u32 {
        let GroupTable::Int { table, keys, .. } = self else {
            unreachable!("key batch encoded by another encoder")
        };
        insert_key(table, keys, k, hash)
    }

    #[inline]
    fn insert_bytes(&mut self, bytes: &[u8], hash: u64) -> u32 {
        let GroupTable::Rows {
            table,
            hashes,
            data,
            offsets,
        } = self
        else {
            unreachable!("key batch encoded by another encoder")
        };
        let entry = table.entry(
            hash,
            |&g| &data[offsets[g as usize]..offsets[g as usize + 1]] == bytes,
            |&g| hashes[g as usize],
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(o) => *o.get(),
            hashbrown::hash_table::Entry::Vacant(v) => {
                let next = hashes.len() as u32;
                v.insert(next);
                data.extend_from_slice(bytes);
                offsets.push(data.len());
                hashes.push(hash);
                next
            }
        }
    }

    /// The hash of group `g`.
    #[inline]
    pub fn hash_of(&self, g: u32) -> u64 {
        match self {
            GroupTable::Int {
                keys, null_group, ..
            } => {
                if *null_group == Some(g) {
                    NULL_HASH
                } else {
                    hash_i64(keys[g as usize])
                }
            }
            GroupTable::Packed { keys, .. } => hash_u128(keys[g as usize]),
            GroupTable::Wide(table) => table.hash_of(g),
            GroupTable::Rows { hashes, .. } => hashes[g as usize],
        }
    }

    /// Finds or creates here the group that is group `g` of `other` (a table
    /// of the same key encoding); used to merge per-thread tables.
    pub fn insert_group_from(&mut self, other: &GroupTable, g: u32) -> u32 {
        match other {
            GroupTable::Int {
                keys, null_group, ..
            } => {
                if *null_group == Some(g) {
                    self.null_group()
                } else {
                    let k = keys[g as usize];
                    self.insert_int(k, hash_i64(k))
                }
            }
            GroupTable::Packed { keys, .. } => {
                let k = keys[g as usize];
                self.insert_packed(k, hash_u128(k))
            }
            GroupTable::Wide(theirs) => {
                let GroupTable::Wide(table) = self else {
                    unreachable!("tables of another encoder")
                };
                table.find_or_insert(theirs.key(g), theirs.hash_of(g))
            }
            GroupTable::Rows {
                hashes,
                data,
                offsets,
                ..
            } => self.insert_bytes(
                &data[offsets[g as usize]..offsets[g as usize + 1]],
                hashes[g as usize],
            ),
        }
    }

    /// The key columns of all groups, in group order, as `types`.
    pub fn key_columns(&self, encoder: &KeyEncoder, types: &[DataType]) -> Result<Vec<ArrayRef>> {
        match (self, encoder) {
            (
                GroupTable::Int {
                    keys, null_group, ..
                },
                KeyEncoder::Int,
            ) => {
                let nulls = null_group.map(|g| {
                    let mut b = arrow::array::BooleanBufferBuilder::new(keys.len());
                    b.append_n(keys.len(), true);
                    b.set_bit(g as usize, false);
                    NullBuffer::new(b.finish())
                });
                let values = arrow::array::Int64Array::new(keys.clone().into(), nulls);
                Ok(vec![arrow::compute::cast(&values, &types[0])?])
            }
            (GroupTable::Packed { keys, .. }, KeyEncoder::Packed(layout, _)) => {
                let columns = layout.decode(keys)?;
                columns
                    .iter()
                    .zip(types)
                    .map(|(c, t)| super::cast_if_needed(c, t))
                    .collect()
            }
            (GroupTable::Wide(table), KeyEncoder::Wide(layout, _)) => {
                let columns = layout.decode(table.keys())?;
                columns
                    .iter()
                    .zip(types)
                    .map(|(c, t)| super::cast_if_needed(c, t))
                    .collect()
            }
            (
                GroupTable::Rows { data, offsets, .. },
                KeyEncoder::Rows(_) | KeyEncoder::Packed(..) | KeyEncoder::Wide(..),
            ) => {
                let conv = encoder.converter();
                let parser = conv.parser();
                let rows = offsets.windows(2).map(|w| parser.parse(&data[w[0]..w[1]]));
                Ok(conv.convert_rows(rows)?)
            }
            _ => unreachable!("table built with another encoder"),
        }
    }

    /// The group of every row of `keys` into `out` (cleared first), or
    /// `u32::MAX` where there is none; null keys never match. One match on
    /// the encoding per batch: the row loops below are monomorphic.
    pub fn find_all(&self, keys: &KeyBatch, hashes: &[u64], out: &mut Vec<u32>) {
        fn each<K: FlatKey>(
            table: &FlatTable<K>,
            values: &[K],
            nulls: &Option<NullBuffer>,
            hashes: &[u64],
            out: &mut Vec<u32>,
        ) {
            let nulls = nulls.as_ref().filter(|n| n.null_count() > 0);
            let n = hashes.len();
            out.extend((0..n).map(|i| {
                prefetch_ahead(i, n, |k| hashes[k], |h| table.prefetch(h));
                if nulls.is_some_and(|m| m.is_null(i)) {
                    u32::MAX
                } else {
                    table.find(values[i], hashes[i]).unwrap_or(u32::MAX)
                }
            }));
        }
        out.clear();
        out.reserve(hashes.len());
        match (self, keys) {
            (GroupTable::Int { table, .. }, KeyBatch::Int(a, nulls)) => {
                each(table, a, nulls, hashes, out)
            }
            (GroupTable::Packed { table, .. }, KeyBatch::Packed(a, nulls)) => {
                each(table, a, nulls, hashes, out)
            }
            _ => out.extend(
                (0..hashes.len()).map(|i| self.find(keys, hashes[i], i).unwrap_or(u32::MAX)),
            ),
        }
    }

    /// Asks the CPU to fetch where a probe for `hash` starts (integer and
    /// packed tables; byte-row tables keep their buckets private).
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        match self {
            GroupTable::Int { table, .. } => table.prefetch(hash),
            GroupTable::Packed { table, .. } => table.prefetch(hash),
            GroupTable::Wide(table) => table.prefetch(hash),
            GroupTable::Rows { .. } => {}
        }
    }

    /// The group of row `i`, if it exists. Null keys never match (join semantics).
    #[inline]
    pub fn find(&self, keys: &KeyBatch, hash: u64, i: usize) -> Option<u32> {
        if keys.is_null(i) {
            return None;
        }
        match (self, keys) {
            (GroupTable::Int { table, .. }, KeyBatch::Int(a, _)) => table.find(a[i], hash),
            (GroupTable::Packed { table, .. }, KeyBatch::Packed(a, _)) => table.find(a[i], hash),
            (GroupTable::Wide(table), KeyBatch::Wide { rows, width }) => {
                table.find(&rows[i * width..(i + 1) * width], hash)
            }
            (
                GroupTable::Rows {
                    table,
                    data,
                    offsets,
                    ..
                },
                KeyBatch::Rows(rows, _),
            ) => {
                let row = rows.row(i);
                let bytes = row.as_ref();
                table
                    .find(hash, |&g| {
                        &data[offsets[g as usize]..offsets[g as usize + 1]] == bytes
                    })
                    .copied()
            }
            _ => unreachable!("key batch encoded by another encoder"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray};
    use std::sync::Arc;

    fn groups(keys: Vec<ArrayRef>) -> Vec<u32> {
        let types: Vec<DataType> = keys.iter().map(|k| k.data_type().clone()).collect();
        let enc = KeyEncoder::new(&types, NullKeys::Group).unwrap();
        let mut hashes = Vec::new();
        let kb = enc.encode(&keys, &mut hashes).unwrap();
        let mut table = GroupTable::for_batch(&enc, &kb);
        let one_by_one: Vec<u32> = (0..hashes.len())
            .map(|i| table.find_or_insert(&kb, hashes[i], i))
            .collect();
        let mut batched = Vec::new();
        GroupTable::new(&enc)
            .insert_batch(&enc, &kb, &hashes, &mut batched)
            .unwrap();
        assert_eq!(one_by_one, batched);
        // A table that reserves room half way gives the same ids.
        let mut reserved = GroupTable::for_batch(&enc, &kb);
        let half = hashes.len() / 2;
        let mut ids: Vec<u32> = (0..half)
            .map(|i| reserved.find_or_insert(&kb, hashes[i], i))
            .collect();
        reserved.reserve(1_000);
        ids.extend((half..hashes.len()).map(|i| reserved.find_or_insert(&kb, hashes[i], i)));
        assert_eq!(one_by_one, ids);
        one_by_one
    }

    #[test]
    fn keys_too_long_to_pack_get_dense_ids_in_byte_rows() {
        let long = |s: &str| format!("{s}-a-key-longer-than-sixteen-bytes");
        let a: ArrayRef = Arc::new(StringArray::from(
            ["p", "q", "p", "r", "q", "p"].map(long).to_vec(),
        ));
        assert_eq!(groups(vec![a]), vec![0, 1, 0, 2, 1, 0]);
    }

    #[test]
    fn int_keys_get_dense_ids_with_a_null_group() {
        let a: ArrayRef = Arc::new(Int32Array::from(vec![
            Some(5),
            None,
            Some(5),
            Some(7),
            None,
        ]));
        assert_eq!(groups(vec![a]), vec![0, 1, 0, 2, 1]);
    }

    #[test]
    fn multi_column_keys() {
        let a: ArrayRef = Arc::new(StringArray::from(vec!["x", "y", "x", "x"]));
        let b: ArrayRef = Arc::new(Int32Array::from(vec![1, 1, 2, 1]));
        assert_eq!(groups(vec![a, b]), vec![0, 1, 2, 0]);
    }

    #[test]
    fn null_keys_never_match_in_find() {
        let a: ArrayRef = Arc::new(Int32Array::from(vec![None, Some(1)]));
        let enc = KeyEncoder::new(&[DataType::Int32], NullKeys::NeverMatch).unwrap();
        let mut t = GroupTable::new(&enc);
        let mut h = Vec::new();
        let kb = enc.encode(&[a], &mut h).unwrap();
        t.find_or_insert(&kb, h[0], 0);
        t.find_or_insert(&kb, h[1], 1);
        assert_eq!(t.find(&kb, h[0], 0), None);
        assert_eq!(t.find(&kb, h[1], 1), Some(1));
    }

    #[test]
    fn a_packed_table_moves_to_rows_keeping_its_group_ids() {
        let enc = KeyEncoder::new(&[DataType::Utf8], NullKeys::Group).unwrap();
        let mut table = GroupTable::new(&enc);
        let (mut hashes, mut groups) = (Vec::new(), Vec::new());
        let batches: [ArrayRef; 2] = [
            Arc::new(StringArray::from(vec![
                Some("a"),
                Some("b"),
                Some("a"),
                None,
            ])),
            Arc::new(StringArray::from(vec![
                Some("a string too long to pack"),
                Some("b"),
                None,
            ])),
        ];
        for keys in batches {
            let kb = enc.encode_to_insert(&table, &[keys], &mut hashes).unwrap();
            table.insert_batch(&enc, &kb, &hashes, &mut groups).unwrap();
        }
        assert!(table.is_rows());
        assert_eq!(groups, vec![0, 1, 0, 2, 3, 1, 2]);
        let keys = table.key_columns(&enc, &[DataType::Utf8]).unwrap();
        let want: ArrayRef = Arc::new(StringArray::from(vec![
            Some("a"),
            Some("b"),
            None,
            Some("a string too long to pack"),
        ]));
        assert_eq!(keys[0].as_ref(), want.as_ref());
    }

    #[test]
    fn probe_keys_too_long_for_a_packed_table_match_nothing() {
        let enc =
            KeyEncoder::new(&[DataType::Utf8, DataType::Int32], NullKeys::NeverMatch).unwrap();
        let build: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec!["x", "yy"])),
            Arc::new(Int32Array::from(vec![1, 2])),
        ];
        let mut h = Vec::new();
        let kb = enc.encode(&build, &mut h).unwrap();
        let mut t = GroupTable::for_batch(&enc, &kb);
        assert!(!t.is_rows());
        for (i, &hash) in h.iter().enumerate() {
            t.find_or_insert(&kb, hash, i);
        }
        let probe: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![
                "yy",
                "a much longer probe string",
                "x",
            ])),
            Arc::new(Int32Array::from(vec![2, 1, 2])),
        ];
        let pb = enc.encode_to_probe(&t, &probe, &mut h).unwrap();
        let found: Vec<Option<u32>> = (0..3).map(|i| t.find(&pb, h[i], i)).collect();
        assert_eq!(found, vec![Some(1), None, None]);
    }
}
