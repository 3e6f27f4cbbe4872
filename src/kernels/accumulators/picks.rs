//! Values picked per group by position: the state of aggregates whose
//! result is one of their input values (`min`/`max` of strings and other
//! row-encoded types, `first`, `last`, `first(x ORDER BY k)`).
//!
//! Such an accumulator notes where its group's value is, (input array,
//! row), and gathers the values once at the end, so a value is copied once
//! however often it is replaced. The input arrays must stay alive for that,
//! and kept whole they would hold the whole input to the end: `max` of a
//! string column of 60M rows held 3.3 GB for one 100-byte answer. So once
//! the arrays hold more than twice as many rows as there are groups (and
//! more than [`COMPACT_AFTER_ROWS`]), the picked values are gathered into one
//! array and the others are dropped: the state stays within a few times the
//! groups' values, at the cost of one gather per so many input rows.

use arrow::array::{Array, ArrayRef, new_null_array};
use arrow::datatypes::DataType;

use crate::error::Result;

/// Input rows held below which the arrays are never compacted: a small
/// input is gathered once, at the end.
const COMPACT_AFTER_ROWS: usize = 1 << 16;

/// Per group, where its value is, over the input arrays that hold them.
#[derive(Default)]
pub(super) struct Picks {
    arrays: Vec<ArrayRef>,
    /// Rows of `arrays`, together.
    rows: usize,
    /// Bytes of `arrays`, together (slices counted by their rows).
    bytes: usize,
    /// Per group: (index into `arrays`, row), or `None` for no value.
    at: Vec<Option<(usize, usize)>>,
}

impl Picks {
    /// Bytes held: the arrays kept to pick from, and each group's place.
    pub fn held_bytes(&self) -> usize {
        self.bytes + super::vec_bytes(&self.at)
    }

    /// Makes room for `n` groups.
    pub fn grow(&mut self, n: usize) {
        super::grow(&mut self.at, n, None);
    }

    /// Keeps `values` (an update's input) to pick from; returns its index
    /// for [`Picks::set`].
    pub fn add(&mut self, values: &ArrayRef) -> usize {
        self.rows += values.len();
        self.bytes += super::slice_bytes(values);
        self.arrays.push(values.clone());
        self.arrays.len() - 1
    }

    /// Group `g`'s pick.
    pub fn get(&self, g: usize) -> Option<(usize, usize)> {
        self.at.get(g).copied().flatten()
    }

    /// Makes `at`, (array, row), group `g`'s value.
    pub fn set(&mut self, g: usize, at: (usize, usize)) {
        self.at[g] = Some(at);
    }

    /// Keeps `other`'s arrays too; returns the index that its array 0 has
    /// here (add it to `other`'s picks).
    pub fn absorb(&mut self, other: &Picks) -> usize {
        let offset = self.arrays.len();
        self.arrays.extend(other.arrays.iter().cloned());
        self.rows += other.rows;
        self.bytes += other.bytes;
        offset
    }

    /// Gathers the picked values into one array, dropping the others, when
    /// the arrays hold many more rows than there are groups (module doc).
    /// Call after each update or merge.
    pub fn compact(&mut self) -> Result<()> {
        let groups = self.at.len();
        if self.arrays.len() < 2 || self.rows <= COMPACT_AFTER_ROWS.max(2 * groups) {
            return Ok(());
        }
        let gathered = gather(&self.arrays, &self.at)?;
        for (g, at) in self.at.iter_mut().enumerate() {
            if at.is_some() {
                *at = Some((0, g));
            }
        }
        self.rows = gathered.len();
        self.bytes = super::slice_bytes(&gathered);
        self.arrays = vec![gathered];
        Ok(())
    }

    /// The picked values of the first `n` groups (null where none).
    pub fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        self.grow(n);
        gather(&self.arrays, &self.at[..n])
    }
}

/// One value per group from (array, row) positions; `None` gives null.
fn gather(arrays: &[ArrayRef], at: &[Option<(usize, usize)>]) -> Result<ArrayRef> {
    let Some(first) = arrays.first() else {
        return Ok(new_null_array(&DataType::Null, at.len()));
    };
    // Slot `arrays.len()` is a one-row null array that absent picks point at.
    let null = new_null_array(first.data_type(), 1);
    let mut sources: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
    sources.push(null.as_ref());
    let indices: Vec<(usize, usize)> = (at.iter())
        .map(|p| p.unwrap_or((arrays.len(), 0)))
        .collect();
    Ok(arrow::compute::interleave(&sources, &indices)?)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{AsArray, StringArray};

    use super::*;

    /// Two groups picking across many batches: compaction keeps the
    /// arrays to a few and the picks unchanged.
    #[test]
    fn compaction_bounds_the_arrays_and_keeps_the_picks() {
        let mut picks = Picks::default();
        picks.grow(3);
        let batch_rows = 1000;
        for b in 0..200 {
            let values: ArrayRef = Arc::new(StringArray::from_iter_values(
                (0..batch_rows).map(|r| format!("{b}-{r}")),
            ));
            let i = picks.add(&values);
            // Group 0 keeps the first value seen, group 1 takes the last.
            if b == 0 {
                picks.set(0, (i, 5));
            }
            picks.set(1, (i, batch_rows - 1));
            picks.compact().unwrap();
            assert!(picks.rows <= COMPACT_AFTER_ROWS + batch_rows);
        }
        assert!(picks.arrays.len() < 100);
        let out = picks.finish(3).unwrap();
        let out = out.as_string::<i32>();
        assert_eq!(out.value(0), "0-5");
        assert_eq!(out.value(1), "199-999");
        assert!(out.is_null(2));
    }

    #[test]
    fn nothing_added_gives_nulls() {
        let mut picks = Picks::default();
        let out = picks.finish(2).unwrap();
        assert_eq!((out.len(), out.logical_null_count()), (2, 2));
    }
}
