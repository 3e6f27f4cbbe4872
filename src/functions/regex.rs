//! Regular expressions (Rust's `regex` syntax, as DataFusion's):
//! `regexp_matches(s, pattern)` / `regexp_like` (whether the pattern occurs
//! in `s`) and `regexp_replace(s, pattern, replacement [, flags])` (the
//! first match replaced, or every one with the flag `g`; `$1` names a
//! group) and `regexp_extract(s, pattern [, group])` (DuckDB's: the first
//! match, or its group, '' without a match). Patterns and flags are
//! constants, compiled once per batch.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray};
use arrow::datatypes::DataType;
use regex::Regex;

use super::on_first;
use crate::error::{Result, SlothError};
use crate::expr::function::{
    ArgType, ColumnarValue, Signature, check_arity, constant_string, need_string,
};
use crate::expr::{ScalarFunc, ScalarFunction};
use crate::kernels::strings;

pub(super) fn functions() -> Vec<ScalarFunc> {
    vec![REGEXP_MATCHES, REGEXP_REPLACE, REGEXP_EXTRACT]
}

/// Whether `pattern` occurs in `s`.
pub const REGEXP_MATCHES: ScalarFunc = ScalarFunc::new(&RegexpMatches);
/// `s` with the first match of `pattern` (every one with flag `g`) replaced.
pub const REGEXP_REPLACE: ScalarFunc = ScalarFunc::new(&RegexpReplace);

/// The first match of `pattern` in `s` (group `n` of it, 0: the whole
/// match), '' without one.
pub const REGEXP_EXTRACT: ScalarFunc = ScalarFunc::new(&RegexpExtract);

/// The constant text argument `i`; `None` for a null.
fn text(name: &str, args: &[ColumnarValue], i: usize) -> Result<Option<String>> {
    constant_string(args[i].array())
        .ok_or_else(|| SlothError::types(format!("{name}() takes text constants")))
}

/// The compiled pattern, with the flags `i` (case-insensitive) applied.
fn compile(name: &str, pattern: &str, flags: &str) -> Result<Regex> {
    let pattern = if flags.contains('i') {
        format!("(?i){pattern}")
    } else {
        pattern.to_string()
    };
    Regex::new(&pattern).map_err(|e| SlothError::plan(format!("{name}(): bad pattern: {e}")))
}

/// Checks a string first argument and constant others.
fn check(name: &str, args: &[ArgType], min: usize, max: usize) -> Result<()> {
    check_arity(name, args.len(), min, max)?;
    need_string(name, args[0].data_type)?;
    if args[1..].iter().any(|a| a.constant.is_none()) {
        return Err(SlothError::unsupported(format!(
            "{name}() pattern, replacement and flags must be constants"
        )));
    }
    Ok(())
}

#[derive(Debug)]
struct RegexpMatches;

impl ScalarFunction for RegexpMatches {
    fn names(&self) -> &'static [&'static str] {
        &["regexp_matches", "regexp_like"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check(self.name(), args, 2, 3)?;
        Ok(Signature::all_cast(
            args.len(),
            DataType::Utf8,
            DataType::Boolean,
        ))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        let (Some(pattern), flags) = (text(self.name(), args, 1)?, args.get(2)) else {
            return on_first(args, |a| {
                Ok(arrow::array::new_null_array(&DataType::Boolean, a.len()))
            });
        };
        let flags = match flags {
            Some(_) => text(self.name(), args, 2)?.unwrap_or_default(),
            None => String::new(),
        };
        let regex = compile(self.name(), &pattern, &flags)?;
        on_first(args, |a| {
            let a = arrow::compute::cast(a, &DataType::Utf8)?;
            let out: BooleanArray = arrow::array::AsArray::as_string::<i32>(&a)
                .iter()
                .map(|s| s.map(|s| regex.is_match(s)))
                .collect();
            Ok(Arc::new(out) as ArrayRef)
        })
    }
}

#[derive(Debug)]
struct RegexpReplace;

