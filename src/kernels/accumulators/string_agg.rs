//! `string_agg(x, separator [ORDER BY key])`: each group's non-null values
//! joined by the separator.
//!
//! A group keeps where its values are (batch, row), and with an ORDER BY
//! each one's key as arrow row bytes in one arena (no allocation per row).
//! `finish` sorts a group's entries by key, stably (ties keep input order,
//! which the aggregate keeps by merging partial states in input order),
//! and writes the joined text once.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use arrow::compute::SortOptions;
use arrow::datatypes::DataType;
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

pub(super) struct StringAgg {
    converter: Option<RowConverter>,
    arrays: Vec<ArrayRef>,
    arena: Vec<u8>,
    groups: Vec<Vec<Entry>>,
    /// The separator (the first non-null one seen; a null one joins with
    /// nothing).
    separator: Option<String>,
}

impl StringAgg {
    pub(super) fn new(order: Option<KeyOrder>, key_type: Option<&DataType>) -> Result<Self> {
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
        Ok(StringAgg {
            converter,
            arrays: vec![],
            arena: vec![],
            groups: vec![],
            separator: None,
        })
    }

    fn key<'a>(arena: &'a [u8], e: &Entry) -> &'a [u8] {
        &arena[e.key.0 as usize..(e.key.0 + e.key.1) as usize]
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
        grow(&mut self.groups, n, Vec::new());
        if self.separator.is_none() {
            let sep = values[1].as_string::<i32>();
            self.separator = (0..sep.len())
                .find(|&i| sep.is_valid(i))
                .map(|i| sep.value(i).into());
        }
        let keys = match &self.converter {
            Some(c) => Some(c.convert_columns(&values[2..3])?),
            None => None,
        };
        let batch = self.arrays.len() as u32;
        let x = &values[0];
        self.arrays.push(x.clone());
        let nulls = x.logical_nulls();
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
        }
        Ok(())
    }

    /// `other` saw later input than `self` (merges go in input order).
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        grow(&mut self.groups, n, Vec::new());
        if self.separator.is_none() {
            self.separator.clone_from(&other.separator);
        }
        let (batches, bytes) = (self.arrays.len() as u32, self.arena.len() as u32);
        self.arrays.extend(other.arrays.iter().cloned());
        self.arena.extend_from_slice(&other.arena);
        for (&s, &d) in src.iter().zip(dst) {
            let Some(entries) = other.groups.get(s as usize) else {
                continue;
            };
            self.groups[d as usize].extend(entries.iter().map(|e| Entry {
                batch: e.batch + batches,
                row: e.row,
                key: (e.key.0 + bytes, e.key.1),
            }));
        }
        Ok(())
    }

    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        grow(&mut self.groups, n, Vec::new());
        let separator = self.separator.as_deref().unwrap_or("");
        let texts: Vec<_> = self.arrays.iter().map(|a| a.as_string::<i32>()).collect();
        let mut out = StringBuilder::new();
        let mut buf = String::new();
        for entries in self.groups.iter_mut().take(n) {
            if entries.is_empty() {
                out.append_null();
                continue;
            }
            if self.converter.is_some() {
                let arena = &self.arena;
                entries.sort_by(|a, b| Self::key(arena, a).cmp(Self::key(arena, b)));
            }
            buf.clear();
            for (i, e) in entries.iter().enumerate() {
                if i > 0 {
                    buf.push_str(separator);
                }
                buf.push_str(texts[e.batch as usize].value(e.row as usize));
            }
            out.append_value(&buf);
        }
        Ok(Arc::new(out.finish()))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Int64Array, StringArray};

    use super::*;

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
