//! `first(x ORDER BY key)`, `last(x ORDER BY key)`, `min_by(x, key)` and
//! `max_by(x, key)`: per group, the value of the row whose key comes first
//! in the order.
//!
//! Keys of any type (and any direction and null placement) compare as arrow
//! rows, byte strings whose order is the sort order, so one loop serves
//! every key type. A group keeps its best key's bytes (a buffer per group,
//! reused) and where its value is (batch, row); values are gathered once
//! at the end ([`Picks`]).

use arrow::array::{Array, ArrayRef};
use arrow::compute::SortOptions;
use arrow::row::{RowConverter, SortField};

use super::{Accumulator, Picks, grow, same};
use crate::error::Result;
use crate::expr::KeyOrder;

pub(super) struct FirstBy {
    order: KeyOrder,
    converter: RowConverter,
    /// Per group: the best key so far, as row bytes.
    best: Vec<Vec<u8>>,
    /// Bytes the keys in `best` hold, kept as they grow.
    best_bytes: usize,
    /// Per group: where the best row's value is.
    picks: Picks,
}

impl FirstBy {
    pub(super) fn new(order: KeyOrder, key_type: &arrow::datatypes::DataType) -> Result<Self> {
        let options = SortOptions {
            descending: order.descending,
            nulls_first: order.nulls_first,
        };
        Ok(FirstBy {
            order,
            converter: RowConverter::new(vec![SortField::new_with_options(
                key_type.clone(),
                options,
            )])?,
            best: vec![],
            best_bytes: 0,
            picks: Picks::default(),
        })
    }

    fn grow(&mut self, n: usize) {
        grow(&mut self.best, n, Vec::new());
        self.picks.grow(n);
    }

    /// Makes (batch, row) group `g`'s pick if `key` comes before its best.
    /// Ties keep the earlier row.
    fn offer(&mut self, g: usize, key: &[u8], at: (usize, usize)) {
        if self.picks.get(g).is_none() || key < self.best[g].as_slice() {
            super::replace_counted(&mut self.best[g], key, &mut self.best_bytes);
            self.picks.set(g, at);
        }
    }
}

impl Accumulator for FirstBy {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        self.grow(n);
        let keys = self.converter.convert_columns(&values[1..2])?;
        let skipped = |a: &ArrayRef| a.logical_nulls().filter(|_| self.order.skip_nulls);
        let (null_values, null_keys) = (skipped(&values[0]), skipped(&values[1]));
        let is_null = |n: &Option<arrow::buffer::NullBuffer>, r: u32| {
            n.as_ref().is_some_and(|n| n.is_null(r as usize))
        };
        let batch = self.picks.add(&values[0]);
        for (&r, &g) in rows.iter().zip(groups) {
            if is_null(&null_keys, r) || is_null(&null_values, r) {
                continue;
            }
            self.offer(
                g as usize,
                keys.row(r as usize).as_ref(),
                (batch, r as usize),
            );
        }
        self.picks.compact()
    }

    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        self.grow(n);
        let offset = self.picks.absorb(&other.picks);
        for (&s, &d) in src.iter().zip(dst) {
            if let Some((batch, row)) = other.picks.get(s as usize) {
                self.offer(d as usize, &other.best[s as usize], (batch + offset, row));
            }
        }
        self.picks.compact()
    }

    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        self.grow(n);
        self.picks.finish(n)
    }
    fn held_bytes(&self) -> usize {
        self.best_bytes + super::vec_bytes(&self.best) + self.picks.held_bytes()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{AsArray, Int64Array, StringArray};

    use super::*;

    fn order(descending: bool, nulls_first: bool, skip_nulls: bool) -> KeyOrder {
        KeyOrder {
            descending,
            nulls_first,
            skip_nulls,
        }
    }

    /// Two groups over two batches merged from two accumulators, for each
    /// order; keys with nulls and ties.
    #[test]
    fn picks_the_value_of_the_first_key_in_each_order() {
        let values: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c", "d", "e", "f"]));
        let keys: ArrayRef = Arc::new(Int64Array::from(vec![
            Some(3),
            None,
            Some(1),
            Some(5),
            Some(1),
            Some(9),
        ]));
        // Group 0: rows 0, 1, 2 (keys 3, null, 1); group 1: rows 3, 4, 5 (5, 1, 9).
        let run = |o: KeyOrder| {
            let t = keys.data_type().clone();
            let (mut a, mut b) = (FirstBy::new(o, &t).unwrap(), FirstBy::new(o, &t).unwrap());
            let cols = [values.clone(), keys.clone()];
            a.update(&cols, &[0, 3, 4], &[0, 1, 1], 2).unwrap();
            // The other state numbers the groups the other way round.
            b.update(&cols, &[1, 2, 5], &[1, 1, 0], 2).unwrap();
            a.merge(&b, &[0, 1], &[1, 0], 2).unwrap();
            let out = a.finish(2).unwrap();
            let out = out.as_string::<i32>();
            (0..2).map(|g| out.value(g).to_string()).collect::<Vec<_>>()
        };
        assert_eq!(run(order(false, false, true)), ["c", "e"]); // min_by
        assert_eq!(run(order(true, true, true)), ["a", "f"]); // max_by
        assert_eq!(run(order(true, true, false)), ["b", "f"]); // first(.. ORDER BY key DESC)
        assert_eq!(run(order(false, true, false)), ["b", "e"]); // NULLS FIRST
    }
}
