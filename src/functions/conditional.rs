//! Functions that choose among their arguments: `coalesce`, `greatest`,
//! `least`, and the planner's check that a scalar subquery gave at most
//! one row.
//!
//! `coalesce`, `greatest` and `least` take any number of arguments of
//! compatible types and return their common type; `greatest` and `least`
//! skip nulls (null only where every argument is), as PostgreSQL and
//! DuckDB do.

use arrow::array::{Array, AsArray};
use arrow::compute::kernels::zip::zip;
use arrow::datatypes::{DataType, Int64Type};

use super::aligned;
use crate::error::{Result, SlothError};
use crate::expr::common_type_of_values;
use crate::expr::function::{ArgType, ColumnarValue, Signature, check_arity, is_stringish};
use crate::expr::value::Value;
use crate::expr::{ScalarFunc, ScalarFunction};
use crate::kernels::math;

pub(super) fn functions() -> Vec<ScalarFunc> {
    vec![COALESCE, GREATEST, LEAST, SCALAR_SUBQUERY_VALUE]
}

/// The first non-null argument.
pub const COALESCE: ScalarFunc = ScalarFunc::new(&Choose {
    pick: Pick::FirstNonNull,
});
/// The largest non-null argument (null if all are).
pub const GREATEST: ScalarFunc = ScalarFunc::new(&Choose {
    pick: Pick::Greatest,
});
/// The smallest non-null argument.
pub const LEAST: ScalarFunc = ScalarFunc::new(&Choose { pick: Pick::Least });
/// `(rows, value)`: `value`, or an error where `rows` is above 1: the
/// check that a scalar subquery gave at most one row (planned, never
/// called from SQL).
pub const SCALAR_SUBQUERY_VALUE: ScalarFunc = ScalarFunc::new(&ScalarSubqueryValue);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pick {
    FirstNonNull,
    Greatest,
    Least,
}

/// One of several arguments of a common type.
#[derive(Debug)]
struct Choose {
    pick: Pick,
}

impl ScalarFunction for Choose {
    // They choose among the values: nulls are passed over.
    fn strict(&self) -> bool {
        false
    }
    fn names(&self) -> &'static [&'static str] {
        match self.pick {
            Pick::FirstNonNull => &["coalesce"],
            Pick::Greatest => &["greatest"],
            Pick::Least => &["least"],
        }
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        if args.is_empty() {
            return Err(SlothError::plan(format!(
                "{}() needs at least one argument",
                self.name()
            )));
        }
        let values: Vec<(&DataType, bool)> = args
            .iter()
            .map(|a| {
                (
                    a.data_type,
                    a.constant.is_some() && is_stringish(a.data_type),
                )
            })
            .collect();
        let t = common_type_of_values(&values).ok_or_else(|| {
            let types: Vec<String> = args.iter().map(|a| a.data_type.to_string()).collect();
            SlothError::types(format!(
                "{}() arguments have incompatible types {}",
                self.name(),
                types.join(", ")
            ))
        })?;
        Ok(Signature::all_cast(args.len(), t.clone(), t))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, rows: usize) -> Result<ColumnarValue> {
        let (arrays, constant) = aligned(args, rows)?;
        let out = match self.pick {
            Pick::Greatest | Pick::Least => math::extreme(&arrays, self.pick == Pick::Greatest)?,
            Pick::FirstNonNull => {
                let mut acc = arrays[0].clone();
                for next in &arrays[1..] {
                    if acc.null_count() == 0 {
                        break;
                    }
                    let present = arrow::compute::is_not_null(&acc)?;
                    acc = zip(&present, &acc, next)?;
                }
                acc
            }
        };
        Ok(ColumnarValue::wrap(out, constant))
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        match self.pick {
            Pick::FirstNonNull => Some(Ok(args
                .iter()
                .find(|v| !v.is_null())
                .cloned()
                .unwrap_or(Value::Null))),
            // Compared as their common type by the columnar kernel.
            Pick::Greatest | Pick::Least => None,
        }
    }
}

#[derive(Debug)]
struct ScalarSubqueryValue;

impl ScalarFunction for ScalarSubqueryValue {
    // More than one row is an error whatever the value.
    fn strict(&self) -> bool {
        false
    }
    fn names(&self) -> &'static [&'static str] {
        &["scalar_subquery_value"]
    }
    fn planner_only(&self) -> bool {
        true
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity(self.name(), args.len(), 2, 2)?;
        Ok(Signature::returning(2, args[1].data_type.clone()))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        let rows = arrow::compute::cast(args[0].array(), &DataType::Int64)?;
        if arrow::compute::max(rows.as_primitive::<Int64Type>()).unwrap_or(0) > 1 {
            return Err(too_many_rows());
        }
        Ok(args[1].clone())
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        Some(match args[0] {
            Value::Int(n) if n > 1 => Err(too_many_rows()),
            _ => Ok(args[1].clone()),
        })
    }
}

fn too_many_rows() -> SlothError {
    SlothError::Data("a scalar subquery returned more than one row".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Expr, ScalarValue, col, lit};
    use crate::functions::test_util::eval;
    use arrow::array::{ArrayRef, Int64Array};
    use std::sync::Arc;

    fn ints(v: &[Option<i64>]) -> ArrayRef {
        Arc::new(Int64Array::from(v.to_vec()))
    }

    #[test]
    fn a_null_constant_first_still_gives_one_value_per_row() {
        let a = ints(&[None, Some(2), None]);
        let call = Expr::Function(COALESCE, vec![lit(ScalarValue::Null), col("a"), lit(7i64)]);
        let out = eval(call, &[("a", a)]);
        let out: Vec<_> = out.as_primitive::<Int64Type>().iter().collect();
        assert_eq!(out, vec![Some(7), Some(2), Some(7)]);
    }

    #[test]
    fn greatest_and_least_skip_nulls() {
        let (a, b) = (
            ints(&[Some(1), None, None]),
            ints(&[Some(5), Some(3), None]),
        );
        let columns = [("a", a), ("b", b)];
        let run = |f| {
            let out = eval(Expr::Function(f, vec![col("a"), col("b")]), &columns);
            out.as_primitive::<Int64Type>().iter().collect::<Vec<_>>()
        };
        assert_eq!(run(GREATEST), vec![Some(5), Some(3), None]);
        assert_eq!(run(LEAST), vec![Some(1), Some(3), None]);
        assert_eq!(run(COALESCE), vec![Some(1), Some(3), None]);
    }

    #[test]
    fn more_than_one_subquery_row_is_an_error_in_both_forms() {
        let f = SCALAR_SUBQUERY_VALUE.function();
        assert!(
            f.invoke_row(&[Value::Int(2), Value::Int(9)])
                .unwrap()
                .is_err()
        );
        assert_eq!(
            format!(
                "{:?}",
                f.invoke_row(&[Value::Int(1), Value::Int(9)])
                    .unwrap()
                    .unwrap()
            ),
            "Int(9)"
        );
    }
}
