//! Row-at-a-time expression evaluation, the way an interpreter over tuples
//! does it: one recursive call per node per row, dynamically typed values.
//!
//! Results equal the vectorized kernels' (the tests compare both executors
//! on every query). Rare nodes without a row implementation (casts between
//! strings and dates, interval arithmetic on columns) fall back to the
//! vectorized kernel on a one-row batch.

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use super::value::{Row, Value, rescale, to_array};
use crate::error::{Result, SlothError};
use crate::expr::{Operator, ScalarFunc};
use crate::physical_expr::eval::evaluate_array;
use crate::physical_expr::{Node, PhysicalExpr};

/// Evaluates `expr` on one row of `schema`.
pub fn eval(expr: &PhysicalExpr, row: &Row, schema: &SchemaRef) -> Result<Value> {
    Ok(match &expr.node {
        Node::Column(i) => row[*i].clone(),
        Node::Fused(f) => eval(&f.original, row, schema)?,
        Node::Literal(a) => Value::from_array(a.as_ref(), 0)?,
        Node::Binary(l, op, r) => {
            let a = eval(l, row, schema)?;
            match op {
                Operator::And | Operator::Or => return logic(a, *op, || eval(r, row, schema)),
                _ => {}
            }
            let b = eval(r, row, schema)?;
            if a.is_null() || b.is_null() {
                return Ok(Value::Null);
            }
            if op.is_comparison() {
                let Some(ord) = a.sql_cmp(&b) else {
                    return fallback(expr, row, schema);
                };
                use std::cmp::Ordering::*;
                return Ok(Value::Bool(match op {
                    Operator::Eq => ord == Equal,
                    Operator::NotEq => ord != Equal,
                    Operator::Lt => ord == Less,
                    Operator::LtEq => ord != Greater,
                    Operator::Gt => ord == Greater,
                    _ => ord != Less,
                }));
            }
            match arithmetic(&a, *op, &b, &expr.data_type)? {
                Some(v) => v,
                None => fallback(expr, row, schema)?,
            }
        }
        Node::Not(e) => match eval(e, row, schema)? {
            Value::Bool(b) => Value::Bool(!b),
            _ => Value::Null,
        },
        Node::Negative(e) => match eval(e, row, schema)? {
            Value::Int(v) => Value::Int(-v),
            Value::Float(v) => Value::Float(-v),
            Value::Decimal(v, s) => Value::Decimal(-v, s),
            Value::Null => Value::Null,
            _ => fallback(expr, row, schema)?,
        },
        Node::IsNull(e) => Value::Bool(eval(e, row, schema)?.is_null()),
        Node::IsNotNull(e) => Value::Bool(!eval(e, row, schema)?.is_null()),
        Node::Cast(e) => {
            let v = eval(e, row, schema)?;
            match cast(&v, &e.data_type, &expr.data_type) {
                Some(v) => v,
                None => fallback(expr, row, schema)?,
            }
        }
        Node::Case(branches, otherwise) => {
            for (cond, value) in branches {
                if matches!(eval(cond, row, schema)?, Value::Bool(true)) {
                    return eval(value, row, schema);
                }
            }
            match otherwise {
                Some(o) => eval(o, row, schema)?,
                None => Value::Null,
            }
        }
        Node::InList(e, list, negated) => {
            let v = eval(e, row, schema)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            let mut saw_null = false;
            let mut hit = false;
            for item in list {
                let item = Value::from_array(item.as_ref(), 0)?;
                match v.sql_cmp(&item) {
                    Some(std::cmp::Ordering::Equal) => {
                        hit = true;
                        break;
                    }
                    None => saw_null = true,
                    _ => {}
                }
            }
            if hit {
                Value::Bool(!negated)
            } else if saw_null {
                Value::Null
            } else {
                Value::Bool(*negated)
            }
        }
        Node::Function(func, args) => function(expr, *func, args, row, schema)?,
        Node::Runtime(filter, _) => {
            return Err(SlothError::plan(format!(
                "the row-at-a-time executor cannot run {}",
                filter.describe()
            )));
        }
    })
}

/// Three-valued AND / OR; the right side is evaluated only when it matters.
fn logic(a: Value, op: Operator, right: impl FnOnce() -> Result<Value>) -> Result<Value> {
    let a = match a {
        Value::Bool(b) => Some(b),
        _ => None,
    };
    let decisive = op == Operator::Or; // true decides OR, false decides AND
    if a == Some(decisive) {
        return Ok(Value::Bool(decisive));
    }
    let b = match right()? {
        Value::Bool(b) => Some(b),
        _ => None,
    };
    Ok(match (a, b) {
        (_, Some(x)) if x == decisive => Value::Bool(decisive),
        (Some(_), Some(_)) => Value::Bool(!decisive),
        _ => Value::Null,
    })
}

