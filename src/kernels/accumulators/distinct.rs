//! `count(DISTINCT x)` and `n_unique(x)`: the distinct values of every
//! group in one hash table of (group, value) pairs. Other aggregates over
//! DISTINCT (`sum(DISTINCT x)`, `avg(DISTINCT x)`, ..) keep the same pairs
//! ([`DistinctInput`]) and aggregate them once all are known: partial
//! states from different threads may share a pair, so the aggregate cannot
//! run before the merge.
//!
//! A set per group (what this replaced) costs an allocation and a table per
//! group and a boxed copy per value; with many small groups (TPC-H Q16:
//! 18k groups of ~6 suppliers) that allocation, not hashing, was the time.
//! One table keyed by the pair grows by amortized doubling, and the count of
//! each group goes up when its pair is new, so `finish` reads counts.
//!
//! Values up to 64 bits wide (ints, dates, floats, timestamps) are keyed by
//! their bit pattern; any other type by its arrow row encoding, kept in one
//! byte arena.

use std::sync::Arc;

use arrow::array::{Array, ArrayData, ArrayRef, Int64Array, make_array};
use arrow::buffer::Buffer;
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, SortField};
use hashbrown::HashTable;

use super::{Accumulator, create, grow, same};
use crate::error::Result;
use crate::expr::AggFunc;
use crate::kernels::hash_table::{hash_bytes, hash_u128};

/// The (group, value) pairs seen so far.
enum Pairs {
    /// Values of at most 64 bits, as their bits zero-extended.
    Bits(HashTable<(u32, u64)>),
    /// Other values as byte rows: `(hash, group, offset, len)` into `arena`.
    Rows {
        converter: RowConverter,
        table: HashTable<RowPair>,
        arena: Vec<u8>,
    },
}

/// A byte-row pair: the value is `arena[offset..offset + len]`.
#[derive(Clone, Copy)]
struct RowPair {
    hash: u64,
    group: u32,
    len: u32,
    offset: usize,
}

#[inline(always)]
fn pair_hash(group: u32, bits: u64) -> u64 {
    hash_u128(((group as u128) << 64) | bits as u128)
}