impl ScalarFunction for RegexpReplace {
    fn names(&self) -> &'static [&'static str] {
        &["regexp_replace"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check(self.name(), args, 3, 4)?;
        Ok(Signature::all_cast(
            args.len(),
            DataType::Utf8,
            DataType::Utf8,
        ))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        let pattern = text(self.name(), args, 1)?;
        let replacement = text(self.name(), args, 2)?;
        let (Some(pattern), Some(replacement)) = (pattern, replacement) else {
            return on_first(args, |a| {
                Ok(arrow::array::new_null_array(&DataType::Utf8, a.len()))
            });
        };
        let flags = match args.get(3) {
            Some(_) => text(self.name(), args, 3)?.unwrap_or_default(),
            None => String::new(),
        };
        let regex = compile(self.name(), &pattern, &flags)?;
        let every = flags.contains('g');
        on_first(args, |a| {
            strings::map_str(a, |s, buf| {
                let replaced = if every {
                    regex.replace_all(s, replacement.as_str())
                } else {
                    regex.replace(s, replacement.as_str())
                };
                buf.push_str(&replaced)
            })
        })
    }
}

#[derive(Debug)]
struct RegexpExtract;

impl ScalarFunction for RegexpExtract {
    fn names(&self) -> &'static [&'static str] {
        &["regexp_extract"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check(self.name(), args, 2, 3)?;
        let mut casts = vec![Some(DataType::Utf8), Some(DataType::Utf8)];
        casts.extend(args.get(2).map(|_| Some(DataType::Int64)));
        Ok(Signature {
            casts,
            output: DataType::Utf8,
        })
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        let Some(pattern) = text(self.name(), args, 1)? else {
            return on_first(args, |a| {
                Ok(arrow::array::new_null_array(&DataType::Utf8, a.len()))
            });
        };
        let group = match args.get(2) {
            Some(g) => usize::try_from(crate::expr::function::constant_i64(g.array())?)
                .map_err(|_| SlothError::plan("regexp_extract() group is not negative"))?,
            None => 0,
        };
        let regex = compile(self.name(), &pattern, "")?;
        if group >= regex.captures_len() {
            return Err(SlothError::plan(format!(
                "regexp_extract(): the pattern has no group {group}"
            )));
        }
        on_first(args, |a| {
            strings::map_str(a, |s, buf| {
                if let Some(m) = regex.captures(s).and_then(|c| c.get(group)) {
                    buf.push_str(m.as_str());
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Expr, col, lit};
    use crate::functions::test_util::{eval, strings, try_eval};
    use arrow::array::{Array, AsArray};

    #[test]
    fn extract_takes_the_first_match_or_its_group() {
        let s = [("s", strings(&[Some("id 12, id 7"), Some("none"), None]))];
        let extract = |args: Vec<Expr>| {
            let mut all = vec![col("s")];
            all.extend(args);
            let out = eval(Expr::Function(REGEXP_EXTRACT, all), &s);
            let out = out.as_string::<i32>();
            (
                out.value(0).to_string(),
                out.value(1).to_string(),
                out.is_null(2),
            )
        };
        assert_eq!(extract(vec![lit("[0-9]+")]), ("12".into(), "".into(), true));
        assert_eq!(
            extract(vec![lit("id ([0-9])([0-9]*)"), lit(2)]),
            ("2".into(), "".into(), true)
        );
        let bad = Expr::Function(REGEXP_EXTRACT, vec![col("s"), lit("a(b)"), lit(2)]);
        assert!(
            try_eval(bad, &s)
                .unwrap_err()
                .to_string()
                .contains("no group 2")
        );
    }

    #[test]
    fn matches_and_replacements_with_flags_and_nulls() {
        let s = [("s", strings(&[Some("Order 12, order 7"), None]))];
        let matches = |pattern: &str, flags: &str| {
            let call = Expr::Function(REGEXP_MATCHES, vec![col("s"), lit(pattern), lit(flags)]);
            let out = eval(call, &s);
            (out.as_boolean().value(0), out.is_null(1))
        };
        assert_eq!(matches("^order", ""), (false, true));
        assert_eq!(matches("^order", "i"), (true, true));
        let replace = |flags: &str| {
            let call = Expr::Function(
                REGEXP_REPLACE,
                vec![col("s"), lit("([0-9]+)"), lit("#$1"), lit(flags)],
            );
            eval(call, &s).as_string::<i32>().value(0).to_string()
        };
        assert_eq!(replace(""), "Order #12, order 7");
        assert_eq!(replace("g"), "Order #12, order #7");
        let bad = try_eval(Expr::Function(REGEXP_MATCHES, vec![col("s"), lit("(")]), &s);
        assert!(bad.unwrap_err().to_string().contains("bad pattern"));
    }
}