fn overflow() -> SlothError {
    SlothError::Arrow(arrow::error::ArrowError::ArithmeticOverflow(
        "integer overflow".into(),
    ))
}

/// Arithmetic on two non-null values; `None` when not handled here.
fn arithmetic(a: &Value, op: Operator, b: &Value, out: &DataType) -> Result<Option<Value>> {
    use Value::*;
    Ok(Some(match (a, b) {
        (Int(x), Int(y)) => match op {
            Operator::Plus => Int(x.checked_add(*y).ok_or_else(overflow)?),
            Operator::Minus => Int(x.checked_sub(*y).ok_or_else(overflow)?),
            Operator::Multiply => Int(x.checked_mul(*y).ok_or_else(overflow)?),
            Operator::Divide if *y == 0 => Null,
            Operator::Divide => Int(x.checked_div(*y).ok_or_else(overflow)?),
            Operator::Modulo if *y == 0 => Null,
            Operator::Modulo => Int(x.checked_rem(*y).ok_or_else(overflow)?),
            _ => return Ok(None),
        },
        (Float(x), Float(y)) => Float(match op {
            Operator::Plus => x + y,
            Operator::Minus => x - y,
            Operator::Multiply => x * y,
            Operator::Divide => x / y,
            Operator::Modulo => x % y,
            _ => return Ok(None),
        }),
        (Decimal(x, sx), Decimal(y, sy)) => {
            let DataType::Decimal128(_, so) = out else {
                return Ok(None);
            };
            match op {
                Operator::Plus => Decimal(rescale(*x, *sx, *so) + rescale(*y, *sy, *so), *so),
                Operator::Minus => Decimal(rescale(*x, *sx, *so) - rescale(*y, *sy, *so), *so),
                Operator::Multiply => Decimal(x.checked_mul(*y).ok_or_else(overflow)?, sx + sy),
                _ => return Ok(None),
            }
        }
        _ => return Ok(None),
    }))
}

/// Casts between numeric types; `None` when not handled here.
fn cast(v: &Value, from: &DataType, to: &DataType) -> Option<Value> {
    use Value::*;
    if v.is_null() {
        return Some(Null);
    }
    Some(match (v, to) {
        (_, t) if t == from => v.clone(),
        (Int(x), DataType::Float64 | DataType::Float32) => Float(*x as f64),
        (Int(x), t) if t.is_integer() => Int(*x),
        (Int(x), DataType::Decimal128(_, s)) => Decimal(rescale(*x as i128, 0, *s), *s),
        (Decimal(x, s), DataType::Float64) => Float(*x as f64 / 10f64.powi(*s as i32)),
        (Decimal(x, s), DataType::Decimal128(_, to_s)) if to_s >= s => {
            Decimal(rescale(*x, *s, *to_s), *to_s)
        }
        (Float(x), DataType::Float64) => Float(*x),
        (Str(s), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => Str(s.clone()),
        (Bool(b), DataType::Boolean) => Bool(*b),
        _ => return None,
    })
}

/// A function call: the function's row-at-a-time form where it has one,
/// else its columnar kernel on a one-row batch.
fn function(
    expr: &PhysicalExpr,
    func: ScalarFunc,
    args: &[PhysicalExpr],
    row: &Row,
    schema: &SchemaRef,
) -> Result<Value> {
    let values = args
        .iter()
        .map(|a| eval(a, row, schema))
        .collect::<Result<Vec<_>>>()?;
    match func.function().invoke_row(&values) {
        Some(value) => value,
        None => fallback(expr, row, schema),
    }
}

/// The vectorized kernel on a one-row batch made from `row`.
fn fallback(expr: &PhysicalExpr, row: &Row, schema: &SchemaRef) -> Result<Value> {
    let columns: Vec<ArrayRef> = row
        .iter()
        .zip(schema.fields())
        .map(|(v, f)| to_array(&[v], f.data_type()))
        .collect::<Result<_>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(1));
    let batch = RecordBatch::try_new_with_options(schema.clone(), columns, &options)?;
    let out = evaluate_array(expr, &batch)?;
    Value::from_array(out.as_ref(), 0)
}
