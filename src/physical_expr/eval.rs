//! Vectorized evaluation of [`PhysicalExpr`]s over record batches.
//!
//! Each node runs one arrow kernel over whole arrays. Constants stay
//! one-element arrays wrapped in [`arrow::array::Scalar`], so `col + 1` never
//! materializes a column of ones.

use std::sync::Arc;

use arrow::array::*;
use arrow::buffer::BooleanBuffer;
use arrow::compute::kernels::{boolean, cmp, numeric, temporal::DatePart, zip::zip};
use arrow::compute::{cast, prep_null_mask_filter};
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use crate::error::{Result, SlothError};
use crate::expr::{Operator, ScalarFunc};
use crate::physical_expr::{Node, PhysicalExpr, literal_i64, literal_string};

use crate::kernels::like::WildcardPattern;
use crate::kernels::{math, strings};

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

/// The value of an expression over a batch: a full column or one constant.
#[derive(Debug, Clone)]
pub enum ColumnarValue {
    /// One value per row.
    Array(ArrayRef),
    /// The same value for every row, as a one-element array.
    Scalar(ArrayRef),
}

impl ColumnarValue {
    /// As an arrow `Datum`, for kernels that take arrays or scalars.
    fn datum(&self) -> Box<dyn Datum + '_> {
        match self {
            ColumnarValue::Array(a) => Box::new(a),
            ColumnarValue::Scalar(s) => Box::new(Scalar::new(s.clone())),
        }
    }

    fn is_scalar(&self) -> bool {
        matches!(self, ColumnarValue::Scalar(_))
    }

    /// Expands to an array of `len` rows.
    pub fn into_array(self, len: usize) -> Result<ArrayRef> {
        match self {
            ColumnarValue::Array(a) => Ok(a),
            ColumnarValue::Scalar(s) => repeat_scalar(&s, len),
        }
    }

    fn wrap(array: ArrayRef, scalar: bool) -> ColumnarValue {
        if scalar {
            ColumnarValue::Scalar(array)
        } else {
            ColumnarValue::Array(array)
        }
    }
}

/// A column holding `len` copies of element 0 of `scalar`.
pub fn repeat_scalar(scalar: &ArrayRef, len: usize) -> Result<ArrayRef> {
    if scalar.is_null(0) {
        return Ok(new_null_array(scalar.data_type(), len));
    }
    let indices = UInt32Array::from_value(0, len);
    Ok(arrow::compute::take(scalar.as_ref(), &indices, None)?)
}

