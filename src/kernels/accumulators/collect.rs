//! The aggregates that collect a group's values: `string_agg(x, separator
//! [ORDER BY key])`, each group's non-null values joined by the separator,
//! and `array_agg(x [ORDER BY key])`, each group's values (nulls included,
//! as PostgreSQL's) as a list.
//!
//! Both keep, per group, where its values are (batch, row), and with an
//! ORDER BY each one's key as arrow row bytes in one arena (no allocation
//! per row): a [`Collected`]. `finish` sorts a group's entries by key,
//! stably (ties keep input order, which the aggregate keeps by merging
//! partial states in input order), and writes the text or the list once.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, ListArray, StringBuilder};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::compute::SortOptions;
use arrow::datatypes::{DataType, Field};
use arrow::row::{RowConverter, SortField};

use super::{Accumulator, grow, same};
use crate::error::Result;
use crate::expr::KeyOrder;

/// One value of a group: where it is, and its key's bytes in the arena.
#[derive(Clone, Copy)]
struct Entry {
    batch: u32,
    row: u32,
    key: (u32, u32),
}

/// Each group's values, by position, with their sort keys.
struct Collected {
    converter: Option<RowConverter>,
    /// Whether null values are left out (`string_agg`) or kept.
    skip_nulls: bool,
    arrays: Vec<ArrayRef>,
    arena: Vec<u8>,
    groups: Vec<Vec<Entry>>,
    /// Entries held, over all groups.
    entries: usize,
    /// Bytes the arrays in `arrays` take, kept as they come.
    array_bytes: usize,
}

impl Collected {
    /// Bytes held: the input arrays, the sort keys and each group's entries.
    fn held_bytes(&self) -> usize {
        let arrays = self.array_bytes;
        let entries = self.entries * std::mem::size_of::<Entry>();
        arrays + self.arena.capacity() + entries + super::vec_bytes(&self.groups)
    }

    fn new(order: Option<KeyOrder>, key_type: Option<&DataType>, skip_nulls: bool) -> Result<Self> {
        let converter = match (order, key_type) {
            (Some(o), Some(t)) => Some(RowConverter::new(vec![SortField::new_with_options(
                t.clone(),
                SortOptions {
                    descending: o.descending,
                    nulls_first: o.nulls_first,
                },
            )])?),
            _ => None,
        };
        Ok(Collected {
            converter,
            skip_nulls,
            arrays: vec![],
            arena: vec![],
            groups: vec![],
            entries: 0,
            array_bytes: 0,
        })
    }

    fn key<'a>(arena: &'a [u8], e: &Entry) -> &'a [u8] {
        &arena[e.key.0 as usize..(e.key.0 + e.key.1) as usize]
    }

    /// Adds `x[rows[k]]` to group `groups[k]`, keyed by `key`'s rows.
    fn update(
        &mut self,
        x: &ArrayRef,
        key: Option<&ArrayRef>,
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        grow(&mut self.groups, n, Vec::new());
        let keys = match (&self.converter, key) {
            (Some(c), Some(k)) => Some(c.convert_columns(std::slice::from_ref(k))?),
            _ => None,
        };
        let batch = self.arrays.len() as u32;
        self.arrays.push(x.clone());
        self.array_bytes += super::slice_bytes(x);
        let nulls = x.logical_nulls().filter(|_| self.skip_nulls);
        for (&r, &g) in rows.iter().zip(groups) {
            if nulls.as_ref().is_some_and(|n| n.is_null(r as usize)) {
                continue;
            }
            let key = match &keys {
                Some(k) => {
                    let bytes = k.row(r as usize);
                    let at = self.arena.len() as u32;
                    self.arena.extend_from_slice(bytes.as_ref());
                    (at, bytes.as_ref().len() as u32)
                }
                None => (0, 0),
            };
            self.groups[g as usize].push(Entry { batch, row: r, key });
            self.entries += 1;
        }
        Ok(())
    }

    /// Appends `other`'s groups `src` to this one's `dst` (`other` saw
    /// later input).
    fn merge(&mut self, other: &Collected, src: &[u32], dst: &[u32], n: usize) {
        grow(&mut self.groups, n, Vec::new());
        let (batches, bytes) = (self.arrays.len() as u32, self.arena.len() as u32);
        self.arrays.extend(other.arrays.iter().cloned());
        self.array_bytes += other.array_bytes;
        self.arena.extend_from_slice(&other.arena);
        for (&s, &d) in src.iter().zip(dst) {
            let Some(entries) = other.groups.get(s as usize) else {
                continue;
            };
            self.entries += entries.len();
            self.groups[d as usize].extend(entries.iter().map(|e| Entry {
                batch: e.batch + batches,
                row: e.row,
                key: (e.key.0 + bytes, e.key.1),
            }));
        }
    }

    /// The first `n` groups' entries, each in key order.
    fn sorted(&mut self, n: usize) -> &[Vec<Entry>] {
        grow(&mut self.groups, n, Vec::new());
        if self.converter.is_some() {
            let arena = &self.arena;
            for entries in &mut self.groups {
                entries.sort_by(|a, b| Self::key(arena, a).cmp(Self::key(arena, b)));
            }
        }
        &self.groups[..n]
    }
}

