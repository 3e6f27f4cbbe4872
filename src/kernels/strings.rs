//! String kernels arrow does not have (or has only for some string layouts).
//!
//! They accept `Utf8`, `LargeUtf8` and `Utf8View` and write `Utf8`. Output is
//! appended into one reused buffer per call, not allocated per row.

use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::DataType;

use crate::error::{Result, SlothError};

fn for_each_str(a: &ArrayRef, mut f: impl FnMut(Option<&str>)) -> Result<()> {
    match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().iter().for_each(&mut f),
        DataType::LargeUtf8 => a.as_string::<i64>().iter().for_each(&mut f),
        DataType::Utf8View => a.as_string_view().iter().for_each(&mut f),
        DataType::Null => (0..a.len()).for_each(|_| f(None)),
        t => {
            return Err(SlothError::types(format!(
                "expected a string column, got {t}"
            )));
        }
    }
    Ok(())
}

/// Applies `f` to each non-null string; `f` appends the result to the buffer.
pub fn map_str(a: &ArrayRef, mut f: impl FnMut(&str, &mut String)) -> Result<ArrayRef> {
    let mut out = StringBuilder::with_capacity(a.len(), a.get_buffer_memory_size());
    let mut buf = String::new();
    for_each_str(a, |v| match v {
        Some(s) => {
            buf.clear();
            f(s, &mut buf);
            out.append_value(&buf);
        }
        None => out.append_null(),
    })?;
    Ok(Arc::new(out.finish()))
}

/// SQL `substring(s FROM start FOR len)`: 1-based, in characters; a start
/// below 1 eats into the length, as in PostgreSQL.
pub fn substr(a: &ArrayRef, start: i64, len: Option<i64>) -> Result<ArrayRef> {
    let (skip, take) = match len {
        Some(l) => {
            let end = start.saturating_add(l.max(0));
            let s = start.max(1);
            ((s - 1) as usize, Some((end - s).max(0) as usize))
        }
        None => ((start.max(1) - 1) as usize, None),
    };
    map_str(a, |s, buf| {
        let mut chars = s.char_indices().skip(skip);
        let Some((from, _)) = chars.next() else {
            return;
        };
        let to = match take {
            Some(0) => from,
            Some(n) => s[from..]
                .char_indices()
                .nth(n)
                .map(|(i, _)| from + i)
                .unwrap_or(s.len()),
            None => s.len(),
        };
        buf.push_str(&s[from..to]);
    })
}

/// Length in characters.
pub fn char_length(a: &ArrayRef) -> Result<ArrayRef> {
    let mut out = Int64Builder::with_capacity(a.len());
    for_each_str(a, |v| {
        out.append_option(v.map(|s| s.chars().count() as i64))
    })?;
    Ok(Arc::new(out.finish()))
}

/// `a = ANY(literals)` over a string-view column, row by row on the views.
///
/// A view is 16 bytes: the length, then the whole string when it is at most
/// 12 bytes, else a 4-byte prefix and where the rest lives. A literal of at
/// most 12 bytes equals a row exactly when their views are equal, so one
/// 128-bit comparison per literal decides; a longer literal is compared in
/// full only where length and prefix match. arrow's `eq` goes through a
/// per-row closure per literal and an OR per literal after the first (18% of
/// TPC-H Q12's samples for `l_shipmode IN ('MAIL', 'SHIP')`).
///
/// Nulls stay null, as with `eq`.
pub fn view_eq_any(a: &StringViewArray, literals: &[&str]) -> BooleanArray {
    let inline: Vec<u128> = literals
        .iter()
        .filter(|l| l.len() <= 12)
        .map(|l| make_view(l.as_bytes(), 0, 0))
        .collect();
    // Length and prefix (the view's low 64 bits) of each longer literal.
    let long: Vec<(u64, &str)> = literals
        .iter()
        .filter(|l| l.len() > 12)
        .map(|l| (make_view(l.as_bytes(), 0, 0) as u64, *l))
        .collect();
    let views = a.views();
    let values = if long.is_empty() {
        arrow::buffer::BooleanBuffer::collect_bool(views.len(), |i| {
            inline.iter().any(|&v| views[i] == v)
        })
    } else {
        arrow::buffer::BooleanBuffer::collect_bool(views.len(), |i| {
            let v = views[i];
            inline.contains(&v)
                || long
                    .iter()
                    .any(|&(head, l)| v as u64 == head && a.value(i) == l)
        })
    };
    BooleanArray::new(values, a.nulls().cloned())
}

#[cfg(test)]
mod view_tests {
    use super::*;

    #[test]
    fn view_eq_any_matches_arrow_eq_for_short_and_long_strings() {
        let rows = [
            Some("MAIL"),
            None,
            Some(""),
            Some("SHIP"),
            Some("MAILX"),
            Some("exactly12byt"),
            Some("a string well over twelve bytes"),
            Some("a string well over twelve bytes!"),
            Some("a string well over twelve"),
            Some("a stranger"),
        ];
        let a = StringViewArray::from_iter(rows);
        let lists: [&[&str]; 5] = [
            &["MAIL", "SHIP"],
            &[""],
            &["exactly12byt", "a string well over twelve bytes"],
            &["a string well over twelve bytes!", "nope"],
            &[],
        ];
        for list in lists {
            let got = view_eq_any(&a, list);
            let want: BooleanArray = rows.iter().map(|r| r.map(|s| list.contains(&s))).collect();
            assert_eq!(got, want, "{list:?}");
        }
    }
}
