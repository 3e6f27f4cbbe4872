//! Vectorized evaluation of [`PhysicalExpr`]s over record batches.
//!
//! Each node runs one arrow kernel over whole arrays. Constants stay
//! one-element arrays wrapped in [`arrow::array::Scalar`], so `col + 1` never
//! materializes a column of ones.

use std::sync::Arc;

use arrow::array::*;
use arrow::buffer::BooleanBuffer;
use arrow::compute::kernels::{boolean, cmp, numeric, zip::zip};
use arrow::compute::{cast, prep_null_mask_filter};
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use crate::error::{Result, SlothError};
use crate::expr::function::ColumnarValue;
use crate::expr::{Operator, ScalarFunc};
use crate::kernels::float_zero::canonical_floats;
use crate::kernels::strings;
use crate::physical_expr::{Node, PhysicalExpr};

/// `CAST(a AS to)` with SQL's semantics: a decimal or float cast to an
/// integer rounds half away from zero (PostgreSQL, DuckDB: `CAST(3.7 AS
/// INT)` is 4), where arrow's cast truncates; a value that does not fit is
/// an error, not a null.
pub fn sql_cast(a: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    let opts = arrow::compute::CastOptions {
        safe: false,
        ..Default::default()
    };
    let fail = |err: arrow::error::ArrowError| {
        SlothError::Data(format!("cannot cast {} to {to}: {err}", a.data_type()))
    };
    let rounded: Option<ArrayRef> = match a.data_type() {
        DataType::Decimal128(p, s) if to.is_integer() && *s > 0 => Some(
            arrow::compute::cast_with_options(a, &DataType::Decimal128(*p, 0), &opts)
                .map_err(fail)?,
        ),
        DataType::Float32 | DataType::Float64 if to.is_integer() => {
            let f = cast(a, &DataType::Float64)?;
            let r: Float64Array = f.as_primitive::<Float64Type>().unary(f64::round);
            Some(Arc::new(r))
        }
        _ => None,
    };
    arrow::compute::cast_with_options(rounded.as_ref().unwrap_or(a), to, &opts).map_err(fail)
}

/// Evaluates `expr` over `batch` to a full column.
pub fn evaluate_array(expr: &PhysicalExpr, batch: &RecordBatch) -> Result<ArrayRef> {
    evaluate(expr, batch)?.into_array(batch.num_rows())
}

/// The value of an expression that reads no column (`2 * 5`, `$1 + 1`):
/// an integer as Int64, NULL as [`crate::expr::ScalarValue::Null`].
pub fn evaluate_constant(expr: &crate::expr::Expr) -> Result<crate::expr::ScalarValue> {
    let schema = Arc::new(arrow::datatypes::Schema::empty());
    let compiled = PhysicalExpr::compile(expr, &schema)?;
    let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(1));
    let one_row = RecordBatch::try_new_with_options(schema, vec![], &options)?;
    let value = evaluate_array(&compiled, &one_row)?;
    let value = match value.data_type() {
        t if t.is_integer() => cast(&value, &DataType::Int64)?,
        _ => value,
    };
    Ok(crate::expr::ScalarValue::from_array(value.as_ref(), 0)
        .unwrap_or(crate::expr::ScalarValue::Null))
}

/// Evaluates a sort key over `batch`: floats canonical (every NaN the
/// positive NaN, above every number; `-0.0` as `0.0`), as SQL orders them,
/// where Arrow's sort kernels order by bits.
pub fn evaluate_sort_key(expr: &PhysicalExpr, batch: &RecordBatch) -> Result<ArrayRef> {
    Ok(canonical_floats(&evaluate_array(expr, batch)?))
}

/// Evaluates a predicate to a selection mask where null counts as false.
pub fn evaluate_mask(expr: &PhysicalExpr, batch: &RecordBatch) -> Result<BooleanArray> {
    let v = evaluate_array(expr, batch)?;
    let mask = v
        .as_boolean_opt()
        .ok_or_else(|| SlothError::types(format!("predicate is {}, not Boolean", v.data_type())))?;
    Ok(if mask.null_count() > 0 {
        prep_null_mask_filter(mask)
    } else {
        mask.clone()
    })
}

/// The rows of `batch` that `mask` keeps: `None` when it keeps none, the
/// batch itself (no copy) when it keeps all.
pub fn keep_rows(batch: RecordBatch, mask: &BooleanArray) -> Result<Option<RecordBatch>> {
    let kept = mask.true_count();
    Ok(if kept == 0 {
        None
    } else if kept == batch.num_rows() {
        Some(batch)
    } else {
        Some(arrow::compute::filter_record_batch(&batch, mask)?)
    })
}