pub(super) struct StringAgg {
    values: Collected,
    /// The separator (the first non-null one seen; a null one joins with
    /// nothing).
    separator: Option<String>,
}

impl StringAgg {
    pub(super) fn new(order: Option<KeyOrder>, key_type: Option<&DataType>) -> Result<Self> {
        Ok(StringAgg {
            values: Collected::new(order, key_type, true)?,
            separator: None,
        })
    }
}

impl Accumulator for StringAgg {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        if self.separator.is_none() {
            let sep = values[1].as_string::<i32>();
            self.separator = (0..sep.len())
                .find(|&i| sep.is_valid(i))
                .map(|i| sep.value(i).into());
        }
        self.values
            .update(&values[0], values.get(2), rows, groups, n)
    }

    /// `other` saw later input than `self` (merges go in input order).
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        if self.separator.is_none() {
            self.separator.clone_from(&other.separator);
        }
        self.values.merge(&other.values, src, dst, n);
        Ok(())
    }

    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        let separator = self.separator.clone().unwrap_or_default();
        let texts: Vec<_> = (self.values.arrays.iter())
            .map(|a| a.as_string::<i32>().clone())
            .collect();
        let mut out = StringBuilder::new();
        let mut buf = String::new();
        for entries in self.values.sorted(n) {
            if entries.is_empty() {
                out.append_null();
                continue;
            }
            buf.clear();
            for (i, e) in entries.iter().enumerate() {
                if i > 0 {
                    buf.push_str(&separator);
                }
                buf.push_str(texts[e.batch as usize].value(e.row as usize));
            }
            out.append_value(&buf);
        }
        Ok(Arc::new(out.finish()))
    }
    fn held_bytes(&self) -> usize {
        self.values.held_bytes()
    }
}

/// `array_agg(x [ORDER BY key])`: a list per group, null for a group of no
/// rows.
pub(super) struct ArrayAgg {
    values: Collected,
    item: DataType,
}

impl ArrayAgg {
    pub(super) fn new(
        order: Option<KeyOrder>,
        item: &DataType,
        key_type: Option<&DataType>,
    ) -> Result<Self> {
        Ok(ArrayAgg {
            values: Collected::new(order, key_type, false)?,
            item: item.clone(),
        })
    }
}

