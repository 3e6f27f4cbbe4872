//! `LIKE` patterns with several `%` wildcards and no `_`, such as TPC-H
//! Q13's `'%special%requests%'`, without a regular expression.
//!
//! arrow-rs matches `'abc%'`, `'%abc'` and `'%abc%'` with plain substring
//! kernels but turns every other pattern into a regex; for Q13 the regex
//! engine was ~10% of the query's samples. A pattern of literal pieces
//! separated by `%` matches when the first piece is a prefix (unless the
//! pattern starts with `%`), the last a suffix (unless it ends with `%`),
//! and the pieces occur in order without overlapping: each is searched
//! (SIMD `memmem`) from where the previous one ended. The greedy leftmost
//! choice is safe: matching a piece as early as possible leaves the most
//! room for the rest.

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::DataType;
use memchr::memmem::Finder;

/// A pattern of literal pieces between `%` wildcards.
pub struct WildcardPattern {
    /// The first piece must start the string.
    anchored_start: bool,
    /// The last piece must end the string.
    anchored_end: bool,
    pieces: Vec<Finder<'static>>,
}

impl WildcardPattern {
    /// The pattern, if it has at least two pieces, only `%` wildcards, and
    /// no escapes; `None` for anything arrow-rs matches as well or better.
    pub fn new(pattern: &str) -> Option<Self> {
        if pattern.contains(['_', '\\']) {
            return None;
        }
        let pieces: Vec<&str> = pattern.split('%').filter(|p| !p.is_empty()).collect();
        if pieces.len() < 2 {
            return None;
        }
        Some(WildcardPattern {
            anchored_start: !pattern.starts_with('%'),
            anchored_end: !pattern.ends_with('%'),
            pieces: pieces
                .iter()
                .map(|p| Finder::new(p.as_bytes()).into_owned())
                .collect(),
        })
    }

    /// Whether `s` matches.
    pub fn matches(&self, s: &[u8]) -> bool {
        let (first, rest) = self.pieces.split_first().expect("two pieces or more");
        let (last, middle) = rest.split_last().expect("two pieces or more");
        let mut at = if self.anchored_start {
            if !s.starts_with(first.needle()) {
                return false;
            }
            first.needle().len()
        } else {
            match first.find(s) {
                Some(i) => i + first.needle().len(),
                None => return false,
            }
        };
        for piece in middle {
            match piece.find(&s[at..]) {
                Some(i) => at += i + piece.needle().len(),
                None => return false,
            }
        }
        let tail = &s[at..];
        if self.anchored_end {
            tail.ends_with(last.needle())
        } else {
            last.find(tail).is_some()
        }
    }

    /// `LIKE` (or with `negated`, `NOT LIKE`) over a string column; nulls
    /// stay null. `None` for a column that is not a string type.
    pub fn evaluate(&self, a: &ArrayRef, negated: bool) -> Option<BooleanArray> {
        let test = |s: &[u8]| self.matches(s) != negated;
        let values = match a.data_type() {
            DataType::Utf8 => {
                let a = a.as_string::<i32>();
                BooleanBuffer::collect_bool(a.len(), |i| test(a.value(i).as_bytes()))
            }
            DataType::LargeUtf8 => {
                let a = a.as_string::<i64>();
                BooleanBuffer::collect_bool(a.len(), |i| test(a.value(i).as_bytes()))
            }
            DataType::Utf8View => {
                let a = a.as_string_view();
                BooleanBuffer::collect_bool(a.len(), |i| test(a.value(i).as_bytes()))
            }
            _ => return None,
        };
        Some(BooleanArray::new(values, a.logical_nulls()))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{StringArray, StringViewArray};
    use arrow::compute::kernels::comparison::{like, nlike};

    use super::*;

    #[test]
    fn agrees_with_arrow_like_on_every_pattern_and_string() {
        let strings = [
            "special requests",
            "specialrequests",
            "requests special",
            "special special requests requests",
            "a special b requests c",
            "specia lrequests",
            "",
            "special",
            "xspecialyrequestsz",
            "requests",
            "é special ü requests ß",
        ];
        let patterns = [
            "%special%requests%",
            "special%requests",
            "special%requests%",
            "%special%requests",
            "%a%b%c%",
            "s%s",
            "%special%special%requests%",
            "%%special%%requests%%",
            "%é%ü%",
        ];
        let column: ArrayRef = Arc::new(
            strings
                .iter()
                .map(|s| Some(*s))
                .chain([None])
                .collect::<StringArray>(),
        );
        let view: ArrayRef = Arc::new(StringViewArray::from_iter(
            strings.iter().map(|s| Some(*s)).chain([None]),
        ));
        for p in patterns {
            let pattern = WildcardPattern::new(p).expect(p);
            let scalar = StringArray::new_scalar(p);
            let want = like(&column, &scalar).unwrap();
            let want_not = nlike(&column, &scalar).unwrap();
            for a in [&column, &view] {
                assert_eq!(pattern.evaluate(a, false).unwrap(), want, "{p}");
                assert_eq!(pattern.evaluate(a, true).unwrap(), want_not, "NOT {p}");
            }
        }
    }

    #[test]
    fn leaves_simple_and_underscore_patterns_to_arrow() {
        for p in [
            "%special%",
            "special%",
            "%special",
            "special",
            "%a_b%c%",
            "%a\\%b%c",
        ] {
            assert!(WildcardPattern::new(p).is_none(), "{p}");
        }
    }
}