#[inline(always)]
fn row_hash(group: u32, bytes: &[u8]) -> u64 {
    hash_bytes(bytes) ^ (group as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Pairs {
    /// Inserts `(group, bits)`; true if it was not there.
    #[inline(always)]
    fn insert_bits(table: &mut HashTable<(u32, u64)>, group: u32, bits: u64) -> bool {
        let hash = pair_hash(group, bits);
        match table.entry(hash, |&p| p == (group, bits), |&(g, b)| pair_hash(g, b)) {
            hashbrown::hash_table::Entry::Occupied(_) => false,
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert((group, bits));
                true
            }
        }
    }

    /// Inserts `(group, bytes)`, copying new bytes into `arena`; true if new.
    #[inline(always)]
    fn insert_row(
        table: &mut HashTable<RowPair>,
        arena: &mut Vec<u8>,
        group: u32,
        bytes: &[u8],
    ) -> bool {
        let hash = row_hash(group, bytes);
        let eq = |p: &RowPair| {
            p.hash == hash
                && p.group == group
                && &arena[p.offset..p.offset + p.len as usize] == bytes
        };
        if table.find(hash, eq).is_some() {
            return false;
        }
        let pair = RowPair {
            hash,
            group,
            len: bytes.len() as u32,
            offset: arena.len(),
        };
        arena.extend_from_slice(bytes);
        table.insert_unique(hash, pair, |p| p.hash);
        true
    }
}

/// Calls `f(row, bits)` for each of `rows`, with the value of a
/// fixed-width array of `width` bytes read as `u64` bits: the width is
/// matched once per batch, and each loop reads a typed slice.
fn for_each_bits(data: &ArrayData, width: usize, rows: &[u32], f: impl FnMut(usize, u64)) {
    fn each<T: Copy + Into<u64>>(values: &[T], rows: &[u32], mut f: impl FnMut(usize, u64)) {
        for (k, &r) in rows.iter().enumerate() {
            f(k, values[r as usize].into());
        }
    }
    match width {
        1 => each(data.buffer::<u8>(0), rows, f),
        2 => each(data.buffer::<u16>(0), rows, f),
        4 => each(data.buffer::<u32>(0), rows, f),
        _ => each(data.buffer::<u64>(0), rows, f),
    }
}

/// The byte width of values keyed by their bits, if `t` is one of them.
fn bits_width(t: &DataType) -> Option<usize> {
    match t.primitive_width() {
        Some(w @ (1 | 2 | 4 | 8)) if t.is_primitive() => Some(w),
        _ => None,
    }
}

/// Distinct values per group: `count(DISTINCT x)` (nulls ignored) or
/// `n_unique` (null counts as one value, as in Polars).
pub(super) struct Distinct {
    pairs: Pairs,
    counts: Vec<i64>,
    nulls: Vec<bool>,
    count_null: bool,
}

impl Distinct {
    pub(super) fn new(t: &DataType, count_null: bool) -> Result<Self> {
        let pairs = match bits_width(t) {
            Some(_) => Pairs::Bits(HashTable::new()),
            None => Pairs::Rows {
                converter: RowConverter::new(vec![SortField::new(t.clone())])?,
                table: HashTable::new(),
                arena: vec![],
            },
        };
        Ok(Distinct {
            pairs,
            counts: vec![],
            nulls: vec![],
            count_null,
        })
    }

    fn grow(&mut self, n: usize) {
        grow(&mut self.counts, n, 0);
        grow(&mut self.nulls, n, false);
    }

    /// Every distinct (group, non-null value) pair: the groups, and the
    /// values as an array of `t`, the type the accumulator was made for.
    fn pairs(&self, t: &DataType) -> Result<(Vec<u32>, ArrayRef)> {
        Ok(match &self.pairs {
            Pairs::Bits(table) => {
                fn narrow<T: arrow::datatypes::ArrowNativeType>(
                    table: &HashTable<(u32, u64)>,
                    f: impl Fn(u64) -> T,
                ) -> Buffer {
                    Buffer::from_vec(table.iter().map(|&(_, b)| f(b)).collect::<Vec<T>>())
                }
                let values = match bits_width(t).expect("a fixed-width column") {
                    1 => narrow(table, |b| b as u8),
                    2 => narrow(table, |b| b as u16),
                    4 => narrow(table, |b| b as u32),
                    _ => narrow(table, |b| b),
                };
                let data = ArrayData::builder(t.clone())
                    .len(table.len())
                    .add_buffer(values)
                    .build()?;
                (table.iter().map(|&(g, _)| g).collect(), make_array(data))
            }
            Pairs::Rows {
                converter,
                table,
                arena,
            } => {
                let parser = converter.parser();
                let rows = table
                    .iter()
                    .map(|p| parser.parse(&arena[p.offset..p.offset + p.len as usize]));
                let values = converter.convert_rows(rows)?.remove(0);
                (table.iter().map(|p| p.group).collect(), values)
            }
        })
    }
}

/// `func(DISTINCT x)` for aggregates other than count: the distinct pairs
/// of [`Distinct`], aggregated by `func` when the groups are final.
pub(super) struct DistinctInput {
    set: Distinct,
    func: AggFunc,
    input: DataType,
    out: DataType,
}

impl DistinctInput {
    pub(super) fn new(func: AggFunc, input: &DataType, out: &DataType) -> Result<Self> {
        Ok(DistinctInput {
            set: Distinct::new(input, false)?,
            func,
            input: input.clone(),
            out: out.clone(),
        })
    }
}

impl Accumulator for DistinctInput {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        self.set.update(values, rows, groups, n)
    }

    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        self.set.merge(&same::<Self>(other).set, src, dst, n)
    }

    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        let (groups, values) = self.set.pairs(&self.input)?;
        let mut inner = create(
            self.func,
            false,
            std::slice::from_ref(&self.input),
            &self.out,
        )?;
        let rows: Vec<u32> = (0..groups.len() as u32).collect();
        inner.update(&[values], &rows, &groups, n)?;
        inner.finish(n)
    }
}