impl Accumulator for ArrayAgg {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        self.values
            .update(&values[0], values.get(1), rows, groups, n)
    }

    /// `other` saw later input than `self` (merges go in input order).
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        self.values.merge(&same::<Self>(other).values, src, dst, n);
        Ok(())
    }

    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        let item = self.item.clone();
        let groups = self.values.sorted(n).to_vec();
        let positions: Vec<(usize, usize)> = (groups.iter().flatten())
            .map(|e| (e.batch as usize, e.row as usize))
            .collect();
        let arrays: Vec<&dyn Array> = self.values.arrays.iter().map(|a| a.as_ref()).collect();
        let flat = match arrays.is_empty() {
            true => arrow::array::new_empty_array(&item),
            false => arrow::compute::interleave(&arrays, &positions)?,
        };
        let offsets = OffsetBuffer::from_lengths(groups.iter().map(Vec::len));
        let present = NullBuffer::from_iter(groups.iter().map(|g| !g.is_empty()));
        let field = Arc::new(Field::new("item", item, true));
        Ok(Arc::new(ListArray::try_new(
            field,
            offsets,
            flat,
            Some(present),
        )?))
    }
    fn held_bytes(&self) -> usize {
        self.values.held_bytes()
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Int64Array, StringArray};

    use super::*;

    #[test]
    fn array_agg_keeps_nulls_and_orders_like_string_agg() {
        let x: ArrayRef = Arc::new(Int64Array::from(vec![Some(10), None, Some(30), Some(40)]));
        let key: ArrayRef = Arc::new(Int64Array::from(vec![3, 1, 2, 0]));
        let cols = [x, key];
        let order = KeyOrder {
            descending: false,
            nulls_first: false,
            skip_nulls: false,
        };
        let t = DataType::Int64;
        let mut a = ArrayAgg::new(Some(order), &t, Some(&t)).unwrap();
        let mut b = ArrayAgg::new(Some(order), &t, Some(&t)).unwrap();
        a.update(&cols, &[0, 1], &[0, 0], 2).unwrap();
        b.update(&cols, &[2, 3], &[0, 0], 1).unwrap();
        a.merge(&b, &[0], &[0], 2).unwrap();
        let out = a.finish(2).unwrap();
        let list = out.as_list::<i32>();
        let first = list.value(0);
        let first = first.as_primitive::<arrow::datatypes::Int64Type>();
        // Keys 3, 1, 2, 0: 40, null, 30, 10.
        let values: Vec<Option<i64>> = first.iter().collect();
        assert_eq!(values, [Some(40), None, Some(30), Some(10)]);
        assert!(list.is_null(1), "a group of no rows is null");
    }

    #[test]
    fn joins_values_in_key_order_with_ties_in_input_order_across_a_merge() {
        let x: ArrayRef = Arc::new(StringArray::from(vec![
            Some("a"),
            Some("b"),
            None,
            Some("c"),
            Some("d"),
        ]));
        let sep: ArrayRef = Arc::new(StringArray::from(vec!["-"; 5]));
        let key: ArrayRef = Arc::new(Int64Array::from(vec![2, 1, 0, 2, 0]));
        let cols = [x, sep, key];
        let order = KeyOrder {
            descending: false,
            nulls_first: false,
            skip_nulls: false,
        };
        let run = |order: Option<KeyOrder>| {
            let t = DataType::Int64;
            let mut a = StringAgg::new(order, Some(&t)).unwrap();
            let mut b = StringAgg::new(order, Some(&t)).unwrap();
            // Rows 0-2 in one state, 3-4 in another; all in group 0, and
            // group 1 sees nothing.
            a.update(&cols, &[0, 1, 2], &[0, 0, 0], 2).unwrap();
            b.update(&cols, &[3, 4], &[0, 0], 1).unwrap();
            a.merge(&b, &[0], &[0], 2).unwrap();
            let out = a.finish(2).unwrap();
            let out = out.as_string::<i32>();
            (out.value(0).to_string(), out.is_null(1))
        };
        assert_eq!(run(None), ("a-b-c-d".to_string(), true));
        // Keys 2, 1, 2, 0: d (0), b (1), then a and c (2) in input order.
        assert_eq!(run(Some(order)), ("d-b-a-c".to_string(), true));
    }
}