/// Evaluates `expr` over `batch` to a full column.
pub fn evaluate_array(expr: &PhysicalExpr, batch: &RecordBatch) -> Result<ArrayRef> {
    evaluate(expr, batch)?.into_array(batch.num_rows())
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
            for item in values {
                let hit = cmp::eq(&*v.datum(), &Scalar::new(item.clone()))?;
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

/// The string of a one-element string array (any string layout), unless null.
fn scalar_str(a: &ArrayRef) -> Option<&str> {
    if a.is_null(0) {
        return None;
    }
    match a.data_type() {
        DataType::Utf8 => Some(a.as_string::<i32>().value(0)),
        DataType::LargeUtf8 => Some(a.as_string::<i64>().value(0)),
        DataType::Utf8View => Some(a.as_string_view().value(0)),
        _ => None,
    }
}

fn function(
    func: ScalarFunc,
    args: &[PhysicalExpr],
    out_type: &DataType,
    batch: &RecordBatch,
) -> Result<ColumnarValue> {
    use ScalarFunc::*;
    let first = evaluate(&args[0], batch)?;
    let scalar = first.is_scalar();
    let out: ArrayRef = match func {
        Contains | StartsWith | EndsWith | Like | NotLike => {
            let pattern = evaluate(&args[1], batch)?;
            if let (Like | NotLike, ColumnarValue::Array(a), ColumnarValue::Scalar(p)) =
                (func, &first, &pattern)
                && let Some(pattern) = scalar_str(p).and_then(WildcardPattern::new)
                && let Some(r) = pattern.evaluate(a, func == NotLike)
            {
                return Ok(ColumnarValue::Array(Arc::new(r)));
            }
            let (a, p) = (first.datum(), pattern.datum());
            let (a, p) = (&*a, &*p);
            let r = match func {
                Contains => arrow::compute::kernels::comparison::contains(a, p)?,
                StartsWith => arrow::compute::kernels::comparison::starts_with(a, p)?,
                EndsWith => arrow::compute::kernels::comparison::ends_with(a, p)?,
                Like => arrow::compute::kernels::comparison::like(a, p)?,
                _ => arrow::compute::kernels::comparison::nlike(a, p)?,
            };
            return Ok(ColumnarValue::wrap(
                Arc::new(r),
                scalar && pattern.is_scalar(),
            ));
        }
        Power | Greatest | Least => {
            let values = args
                .iter()
                .map(|e| evaluate(e, batch))
                .collect::<Result<Vec<_>>>()?;
            let all_scalar = values.iter().all(ColumnarValue::is_scalar);
            let rows = if all_scalar { 1 } else { batch.num_rows() };
            let arrays = values
                .into_iter()
                .map(|v| match v {
                    ColumnarValue::Array(a) => Ok(a),
                    ColumnarValue::Scalar(a) => repeat_if_scalar(a, true, rows),
                })
                .collect::<Result<Vec<_>>>()?;
            let out = match func {
                Power => math::power(&arrays[0], &arrays[1])?,
                _ => math::extreme(&arrays, func == Greatest)?,
            };
            return Ok(ColumnarValue::wrap(out, all_scalar));
        }
        DateTrunc => {
            let unit = crate::physical_expr::date_trunc_unit(&args[0])?;
            let dates = evaluate(&args[1], batch)?;
            let out = match &dates {
                ColumnarValue::Array(a) | ColumnarValue::Scalar(a) => {
                    crate::kernels::date_trunc::date_trunc(a, unit)
                }
            };
            return Ok(ColumnarValue::wrap(out, dates.is_scalar()));
        }
        _ => {
            let a = match &first {
                ColumnarValue::Array(a) | ColumnarValue::Scalar(a) => a.clone(),
            };
            match func {
                Substr => {
                    let start = literal_i64(&args[1])?;
                    let len = args.get(2).map(literal_i64).transpose()?;
                    strings::substr(&a, start, len)?
                }
                Length => strings::char_length(&a)?,
                Upper => strings::map_str(&a, |s, buf| buf.push_str(&s.to_uppercase()))?,
                Lower => strings::map_str(&a, |s, buf| buf.push_str(&s.to_lowercase()))?,
                Trim => strings::map_str(&a, |s, buf| buf.push_str(s.trim_matches(' ')))?,
                LTrim => strings::map_str(&a, |s, buf| buf.push_str(s.trim_start_matches(' ')))?,
                RTrim => strings::map_str(&a, |s, buf| buf.push_str(s.trim_end_matches(' ')))?,
                ScalarSubqueryValue => {
                    let rows = arrow::compute::cast(&a, &DataType::Int64)?;
                    if arrow::compute::max(rows.as_primitive::<Int64Type>()).unwrap_or(0) > 1 {
                        return Err(SlothError::Data(
                            "a scalar subquery returned more than one row".into(),
                        ));
                    }
                    let value = evaluate(&args[1], batch)?;
                    return Ok(value);
                }
                Replace => {
                    let constant = |e: &PhysicalExpr| -> Result<Option<String>> {
                        literal_string(e).ok_or_else(|| {
                            SlothError::plan("replace() takes constant search and replacement")
                        })
                    };
                    match (constant(&args[1])?, constant(&args[2])?) {
                        (Some(from), Some(to)) => strings::map_str(&a, |s, buf| {
                            if from.is_empty() {
                                buf.push_str(s)
                            } else {
                                buf.push_str(&s.replace(from.as_str(), &to))
                            }
                        })?,
                        _ => new_null_array(&DataType::Utf8, a.len()),
                    }
                }
                Year | Month | Day | Quarter | DayOfWeek | DayOfYear => {
                    let part = match func {
                        Year => DatePart::Year,
                        Month => DatePart::Month,
                        Quarter => DatePart::Quarter,
                        DayOfWeek => DatePart::DayOfWeekSunday0,
                        DayOfYear => DatePart::DayOfYear,
                        _ => DatePart::Day,
                    };
                    arrow::compute::kernels::temporal::date_part(&a, part)?
                }
                Abs => {
                    let zero = cast(&Int64Array::from(vec![0]), a.data_type())?;
                    let negative = cmp::lt(&a, &Scalar::new(zero))?;
                    zip(&negative, &numeric::neg(&a)?, &a)?
                }
                Round => {
                    let digits = args.get(1).map(literal_i64).transpose()?.unwrap_or(0);
                    round(&a, digits, out_type)?
                }
                Coalesce => {
                    let mut acc = a;
                    let n = if scalar { 1 } else { batch.num_rows() };
                    let mut acc_arr = repeat_if_scalar(acc, scalar, n)?;
                    for arg in &args[1..] {
                        if acc_arr.null_count() == 0 {
                            break;
                        }
                        let next = evaluate(arg, batch)?;
                        let present = arrow::compute::is_not_null(&acc_arr)?;
                        acc_arr = zip(&present, &acc_arr, &*next.datum())?;
                    }
                    acc = acc_arr;
                    acc
                }
                Math(m) => math::math(&a, m),
                Floor | Ceil | Trunc | Sign => math::integral(&a, func, out_type)?,
                StrPos | Left | Right | Lpad | Rpad | SplitPart | Reverse | Repeat => {
                    text_function(&a, func, &args[1..], out_type)?
                }
                Concat => {
                    let mut parts = vec![(a, scalar)];
                    for arg in &args[1..] {
                        parts.push(match evaluate(arg, batch)? {
                            ColumnarValue::Array(a) => (a, false),
                            ColumnarValue::Scalar(a) => (a, true),
                        });
                    }
                    let all_scalar = parts.iter().all(|(_, constant)| *constant);
                    let rows = if all_scalar { 1 } else { batch.num_rows() };
                    let out = strings::concat(&parts, rows)?;
                    return Ok(ColumnarValue::wrap(out, all_scalar));
                }
                _ => unreachable!(),
            }
        }
    };
    Ok(ColumnarValue::wrap(out, scalar))
}

/// A string function whose arguments after the string are constants
/// (`consts`): every row is null where one of them is.
fn text_function(
    a: &ArrayRef,
    func: ScalarFunc,
    consts: &[PhysicalExpr],
    out_type: &DataType,
) -> Result<ArrayRef> {
    use ScalarFunc::*;
    let is_null = |e: &PhysicalExpr| e.as_literal().is_none_or(|l| l.logical_null_count() > 0);
    if consts.iter().any(is_null) {
        return Ok(new_null_array(out_type, a.len()));
    }
    let text = |i: usize| -> Result<String> {
        literal_string(&consts[i])
            .flatten()
            .ok_or_else(|| SlothError::types(format!("{}() needs text arguments", func.name())))
    };
    let int = |i: usize| literal_i64(&consts[i]);
    Ok(match func {
        StrPos => strings::strpos(a, &text(0)?)?,
        Left => {
            let n = int(0)?;
            strings::map_str(a, |s, buf| buf.push_str(strings::left(s, n)))?
        }
        Right => {
            let n = int(0)?;
            strings::map_str(a, |s, buf| buf.push_str(strings::right(s, n)))?
        }
        Lpad | Rpad => {
            let n = int(0)?;
            let fill = if consts.len() > 1 {
                text(1)?
            } else {
                " ".into()
            };
            strings::map_str(a, |s, buf| strings::pad(s, n, &fill, func == Lpad, buf))?
        }
        SplitPart => {
            let (delimiter, n) = (text(0)?, int(1)?);
            strings::map_str(a, |s, buf| {
                buf.push_str(strings::split_part(s, &delimiter, n))
            })?
        }
        Reverse => strings::map_str(a, |s, buf| buf.extend(s.chars().rev()))?,
        Repeat => {
            let n = int(0)?.max(0) as usize;
            strings::map_str(a, |s, buf| {
                for _ in 0..n {
                    buf.push_str(s)
                }
            })?
        }
        _ => unreachable!("a string function"),
    })
}

fn repeat_if_scalar(a: ArrayRef, scalar: bool, n: usize) -> Result<ArrayRef> {
    if scalar && n != 1 {
        repeat_scalar(&a, n)
    } else {
        Ok(a)
    }
}

fn round(a: &ArrayRef, digits: i64, out_type: &DataType) -> Result<ArrayRef> {
    match a.data_type() {
        DataType::Decimal128(..) => Ok(cast(a, out_type)?),
        t if t.is_integer() => Ok(a.clone()),
        _ => {
            let f = cast(a, &DataType::Float64)?;
            let scale = 10f64.powi(digits as i32);
            let r: Float64Array = f
                .as_primitive::<Float64Type>()
                .unary(|v| (v * scale).round() / scale);
            Ok(Arc::new(r))
        }
    }
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
