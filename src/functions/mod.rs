//! The function registry: every scalar function sloth runs, one file per
//! family, each function one type implementing
//! [`ScalarFunction`](crate::expr::ScalarFunction).
//!
//! A function's file holds all there is to know about it: its SQL names,
//! the types it takes and returns, its columnar kernel, its row-at-a-time
//! form (where it has one), the `Expr` builder the Rust API offers for it,
//! and its tests. The SQL front end finds it by name ([`lookup`]), the
//! expression compiler asks it for its signature, and both executors call
//! it. Adding a function to a family is a change to that family's file
//! alone: a type, its entry in the family's `functions()`, and a test
//! (see `docs/extending.md`).

/// `Expr` builders for functions of one argument, `col("a").name()`.
macro_rules! unary_builders {
    ($($(#[$doc:meta])* $name:ident => $func:expr;)*) => {
        impl crate::expr::Expr {
            $(
                $(#[$doc])*
                pub fn $name(self) -> crate::expr::Expr {
                    crate::expr::Expr::Function($func, vec![self])
                }
            )*
        }
    };
}
use unary_builders;

mod bitwise;
mod conditional;
mod datetime;
mod digest;
mod grouping;
mod math;
mod pattern;
mod regex;
mod string;

use std::collections::HashMap;
use std::sync::OnceLock;

use arrow::array::ArrayRef;

use crate::error::Result;
use crate::expr::ScalarFunc;
use crate::expr::function::{ColumnarValue, repeat_scalar};

pub use bitwise::{BIT_AND, BIT_OR, SHIFT_LEFT, SHIFT_RIGHT, XOR};
pub use conditional::{COALESCE, GREATEST, LEAST, SCALAR_SUBQUERY_VALUE};
pub use datetime::{DATE_TRUNC, DAY, DAY_OF_WEEK, DAY_OF_YEAR, MONTH, QUARTER, YEAR};
pub use grouping::GROUPING;
pub use math::{ABS, CEIL, FLOOR, LOG10, POWER, ROUND, SIGN, TRUNC};
pub use pattern::{CONTAINS, ENDS_WITH, LIKE, NOT_LIKE, STARTS_WITH};
pub use regex::REGEXP_MATCHES;
pub use string::{
    CONCAT, LEFT, LENGTH, LOWER, LPAD, LTRIM, OCTET_LENGTH, REPEAT, REPLACE, REVERSE, RIGHT, RPAD,
    RTRIM, SPLIT_PART, STRPOS, SUBSTR, TRIM, UPPER,
};

/// Every registered function, family by family.
pub fn all() -> Vec<ScalarFunc> {
    [
        pattern::functions(),
        string::functions(),
        datetime::functions(),
        math::functions(),
        conditional::functions(),
        regex::functions(),
        digest::functions(),
        bitwise::functions(),
        grouping::functions(),
    ]
    .concat()
}

/// The function SQL calls `name` (lower case), if there is one.
pub fn lookup(name: &str) -> Option<ScalarFunc> {
    static BY_NAME: OnceLock<HashMap<&'static str, ScalarFunc>> = OnceLock::new();
    BY_NAME
        .get_or_init(|| {
            all()
                .into_iter()
                .filter(|f| !f.function().planner_only())
                .flat_map(|f| f.function().names().iter().map(move |n| (*n, f)))
                .collect()
        })
        .get(name)
        .copied()
}

/// Runs `kernel` over the first argument; the result is a constant when
/// that argument is one.
fn on_first(
    args: &[ColumnarValue],
    kernel: impl FnOnce(&ArrayRef) -> Result<ArrayRef>,
) -> Result<ColumnarValue> {
    let first = &args[0];
    Ok(ColumnarValue::wrap(
        kernel(first.array())?,
        first.is_scalar(),
    ))
}

/// The arguments as arrays of one length (`rows`, or 1 when all are
/// constants), and whether all are constants.
fn aligned(args: &[ColumnarValue], rows: usize) -> Result<(Vec<ArrayRef>, bool)> {
    let all_scalar = args.iter().all(ColumnarValue::is_scalar);
    let len = if all_scalar { 1 } else { rows };
    let arrays = args
        .iter()
        .map(|v| match v {
            ColumnarValue::Scalar(a) if len != 1 => repeat_scalar(a, len),
            other => Ok(other.array().clone()),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((arrays, all_scalar))
}

/// Helpers for the families' tests: a function run through the compiler
/// and the columnar evaluator.
#[cfg(test)]
pub(crate) mod test_util {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, RecordBatch, StringArray};

    use crate::expr::Expr;
    use crate::physical_expr::PhysicalExpr;
    use crate::physical_expr::eval::evaluate_array;

    /// `expr` evaluated over a batch of these columns.
    pub fn eval(expr: Expr, columns: &[(&str, ArrayRef)]) -> ArrayRef {
        try_eval(expr, columns).unwrap()
    }

    /// `expr` evaluated over a batch of these columns, or its error.
    pub fn try_eval(expr: Expr, columns: &[(&str, ArrayRef)]) -> crate::Result<ArrayRef> {
        let batch = RecordBatch::try_from_iter(columns.iter().cloned())?;
        let compiled = PhysicalExpr::compile(&expr, &batch.schema())?;
        evaluate_array(&compiled, &batch)
    }

    /// A Utf8 column.
    pub fn strings(values: &[Option<&str>]) -> ArrayRef {
        Arc::new(StringArray::from(values.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_every_sql_name_finds_its_function() {
        let functions = all();
        let names: HashSet<&str> = functions.iter().map(|f| f.name()).collect();
        assert_eq!(names.len(), functions.len(), "two functions share a name");
        let mut sql_names = HashSet::new();
        for f in &functions {
            if f.function().planner_only() {
                assert_eq!(lookup(f.name()), None, "{} is not SQL's", f.name());
                continue;
            }
            for n in f.function().names() {
                assert!(sql_names.insert(*n), "SQL name '{n}' is taken twice");
                assert_eq!(lookup(n), Some(*f));
            }
        }
        assert_eq!(lookup("no_such_function"), None);
    }
}
