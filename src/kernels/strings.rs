//! String kernels arrow does not have (or has only for some string layouts).
//!
//! They accept `Utf8`, `LargeUtf8` and `Utf8View` and write `Utf8`, except
//! [`substr`], which keeps views as views. Output is appended into one
//! reused buffer per call, not allocated per row.

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

/// The bytes of text the non-null strings of `a` hold, together.
pub fn total_bytes(a: &ArrayRef) -> Result<usize> {
    let mut total = 0;
    for_each_str(a, |v| total += v.map_or(0, str::len))?;
    Ok(total)
}

/// One string column of any layout, read by row.
enum Strings<'a> {
    Utf8(&'a StringArray),
    Large(&'a LargeStringArray),
    View(&'a StringViewArray),
}

impl<'a> Strings<'a> {
    fn new(a: &'a ArrayRef) -> Result<Self> {
        Ok(match a.data_type() {
            DataType::Utf8 => Strings::Utf8(a.as_string::<i32>()),
            DataType::LargeUtf8 => Strings::Large(a.as_string::<i64>()),
            DataType::Utf8View => Strings::View(a.as_string_view()),
            t => {
                return Err(SlothError::types(format!(
                    "expected a string column, got {t}"
                )));
            }
        })
    }

    fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Strings::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::View(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}

/// SQL `a || b || ..` over `rows` rows: each part is a string column, or a
/// constant (one row, `true` beside it) repeated; null where any part is.
pub fn concat(parts: &[(ArrayRef, bool)], rows: usize) -> Result<ArrayRef> {
    let columns = parts
        .iter()
        .map(|(a, constant)| Ok((Strings::new(a)?, *constant)))
        .collect::<Result<Vec<_>>>()?;
    let bytes: usize = parts
        .iter()
        .map(|(a, constant)| {
            let size = a.get_buffer_memory_size();
            if *constant { size * rows } else { size }
        })
        .sum();
    let mut out = StringBuilder::with_capacity(rows, bytes.min(1 << 30));
    let mut buf = String::new();
    'rows: for row in 0..rows {
        buf.clear();
        for (strings, constant) in &columns {
            match strings.get(if *constant { 0 } else { row }) {
                Some(s) => buf.push_str(s),
                None => {
                    out.append_null();
                    continue 'rows;
                }
            }
        }
        out.append_value(&buf);
    }
    Ok(Arc::new(out.finish()))
}

/// SQL `substring(s FROM start FOR len)`: 1-based, in characters; a start
/// below 1 eats into the length, as in PostgreSQL.
///
/// A `Utf8View` column gives a `Utf8View` column of views into the same
/// buffers (a substring of at most 12 bytes inline): nothing is copied or
/// checked again, and a later `IN` list or grouping compares the views
/// whole (TPC-H Q22's `substring(c_phone from 1 for 2) in (...)`). Other
/// string layouts give `Utf8`.
pub fn substr(a: &ArrayRef, start: i64, len: Option<i64>) -> Result<ArrayRef> {
    let (skip, take) = match len {
        Some(l) => {
            let end = start.saturating_add(l.max(0));
            let s = start.max(1);
            ((s - 1) as usize, Some((end - s).max(0) as usize))
        }
        None => ((start.max(1) - 1) as usize, None),
    };
    if let Some(views) = a.as_string_view_opt() {
        return Ok(Arc::new(substr_views(views, skip, take)));
    }
    map_str(a, |s, buf| {
        let (from, to) = char_range(s, skip, take);
        buf.push_str(&s[from..to]);
    })
}

/// The byte range of the `take` characters (all, with `None`) after the
/// first `skip` characters of `s`; empty where `s` is shorter.
fn char_range(s: &str, skip: usize, take: Option<usize>) -> (usize, usize) {
    let b = s.as_bytes();
    let through = take.map_or(skip, |t| skip.saturating_add(t));
    if b[..through.min(b.len())].is_ascii() {
        // Bytes are characters up to `through`: both ends are boundaries.
        let from = skip.min(b.len());
        return (from, take.map_or(b.len(), |_| through.min(b.len())));
    }
    let Some((from, _)) = s.char_indices().nth(skip) else {
        return (s.len(), s.len());
    };
    let to = match take {
        Some(n) => s[from..]
            .char_indices()
            .nth(n)
            .map_or(s.len(), |(i, _)| from + i),
        None => s.len(),
    };
    (from, to)
}

/// [`substr`] over views: each row's view narrowed to its substring.
fn substr_views(a: &StringViewArray, skip: usize, take: Option<usize>) -> StringViewArray {
    use arrow::array::builder::make_view;
    use arrow::buffer::ScalarBuffer;
    let views: ScalarBuffer<u128> = (0..a.len())
        .map(|i| {
            if a.is_null(i) {
                return 0;
            }
            let s = a.value(i);
            let (from, to) = char_range(s, skip, take);
            let part = &s.as_bytes()[from..to];
            if part.len() <= 12 {
                make_view(part, 0, 0)
            } else {
                // Longer than 12 bytes, so the row's own view is not inline
                // either: it names the buffer, and the substring lies in it.
                let view = ByteView::from(a.views()[i]);
                make_view(part, view.buffer_index, view.offset + from as u32)
            }
        })
        .collect();
    // SAFETY: every view is null (for a null row), inline, or names a
    // buffer of `a` and a range inside the row's own string there; each
    // range starts and ends at a character boundary of a UTF-8 string.
    unsafe { StringViewArray::new_unchecked(views, a.data_buffers().to_vec(), a.nulls().cloned()) }
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

    #[test]
    fn substr_of_views_is_substr_of_strings_for_every_range() {
        let rows = [
            Some("+13-555-0100 ext"),
            None,
            Some(""),
            Some("ab"),
            Some("exactly12byt"),
            Some("a string well over twelve bytes"),
            Some("naïve café, crème brûlée"),
            Some("日本語のテキストです、長い"),
        ];
        let views: ArrayRef = Arc::new(StringViewArray::from_iter(rows));
        let plain: ArrayRef = Arc::new(StringArray::from_iter(rows));
        for start in [-2, 0, 1, 2, 5, 13, 40] {
            for len in [
                None,
                Some(0),
                Some(1),
                Some(2),
                Some(12),
                Some(13),
                Some(30),
            ] {
                let got = substr(&views, start, len).unwrap();
                assert_eq!(got.data_type(), &DataType::Utf8View);
                let want = substr(&plain, start, len).unwrap();
                let got = arrow::compute::cast(&got, &DataType::Utf8).unwrap();
                assert_eq!(&got, &want, "start {start}, len {len:?}");
                // The character-by-character reference.
                for (i, r) in rows.iter().enumerate() {
                    let skip = (start.max(1) - 1) as usize;
                    let take = len.map(|l| (start + l - start.max(1)).max(0) as usize);
                    let expect: Option<String> = r.map(|s| {
                        s.chars()
                            .skip(skip)
                            .take(take.unwrap_or(usize::MAX))
                            .collect()
                    });
                    assert_eq!(
                        want.as_string::<i32>().iter().nth(i).unwrap(),
                        expect.as_deref()
                    );
                }
            }
        }
    }
}

/// `strpos(s, sub)` of every row: the 1-based character position of the
/// first `sub`, 0 where there is none (1 for an empty `sub`).
pub fn strpos(a: &ArrayRef, sub: &str) -> Result<ArrayRef> {
    let mut out = Int64Builder::with_capacity(a.len());
    for_each_str(a, |v| {
        out.append_option(v.map(|s| match s.find(sub) {
            Some(byte) => s[..byte].chars().count() as i64 + 1,
            None => 0,
        }))
    })?;
    Ok(Arc::new(out.finish()))
}

/// The byte offset after the first `n` characters of `s` (its length if
/// it has fewer).
fn char_offset(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// `left(s, n)`: the first `n` characters; all but the last `-n` if `n < 0`.
pub fn left(s: &str, n: i64) -> &str {
    let keep = if n >= 0 {
        n as usize
    } else {
        s.chars().count().saturating_sub(n.unsigned_abs() as usize)
    };
    &s[..char_offset(s, keep)]
}

/// `right(s, n)`: the last `n` characters; all but the first `-n` if `n < 0`.
pub fn right(s: &str, n: i64) -> &str {
    let skip = if n >= 0 {
        s.chars().count().saturating_sub(n as usize)
    } else {
        n.unsigned_abs() as usize
    };
    &s[char_offset(s, skip)..]
}

/// `lpad` / `rpad(s, n, fill)` into `buf`: `s` cut to `n` characters, or
/// filled to `n` with repeats of `fill` (on the left for `lpad`). An empty
/// `fill` cannot fill, so `s` stays as it is, as in PostgreSQL.
pub fn pad(s: &str, n: i64, fill: &str, on_left: bool, buf: &mut String) {
    let n = n.max(0) as usize;
    let len = s.chars().count();
    if len >= n || fill.is_empty() {
        buf.push_str(&s[..char_offset(s, n)]);
        return;
    }
    let filler = fill.chars().cycle().take(n - len);
    if on_left {
        buf.extend(filler);
        buf.push_str(s);
    } else {
        buf.push_str(s);
        buf.extend(filler);
    }
}

/// `split_part(s, delimiter, n)`: the `n`-th field (1-based; from the end
/// when `n < 0`), or '' where there is none. An empty delimiter leaves one
/// field, `s`.
pub fn split_part<'s>(s: &'s str, delimiter: &str, n: i64) -> &'s str {
    let k = (n.unsigned_abs() as usize).saturating_sub(1);
    match (n, delimiter.is_empty()) {
        (0, _) => "",
        (1 | -1, true) => s,
        (_, true) => "",
        (n, false) if n > 0 => s.split(delimiter).nth(k).unwrap_or(""),
        _ => s.rsplit(delimiter).nth(k).unwrap_or(""),
    }
}

#[cfg(test)]
mod text_function_tests {
    use super::*;

    #[test]
    fn left_right_pad_and_split_count_characters_not_bytes() {
        assert_eq!(left("héllo", 2), "hé");
        assert_eq!(left("abcd", -1), "abc");
        assert_eq!(left("ab", 9), "ab");
        assert_eq!(right("héllo", 3), "llo");
        assert_eq!(right("abcd", -1), "bcd");
        assert_eq!(right("abcd", -9), "");
        let padded = |s, n, fill, l| {
            let mut b = String::new();
            pad(s, n, fill, l, &mut b);
            b
        };
        assert_eq!(padded("7", 4, "ab", true), "aba7");
        assert_eq!(padded("é", 3, "-", false), "é--");
        assert_eq!(padded("hello", 3, "x", true), "hel");
        assert_eq!(padded("hi", 5, "", true), "hi");
        assert_eq!(split_part("a,b,c", ",", 2), "b");
        assert_eq!(split_part("a,b,c", ",", -1), "c");
        assert_eq!(split_part("a,b,c", ",", 5), "");
        assert_eq!(split_part("a,,c", ",", 2), "");
        assert_eq!(split_part("abc", "", 1), "abc");
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("abcb"), None, Some("héb")]));
        let p = strpos(&a, "b").unwrap();
        assert_eq!(
            p.as_primitive::<arrow::datatypes::Int64Type>()
                .iter()
                .collect::<Vec<_>>(),
            [Some(2), None, Some(3)]
        );
    }
}