/// Evaluates `expr` over `batch`.
pub fn evaluate(expr: &PhysicalExpr, batch: &RecordBatch) -> Result<ColumnarValue> {
    Ok(match &expr.node {
        Node::Column(i) => ColumnarValue::Array(batch.column(*i).clone()),
        Node::Fused(f) => match f.evaluate(batch)? {
            Some(a) => ColumnarValue::Array(a),
            None => evaluate(&f.original, batch)?,
        },
        Node::Literal(a) => ColumnarValue::Scalar(a.clone()),
        Node::Binary(l, op, r) => {
            let l = evaluate(l, batch)?;
            let r = evaluate(r, batch)?;
            binary(&l, *op, &r, batch.num_rows())?
        }
        Node::Not(e) => map_unary(evaluate(e, batch)?, |a| {
            Ok(Arc::new(boolean::not(a.as_boolean())?))
        })?,
        Node::Negative(e) => map_unary(evaluate(e, batch)?, |a| Ok(numeric::neg(a)?))?,
        Node::IsNull(e) => map_unary(evaluate(e, batch)?, |a| {
            Ok(Arc::new(arrow::compute::is_null(a)?))
        })?,
        Node::IsNotNull(e) => map_unary(evaluate(e, batch)?, |a| {
            Ok(Arc::new(arrow::compute::is_not_null(a)?))
        })?,
        Node::Cast(e) => {
            let to = &expr.data_type;
            map_unary(evaluate(e, batch)?, |a| sql_cast(a, to))?
        }
        Node::Case(branches, otherwise) => {
            let n = batch.num_rows();
            let mut result: ArrayRef = match otherwise {
                Some(o) => evaluate_array(o, batch)?,
                None => new_null_array(&expr.data_type, n),
            };
            for (cond, value) in branches.iter().rev() {
                let mask = evaluate_mask(cond, batch)?;
                let value = evaluate(value, batch)?;
                result = zip(&mask, &*value.datum(), &result)?;
            }
            ColumnarValue::Array(result)
        }
        Node::InList(e, values, negated) => {
            let v = evaluate(e, batch)?;
            if let (ColumnarValue::Array(a), Some(list)) = (&v, string_literals(values))
                && let Some(views) = a.as_string_view_opt()
            {
                let hit = strings::view_eq_any(views, &list);
                let out = if *negated { boolean::not(&hit)? } else { hit };
                return Ok(ColumnarValue::Array(Arc::new(out)));
            }
            let mut acc: Option<BooleanArray> = None;
            // -0.0 = 0.0 (kernels/float_zero.rs).
            let v = map_unary(v, |a| Ok(canonical_floats(a)))?;
            for item in values {
                let item = canonical_floats(item);
                let hit = cmp::eq(&*v.datum(), &Scalar::new(item))?;
                acc = Some(match acc {
                    None => hit,
                    Some(prev) => boolean::or_kleene(&prev, &hit)?,
                });
            }
            let len = if v.is_scalar() { 1 } else { batch.num_rows() };
            let mut out = acc.unwrap_or_else(|| BooleanArray::from(vec![false; len]));
            if *negated {
                out = boolean::not(&out)?;
            }
            ColumnarValue::wrap(Arc::new(out), v.is_scalar())
        }
        Node::Function(func, args) => function(*func, args, &expr.data_type, batch)?,
        Node::Runtime(filter, args) => {
            let args = args
                .iter()
                .map(|a| evaluate_array(a, batch))
                .collect::<Result<Vec<_>>>()?;
            let mask = filter.mask(&args)?.unwrap_or_else(|| {
                BooleanArray::new(BooleanBuffer::new_set(batch.num_rows()), None)
            });
            ColumnarValue::Array(Arc::new(mask))
        }
    })
}

fn map_unary(
    v: ColumnarValue,
    f: impl FnOnce(&ArrayRef) -> Result<ArrayRef>,
) -> Result<ColumnarValue> {
    Ok(match v {
        ColumnarValue::Array(a) => ColumnarValue::Array(f(&a)?),
        ColumnarValue::Scalar(s) => ColumnarValue::Scalar(f(&s)?),
    })
}