impl Accumulator for Distinct {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        self.grow(n);
        // Distinct by IEEE equality: -0.0 and 0.0 are one value.
        let array = &crate::kernels::float_zero::canonical_floats(&values[0]);
        let nulls = array.logical_nulls();
        let is_null = |r: u32| nulls.as_ref().is_some_and(|n| n.is_null(r as usize));
        let (counts, seen_null) = (&mut self.counts, &mut self.nulls);
        match &mut self.pairs {
            Pairs::Bits(table) => {
                let width = bits_width(array.data_type()).expect("a fixed-width column");
                for_each_bits(&array.to_data(), width, rows, |k, bits| {
                    let g = groups[k];
                    if is_null(rows[k]) {
                        seen_null[g as usize] = true;
                    } else if Pairs::insert_bits(table, g, bits) {
                        counts[g as usize] += 1;
                    }
                });
            }
            Pairs::Rows {
                converter,
                table,
                arena,
            } => {
                let encoded = converter.convert_columns(std::slice::from_ref(array))?;
                for (&r, &g) in rows.iter().zip(groups) {
                    if is_null(r) {
                        seen_null[g as usize] = true;
                    } else if Pairs::insert_row(table, arena, g, encoded.row(r as usize).as_ref()) {
                        counts[g as usize] += 1;
                    }
                }
            }
        }
        Ok(())
    }

    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        self.grow(n);
        // Where each of the other side's groups goes (u32::MAX: nowhere).
        let mut to = vec![u32::MAX; other.counts.len()];
        for (&s, &d) in src.iter().zip(dst) {
            if let Some(slot) = to.get_mut(s as usize) {
                *slot = d;
                self.nulls[d as usize] |= other.nulls[s as usize];
            }
        }
        let target = |g: u32| Some(to[g as usize]).filter(|&d| d != u32::MAX);
        match (&mut self.pairs, &other.pairs) {
            (Pairs::Bits(mine), Pairs::Bits(theirs)) => {
                for &(g, bits) in theirs {
                    if let Some(d) = target(g)
                        && Pairs::insert_bits(mine, d, bits)
                    {
                        self.counts[d as usize] += 1;
                    }
                }
            }
            (
                Pairs::Rows { table, arena, .. },
                Pairs::Rows {
                    table: their_table,
                    arena: their_arena,
                    ..
                },
            ) => {
                for p in their_table {
                    let bytes = &their_arena[p.offset..p.offset + p.len as usize];
                    if let Some(d) = target(p.group)
                        && Pairs::insert_row(table, arena, d, bytes)
                    {
                        self.counts[d as usize] += 1;
                    }
                }
            }
            _ => unreachable!("accumulators of one aggregate share their value type"),
        }
        Ok(())
    }

    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        self.grow(n);
        let out: Int64Array = self
            .counts
            .iter()
            .zip(&self.nulls)
            .take(n)
            .map(|(&c, &has_null)| Some(c + (self.count_null && has_null) as i64))
            .collect();
        Ok(Arc::new(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Decimal128Array, Float64Array, Int32Array, StringArray};
    use std::collections::{BTreeSet, HashMap};

    /// The per-group distinct counts of `(group, value)` pairs, the slow way.
    fn expected<T: Ord + Clone>(
        pairs: &[(u32, Option<T>)],
        n: usize,
        count_null: bool,
    ) -> Vec<i64> {
        let mut sets: HashMap<u32, BTreeSet<Option<T>>> = HashMap::new();
        for (g, v) in pairs {
            if v.is_some() || count_null {
                sets.entry(*g).or_default().insert(v.clone());
            }
        }
        (0..n as u32)
            .map(|g| sets.get(&g).map_or(0, |s| s.len() as i64))
            .collect()
    }

    fn counts(out: ArrayRef) -> Vec<i64> {
        out.as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .values()
            .to_vec()
    }

    /// Runs the accumulator over `array` split in two halves, each half in
    /// its own accumulator, merged with groups renumbered, as the parallel
    /// aggregate does.
    fn split_and_merge(array: ArrayRef, groups: &[u32], n: usize, count_null: bool) -> Vec<i64> {
        let t = array.data_type().clone();
        counts(merged(
            || Box::new(Distinct::new(&t, count_null).unwrap()),
            array,
            groups,
            n,
        ))
    }

    /// As [`split_and_merge`], for any accumulator `make` creates.
    fn merged(
        make: impl Fn() -> Box<dyn Accumulator>,
        array: ArrayRef,
        groups: &[u32],
        n: usize,
    ) -> ArrayRef {
        let half = groups.len() / 2;
        let (mut a, mut b) = (make(), make());
        let rows: Vec<u32> = (0..groups.len() as u32).collect();
        a.update(
            std::slice::from_ref(&array),
            &rows[..half],
            &groups[..half],
            n,
        )
        .unwrap();
        // The second accumulator numbers its groups backwards.
        let flipped: Vec<u32> = groups[half..].iter().map(|g| n as u32 - 1 - g).collect();
        b.update(&[array], &rows[half..], &flipped, n).unwrap();
        let src: Vec<u32> = (0..n as u32).collect();
        let dst: Vec<u32> = src.iter().map(|g| n as u32 - 1 - g).collect();
        a.merge(b.as_ref(), &src, &dst, n).unwrap();
        a.finish(n).unwrap()
    }

    /// `sum` and `avg` over DISTINCT: each group's set of values, however
    /// the rows split between the two merged states (a value seen by both
    /// counts once). Group 6 has only nulls, so its aggregates are null.
    #[test]
    fn sums_and_means_of_distinct_values_across_a_merge() {
        let n = 7;
        let groups: Vec<u32> = (0..600u32).map(|i| i * 5 % n as u32).collect();
        let values: Vec<Option<i64>> = (0..600)
            .zip(&groups)
            .map(|(i, &g)| (g != 6 && i % 11 != 0).then_some((i * 31 % 17) - 8))
            .collect();
        let mut sets: HashMap<u32, BTreeSet<i64>> = HashMap::new();
        for (g, v) in groups.iter().zip(&values) {
            if let Some(v) = v {
                sets.entry(*g).or_default().insert(*v);
            }
        }
        let set_sum = |g: u32| sets.get(&g).map(|s| s.iter().sum::<i64>());
        let set_mean = |g: u32| {
            sets.get(&g)
                .map(|s| s.iter().sum::<i64>() as f64 / s.len() as f64)
        };
        let array: ArrayRef = Arc::new(arrow::array::Int64Array::from(values.clone()));
        let sums = merged(
            || {
                Box::new(
                    DistinctInput::new(AggFunc::Sum, &DataType::Int64, &DataType::Int64).unwrap(),
                )
            },
            array,
            &groups,
            n,
        );
        let sums = sums.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(
            sums.iter().collect::<Vec<_>>(),
            (0..n as u32).map(set_sum).collect::<Vec<_>>()
        );
        let floats: ArrayRef = Arc::new(Float64Array::from_iter(
            values.iter().map(|v| v.map(|v| v as f64)),
        ));
        let means = merged(
            || {
                Box::new(
                    DistinctInput::new(AggFunc::Mean, &DataType::Float64, &DataType::Float64)
                        .unwrap(),
                )
            },
            floats,
            &groups,
            n,
        );
        let means = means.as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(
            means.iter().collect::<Vec<_>>(),
            (0..n as u32).map(set_mean).collect::<Vec<_>>()
        );
        // Decimals are kept as byte rows, not bits: the other path.
        let t = DataType::Decimal128(12, 2);
        let decimals: ArrayRef = Arc::new(
            Decimal128Array::from_iter(values.iter().map(|v| v.map(|v| v as i128 * 25)))
                .with_data_type(t.clone()),
        );
        let out = DataType::Decimal128(38, 2);
        let sums = merged(
            || Box::new(DistinctInput::new(AggFunc::Sum, &t, &out).unwrap()),
            decimals,
            &groups,
            n,
        );
        let sums = sums.as_any().downcast_ref::<Decimal128Array>().unwrap();
        assert_eq!(
            sums.iter().collect::<Vec<_>>(),
            (0..n as u32)
                .map(|g| set_sum(g).map(|s| s as i128 * 25))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn counts_distinct_ints_per_group_across_a_merge() {
        let n = 7;
        let values: Vec<Option<i32>> = (0..500)
            .map(|i| (i % 13 != 0).then_some((i * 31 % 17) - 8))
            .collect();
        let groups: Vec<u32> = (0..500u32).map(|i| i * 5 % n as u32).collect();
        let pairs: Vec<_> = groups.iter().copied().zip(values.clone()).collect();
        let array: ArrayRef = Arc::new(Int32Array::from(values));
        for count_null in [false, true] {
            assert_eq!(
                split_and_merge(array.clone(), &groups, n, count_null),
                expected(&pairs, n, count_null),
                "count_null {count_null}"
            );
        }
    }

    #[test]
    fn counts_distinct_strings_and_decimals_by_their_rows() {
        let n = 4;
        let words = ["a", "bb", "", "a", "ccc", "bb"];
        let values: Vec<Option<&str>> = (0..300)
            .map(|i| (i % 7 != 3).then_some(words[i * 5 % words.len()]))
            .collect();
        let groups: Vec<u32> = (0..300u32).map(|i| i * 3 % n as u32).collect();
        let pairs: Vec<_> = groups.iter().copied().zip(values.clone()).collect();
        let array: ArrayRef = Arc::new(StringArray::from(values));
        assert_eq!(
            split_and_merge(array, &groups, n, true),
            expected(&pairs, n, true)
        );

        let values: Vec<Option<i128>> = (0..300).map(|i| Some(i % 11 * 10_i128.pow(20))).collect();
        let pairs: Vec<_> = groups.iter().copied().zip(values.clone()).collect();
        let array: ArrayRef = Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(38, 2)
                .unwrap(),
        );
        assert_eq!(
            split_and_merge(array, &groups, n, false),
            expected(&pairs, n, false)
        );
    }

    #[test]
    fn floats_are_distinct_by_bits_and_groups_never_seen_count_zero() {
        // 1.5 twice in group 0 counts once; group 2 gets no rows.
        let array: ArrayRef = Arc::new(Float64Array::from(vec![1.5, 1.5, -0.0, 2.0]));
        let mut d = Distinct::new(&DataType::Float64, false).unwrap();
        d.update(&[array], &[0, 1, 2, 3], &[0, 0, 1, 1], 2).unwrap();
        assert_eq!(counts(d.finish(3).unwrap()), vec![1, 2, 0]);
    }

    #[test]
    fn a_sliced_column_reads_its_own_values() {
        let array: ArrayRef = Arc::new(Int32Array::from(vec![9, 9, 1, 2, 2]).slice(2, 3));
        let mut d = Distinct::new(&DataType::Int32, false).unwrap();
        d.update(&[array], &[0, 1, 2], &[0, 0, 0], 1).unwrap();
        assert_eq!(counts(d.finish(1).unwrap()), vec![2]);
    }
}
