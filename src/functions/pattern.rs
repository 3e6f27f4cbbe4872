//! Pattern tests on strings: `contains`, `starts_with`, `ends_with`,
//! `like` and `not_like` (SQL's `LIKE` with `%` and `_`).
//!
//! A constant LIKE pattern over a column runs through
//! [`WildcardPattern`] (memchr substring search); anything else through
//! arrow's comparison kernels.

use std::sync::Arc;

use arrow::compute::kernels::comparison;
use arrow::datatypes::DataType;

use crate::error::Result;
use crate::expr::function::{
    ArgType, ColumnarValue, Signature, check_arity, constant_str, need_string,
};
use crate::expr::value::Value;
use crate::expr::{Expr, ScalarFunc, ScalarFunction};
use crate::kernels::like::WildcardPattern;

/// Which test a [`Pattern`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    Contains,
    StartsWith,
    EndsWith,
    Like,
    NotLike,
}

/// A two-argument string test: `test(s, pattern)`.
#[derive(Debug)]
pub struct Pattern {
    names: &'static [&'static str],
    test: Test,
}

/// `contains(s, pattern)`: substring test.
pub const CONTAINS: ScalarFunc = ScalarFunc::new(&Pattern {
    names: &["contains"],
    test: Test::Contains,
});
/// `starts_with(s, prefix)`.
pub const STARTS_WITH: ScalarFunc = ScalarFunc::new(&Pattern {
    names: &["starts_with"],
    test: Test::StartsWith,
});
/// `ends_with(s, suffix)`.
pub const ENDS_WITH: ScalarFunc = ScalarFunc::new(&Pattern {
    names: &["ends_with"],
    test: Test::EndsWith,
});
/// `s LIKE pattern`.
pub const LIKE: ScalarFunc = ScalarFunc::new(&Pattern {
    names: &["like"],
    test: Test::Like,
});
/// `s NOT LIKE pattern`.
pub const NOT_LIKE: ScalarFunc = ScalarFunc::new(&Pattern {
    names: &["not_like"],
    test: Test::NotLike,
});

pub(super) fn functions() -> Vec<ScalarFunc> {
    vec![CONTAINS, STARTS_WITH, ENDS_WITH, LIKE, NOT_LIKE]
}

impl ScalarFunction for Pattern {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }
    // LIKE is SQL's operator, not a function it calls by name.
    fn planner_only(&self) -> bool {
        matches!(self.test, Test::Like | Test::NotLike)
    }

    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity(self.name(), args.len(), 2, 2)?;
        need_string(self.name(), args[0].data_type)?;
        need_string(self.name(), args[1].data_type)?;
        // Both operands in the subject's string type: arrow's kernels want
        // equal types.
        let t = match args[0].data_type {
            DataType::Null => DataType::Utf8,
            t => t.clone(),
        };
        Ok(Signature::all_cast(2, t, DataType::Boolean))
    }

    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        let (subject, pattern) = (&args[0], &args[1]);
        let negated = self.test == Test::NotLike;
        if let (Test::Like | Test::NotLike, ColumnarValue::Array(a), ColumnarValue::Scalar(p)) =
            (self.test, subject, pattern)
            && let Some(wildcards) = constant_str(p).and_then(WildcardPattern::new)
            && let Some(r) = wildcards.evaluate(a, negated)
        {
            return Ok(ColumnarValue::Array(Arc::new(r)));
        }
        let (a, p) = (subject.datum(), pattern.datum());
        let (a, p) = (&*a, &*p);
        let r = match self.test {
            Test::Contains => comparison::contains(a, p)?,
            Test::StartsWith => comparison::starts_with(a, p)?,
            Test::EndsWith => comparison::ends_with(a, p)?,
            Test::Like => comparison::like(a, p)?,
            Test::NotLike => comparison::nlike(a, p)?,
        };
        let constant = subject.is_scalar() && pattern.is_scalar();
        Ok(ColumnarValue::wrap(Arc::new(r), constant))
    }

    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        let (Value::Str(s), Value::Str(p)) = (&args[0], &args[1]) else {
            return Some(Ok(Value::Null));
        };
        Some(Ok(Value::Bool(match self.test {
            Test::Contains => s.contains(p.as_ref()),
            Test::StartsWith => s.starts_with(p.as_ref()),
            Test::EndsWith => s.ends_with(p.as_ref()),
            Test::Like => like(s.as_bytes(), p.as_bytes()),
            Test::NotLike => !like(s.as_bytes(), p.as_bytes()),
        })))
    }
}

/// SQL LIKE with `%` and `_` (backslash escapes aside), by backtracking:
/// the row-at-a-time form, written apart from the columnar kernels so the
/// two check each other.
fn like(s: &[u8], p: &[u8]) -> bool {
    let (mut si, mut pi) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'_' || p[pi] == s[si]) {
            si += 1;
            pi += 1;
        } else if pi < p.len() && p[pi] == b'%' {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(sp) = star {
            pi = sp + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'%' {
        pi += 1;
    }
    pi == p.len()
}

impl Expr {
    /// Substring test.
    pub fn contains(self, pattern: impl Into<Expr>) -> Expr {
        Expr::Function(CONTAINS, vec![self, pattern.into()])
    }
    /// Prefix test.
    pub fn starts_with(self, prefix: impl Into<Expr>) -> Expr {
        Expr::Function(STARTS_WITH, vec![self, prefix.into()])
    }
    /// Suffix test.
    pub fn ends_with(self, suffix: impl Into<Expr>) -> Expr {
        Expr::Function(ENDS_WITH, vec![self, suffix.into()])
    }
    /// SQL `LIKE` with `%` and `_`.
    pub fn like(self, pattern: impl Into<Expr>) -> Expr {
        Expr::Function(LIKE, vec![self, pattern.into()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{col, lit};
    use crate::functions::test_util::{eval, strings};

    #[test]
    fn like_matches_sql() {
        assert!(like(b"PROMO BRUSHED", b"PROMO%"));
        assert!(like(b"abc", b"a_c"));
        assert!(like(b"special requests", b"%special%requests%"));
        assert!(!like(b"specialrequest", b"%special%requests%"));
        assert!(like(b"", b"%"));
        assert!(!like(b"ab", b"a"));
    }

    #[test]
    fn columnar_and_row_forms_agree_with_nulls() {
        let s = strings(&[Some("apple pie"), None, Some("pineapple"), Some("")]);
        for (f, pattern) in [
            (LIKE, "%apple%"),
            (NOT_LIKE, "_ine%"),
            (CONTAINS, "pie"),
            (STARTS_WITH, "pine"),
            (ENDS_WITH, "pie"),
        ] {
            let out = eval(
                Expr::Function(f, vec![col("s"), lit(pattern)]),
                &[("s", s.clone())],
            );
            for (i, v) in ["apple pie", "", "pineapple", ""].iter().enumerate() {
                let cell = Value::from_array(out.as_ref(), i).unwrap();
                let input = if i == 1 {
                    Value::Null
                } else {
                    Value::Str((*v).into())
                };
                let row = f
                    .function()
                    .invoke_row(&[input, Value::Str(pattern.into())])
                    .unwrap()
                    .unwrap();
                assert_eq!(
                    format!("{cell:?}"),
                    format!("{row:?}"),
                    "{} row {i}",
                    f.name()
                );
            }
        }
    }
}