fn binary(
    l: &ColumnarValue,
    op: Operator,
    r: &ColumnarValue,
    rows: usize,
) -> Result<ColumnarValue> {
    let scalar = l.is_scalar() && r.is_scalar();
    // Floats compare with -0.0 = 0.0 (kernels/float_zero.rs).
    let normalized;
    let (l, r) = match op.is_comparison() && l.array().data_type().is_floating() {
        true => {
            let zeros = |v: &ColumnarValue| map_unary(v.clone(), |a| Ok(canonical_floats(a)));
            normalized = (zeros(l)?, zeros(r)?);
            (&normalized.0, &normalized.1)
        }
        false => (l, r),
    };
    let (ld, rd) = (l.datum(), r.datum());
    let (ld, rd) = (&*ld, &*rd);
    let out: ArrayRef = match op {
        Operator::Plus => numeric::add(ld, rd)?,
        Operator::Minus => numeric::sub(ld, rd)?,
        Operator::Multiply => numeric::mul(ld, rd)?,
        Operator::Divide | Operator::Modulo => {
            // x / 0 is NULL (as in DuckDB), not an error: CASE branches are
            // evaluated for every row, so an error would be spurious.
            let r = null_zero_divisor(r)?;
            let rd = &*r.datum();
            if op == Operator::Divide {
                numeric::div(ld, rd)?
            } else {
                numeric::rem(ld, rd)?
            }
        }
        Operator::Eq | Operator::NotEq if view_against_literal(l, r).is_some() => {
            let (views, literal) = view_against_literal(l, r).expect("checked by the guard");
            let hit = strings::view_eq_any(views, &[literal]);
            Arc::new(if op == Operator::Eq {
                hit
            } else {
                boolean::not(&hit)?
            })
        }
        Operator::Eq => Arc::new(cmp::eq(ld, rd)?),
        Operator::NotEq => Arc::new(cmp::neq(ld, rd)?),
        Operator::Lt => Arc::new(cmp::lt(ld, rd)?),
        Operator::LtEq => Arc::new(cmp::lt_eq(ld, rd)?),
        Operator::Gt => Arc::new(cmp::gt(ld, rd)?),
        Operator::GtEq => Arc::new(cmp::gt_eq(ld, rd)?),
        Operator::And | Operator::Or => {
            let n = if scalar { 1 } else { rows };
            let la = l.clone().into_array(n)?;
            let ra = r.clone().into_array(n)?;
            let (la, ra) = (la.as_boolean(), ra.as_boolean());
            Arc::new(if op == Operator::And {
                boolean::and_kleene(la, ra)?
            } else {
                boolean::or_kleene(la, ra)?
            })
        }
    };
    Ok(ColumnarValue::wrap(out, scalar))
}

/// The strings of a list of non-null one-row string literals; `None` if any
/// item is something else (a null makes `IN` three-valued: the general path).
fn string_literals(values: &[ArrayRef]) -> Option<Vec<&str>> {
    values
        .iter()
        .map(|v| {
            if v.len() != 1 || v.is_null(0) {
                return None;
            }
            match v.data_type() {
                DataType::Utf8 => Some(v.as_string::<i32>().value(0)),
                DataType::Utf8View => Some(v.as_string_view().value(0)),
                _ => None,
            }
        })
        .collect()
}

/// A string-view column compared with a non-null string literal, either way round.
fn view_against_literal<'a>(
    l: &'a ColumnarValue,
    r: &'a ColumnarValue,
) -> Option<(&'a StringViewArray, &'a str)> {
    let ((ColumnarValue::Array(a), ColumnarValue::Scalar(s))
    | (ColumnarValue::Scalar(s), ColumnarValue::Array(a))) = (l, r)
    else {
        return None;
    };
    let literal = string_literals(std::slice::from_ref(s))?;
    Some((a.as_string_view_opt()?, literal[0]))
}

fn null_zero_divisor(r: &ColumnarValue) -> Result<ColumnarValue> {
    let t = match r {
        ColumnarValue::Array(a) | ColumnarValue::Scalar(a) => a.data_type().clone(),
    };
    if t.is_floating() {
        return Ok(r.clone());
    }
    let zero = cast(&Int64Array::from(vec![0]), &t)?;
    map_unary(r.clone(), |a| {
        let is_zero = cmp::eq(a, &Scalar::new(zero.clone()))?;
        if is_zero.true_count() == 0 {
            Ok(a.clone())
        } else {
            Ok(arrow::compute::nullif(a, &is_zero)?)
        }
    })
}

