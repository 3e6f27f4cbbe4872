//! A top-k's bound on its first sort key, shared with the scan it reads.
//!
//! Once a top-k holds `k` rows, a row whose first key sorts strictly after
//! the `k`-th row's cannot be among the first `k`: the top-k drops such rows
//! before it gathers them, and the scan skips a whole Parquet row group
//! whose statistics say every row of it sorts after the bound.
//!
//! ```text
//! ORDER BY l_extendedprice DESC LIMIT 5     bound: 104945.50 (the 5th so far)
//!   row group 17: max 104312.00             -> skipped, never decoded
//!   row group 18: max 104949.50             -> read; rows below the bound dropped
//! ```
//!
//! Threads tighten the bound as their own `k`-th rows improve; any thread's
//! `k`-th row is a valid bound, since the first `k` rows overall sort no
//! later than it.

use std::sync::RwLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{Array, ArrayRef, BooleanArray, Scalar};
use arrow::compute::SortOptions;
use arrow::compute::kernels::{boolean, cmp};

use crate::error::Result;

/// The first sort key's bound of a top-k, by scan column.
pub struct TopKBound {
    /// The scan column the first sort key is.
    column: usize,
    /// How the key sorts.
    options: SortOptions,
    /// The `k`-th row's key so far (one non-null element), if any.
    value: RwLock<Option<ArrayRef>>,
    /// Units the scan skipped for the bound.
    pub units_skipped: AtomicUsize,
}

impl TopKBound {
    /// A bound, not yet known, on scan column `column` sorted by `options`.
    pub fn new(column: usize, options: SortOptions) -> Self {
        TopKBound {
            column,
            options,
            value: RwLock::new(None),
            units_skipped: AtomicUsize::new(0),
        }
    }

    /// The scan column bound.
    pub fn column(&self) -> usize {
        self.column
    }

    /// The bound so far.
    pub fn value(&self) -> Option<ArrayRef> {
        self.value.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Makes `value` (the key of some thread's `k`-th row, one element) the
    /// bound if it is stricter than the one so far; a null key bounds
    /// nothing.
    pub fn tighten(&self, value: ArrayRef) -> Result<()> {
        if value.len() != 1 || value.is_null(0) {
            return Ok(());
        }
        let mut current = self.value.write().unwrap_or_else(|e| e.into_inner());
        let stricter = match current.as_ref() {
            None => true,
            Some(old) if self.options.descending => cmp::gt(&value, old)?.value(0),
            Some(old) => cmp::lt(&value, old)?.value(0),
        };
        if stricter {
            *current = Some(value);
        }
        Ok(())
    }

    /// Which of `keys` (first sort key values) do not sort strictly after
    /// the bound; `None` while there is no bound.
    pub fn keep(&self, keys: &ArrayRef) -> Result<Option<BooleanArray>> {
        let Some(bound) = self.value() else {
            return Ok(None);
        };
        let bound = Scalar::new(bound);
        let within = if self.options.descending {
            cmp::gt_eq(keys, &bound)?
        } else {
            cmp::lt_eq(keys, &bound)?
        };
        // Nulls sort before every value or after it: kept with nulls first,
        // dropped (a null comparison) with nulls last.
        Ok(Some(if self.options.nulls_first && keys.null_count() > 0 {
            boolean::or_kleene(&within, &arrow::compute::is_null(keys)?)?
        } else {
            within
        }))
    }

    /// Whether a row group whose column has these statistics (`min`, `max`
    /// and `nulls`, one element each, in any type that casts to the
    /// bound's) may hold a row that does not sort after the bound.
    pub fn may_hold(&self, min: &ArrayRef, max: &ArrayRef, nulls: Option<u64>) -> bool {
        let Some(bound) = self.value() else {
            return true;
        };
        if self.options.nulls_first && nulls != Some(0) {
            return true;
        }
        let extreme = if self.options.descending { max } else { min };
        let to = bound.data_type();
        let Ok(extreme) = arrow::compute::cast(extreme, to) else {
            return true;
        };
        if extreme.len() != 1 || extreme.is_null(0) {
            return true;
        }
        let after = if self.options.descending {
            cmp::lt(&extreme, &Scalar::new(bound))
        } else {
            cmp::gt(&extreme, &Scalar::new(bound))
        };
        let may = !after.is_ok_and(|a| a.value(0));
        if !may {
            self.units_skipped.fetch_add(1, Ordering::Relaxed);
        }
        may
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::Int64Array;

    use super::*;

    fn one(v: i64) -> ArrayRef {
        Arc::new(Int64Array::from(vec![v]))
    }

    fn options(descending: bool, nulls_first: bool) -> SortOptions {
        SortOptions {
            descending,
            nulls_first,
        }
    }

    #[test]
    fn a_bound_only_tightens_and_keeps_what_does_not_sort_after_it() {
        let bound = TopKBound::new(0, options(true, true));
        let keys: ArrayRef = Arc::new(Int64Array::from(vec![Some(5), None, Some(9), Some(7)]));
        assert!(bound.keep(&keys).unwrap().is_none());
        bound.tighten(one(7)).unwrap();
        bound.tighten(one(6)).unwrap();
        let kept = bound.keep(&keys).unwrap().unwrap();
        // Descending, nulls first: the null and the keys >= 7.
        let kept: Vec<bool> = kept.iter().map(|v| v.unwrap_or(false)).collect();
        assert_eq!(kept, [false, true, true, true]);

        let ascending = TopKBound::new(0, options(false, false));
        ascending.tighten(one(7)).unwrap();
        ascending.tighten(one(9)).unwrap();
        let kept = ascending.keep(&keys).unwrap().unwrap();
        let kept: Vec<bool> = kept.iter().map(|v| v.unwrap_or(false)).collect();
        assert_eq!(kept, [true, false, false, true]);
    }

    #[test]
    fn row_groups_past_the_bound_are_skipped_unless_their_nulls_sort_first() {
        let descending = TopKBound::new(0, options(true, false));
        assert!(descending.may_hold(&one(1), &one(3), Some(0)));
        descending.tighten(one(5)).unwrap();
        assert!(!descending.may_hold(&one(1), &one(4), Some(2)));
        assert!(descending.may_hold(&one(1), &one(5), Some(0)));
        let nulls_first = TopKBound::new(0, options(true, true));
        nulls_first.tighten(one(5)).unwrap();
        assert!(nulls_first.may_hold(&one(1), &one(4), Some(2)));
        assert!(nulls_first.may_hold(&one(1), &one(4), None));
        assert!(!nulls_first.may_hold(&one(1), &one(4), Some(0)));
        assert_eq!(descending.units_skipped.load(Ordering::Relaxed), 1);
    }
}