/// A function call: its arguments evaluated, then the function's kernel.
fn function(
    func: ScalarFunc,
    args: &[PhysicalExpr],
    output: &DataType,
    batch: &RecordBatch,
) -> Result<ColumnarValue> {
    let values = args
        .iter()
        .map(|a| evaluate(a, batch))
        .collect::<Result<Vec<_>>>()?;
    func.function().invoke(&values, output, batch.num_rows())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Expr, col, lit, when};
    use arrow::datatypes::{Field, Schema};

    fn batch() -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Boolean, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None, Some(3), Some(0)])),
                Arc::new(BooleanArray::from(vec![
                    Some(true),
                    Some(false),
                    None,
                    None,
                ])),
                Arc::new(StringArray::from(vec![
                    Some("apple"),
                    Some("Banana"),
                    None,
                    Some("cherry"),
                ])),
            ],
        )
        .unwrap()
    }

    fn eval(e: Expr) -> ArrayRef {
        let b = batch();
        let p = PhysicalExpr::compile(&e, &b.schema()).unwrap();
        evaluate_array(&p, &b).unwrap()
    }

    #[test]
    fn arithmetic_widens_and_propagates_nulls() {
        let r = eval(col("a") + lit(10i64));
        assert_eq!(
            r.as_primitive::<Int64Type>(),
            &Int64Array::from(vec![Some(11), None, Some(13), Some(10)])
        );
    }

    #[test]
    fn division_by_zero_is_null() {
        let r = eval(lit(6i64) / col("a"));
        assert_eq!(
            r.as_primitive::<Int64Type>(),
            &Int64Array::from(vec![Some(6), None, Some(2), None])
        );
    }

    #[test]
    fn three_valued_logic() {
        // true AND null = null; false AND null = false; null OR true = true.
        let r = eval(col("b").and(lit(ScalarValue::Boolean(None))));
        assert_eq!(
            r.as_boolean(),
            &BooleanArray::from(vec![None, Some(false), None, None])
        );
        let r = eval(col("b").or(lit(true)));
        assert_eq!(r.as_boolean(), &BooleanArray::from(vec![Some(true); 4]));
        let r = eval(col("b").not());
        assert_eq!(
            r.as_boolean(),
            &BooleanArray::from(vec![Some(false), Some(true), None, None])
        );
    }

    use crate::expr::ScalarValue;

    #[test]
    fn in_list_with_null_follows_sql() {
        // 1 IN (1, NULL) = true; 3 IN (1, NULL) = null; NULL IN (..) = null.
        let r = eval(col("a").is_in([lit(1i64), lit(ScalarValue::Int64(None))]));
        assert_eq!(
            r.as_boolean(),
            &BooleanArray::from(vec![Some(true), None, None, None])
        );
        let r = eval(Expr::InList {
            expr: Box::new(col("a")),
            list: vec![lit(1i64), lit(3i64)],
            negated: true,
        });
        assert_eq!(
            r.as_boolean(),
            &BooleanArray::from(vec![Some(false), None, Some(false), Some(true)])
        );
    }

    #[test]
    fn case_when_takes_first_match_and_null_otherwise() {
        let r = eval(
            when(col("a").gt(lit(2i64)))
                .then(lit("big"))
                .when(col("a").gt(lit(0i64)))
                .then(lit("small"))
                .end(),
        );
        let r = cast(&r, &DataType::Utf8).unwrap();
        assert_eq!(
            r.as_string::<i32>(),
            &StringArray::from(vec![Some("small"), None, Some("big"), None])
        );
    }

    #[test]
    fn string_functions() {
        let r = eval(col("s").to_uppercase());
        assert_eq!(
            r.as_string::<i32>(),
            &StringArray::from(vec![Some("APPLE"), Some("BANANA"), None, Some("CHERRY")])
        );
        let r = eval(col("s").substr(2, Some(3)));
        assert_eq!(
            r.as_string::<i32>(),
            &StringArray::from(vec![Some("ppl"), Some("ana"), None, Some("her")])
        );
        let r = eval(col("s").str_len());
        assert_eq!(
            r.as_primitive::<Int64Type>(),
            &Int64Array::from(vec![Some(5), Some(6), None, Some(6)])
        );
        let r = eval(col("s").like(lit("%an%")));
        assert_eq!(
            r.as_boolean(),
            &BooleanArray::from(vec![Some(false), Some(true), None, Some(false)])
        );
        let r = eval(col("s").starts_with(lit("ch")));
        assert_eq!(
            r.as_boolean(),
            &BooleanArray::from(vec![Some(false), Some(false), None, Some(true)])
        );
    }

    #[test]
    fn unknown_column_lists_available() {
        let b = batch();
        let err = PhysicalExpr::compile(&col("zz"), &b.schema())
            .unwrap_err()
            .to_string();
        assert!(err.contains("'zz'") && err.contains("a, b, s"), "{err}");
    }

    #[test]
    fn type_mismatch_names_types() {
        let b = batch();
        let err = PhysicalExpr::compile(&(col("s") + lit(1i64)), &b.schema())
            .unwrap_err()
            .to_string();
        assert!(err.contains("Utf8") && err.contains("Int64"), "{err}");
    }
}
