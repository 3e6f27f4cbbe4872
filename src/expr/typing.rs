//! Type coercion: which common type two operands are brought to.
//!
//! The rules follow SQL engines (DuckDB, DataFusion): integers widen, an
//! integer meeting a decimal becomes a decimal (exact arithmetic stays exact),
//! anything meeting a float becomes Float64, strings compare with strings and,
//! as literals, with dates.

use arrow::datatypes::DataType;

use crate::error::{Result, SlothError};

use super::{AggFunc, Operator, WindowFunc};

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn int_as_decimal(t: &DataType) -> Option<DataType> {
    Some(match t {
        DataType::Int8 | DataType::UInt8 => DataType::Decimal128(3, 0),
        DataType::Int16 | DataType::UInt16 => DataType::Decimal128(5, 0),
        DataType::Int32 | DataType::UInt32 => DataType::Decimal128(10, 0),
        DataType::Int64 => DataType::Decimal128(19, 0),
        DataType::UInt64 => DataType::Decimal128(20, 0),
        _ => return None,
    })
}

fn int_rank(t: &DataType) -> Option<(bool, u8)> {
    Some(match t {
        DataType::Int8 => (true, 1),
        DataType::Int16 => (true, 2),
        DataType::Int32 => (true, 4),
        DataType::Int64 => (true, 8),
        DataType::UInt8 => (false, 1),
        DataType::UInt16 => (false, 2),
        DataType::UInt32 => (false, 4),
        DataType::UInt64 => (false, 8),
        _ => return None,
    })
}

fn wider_int(l: &DataType, r: &DataType) -> Option<DataType> {
    let (ls, lw) = int_rank(l)?;
    let (rs, rw) = int_rank(r)?;
    if ls == rs {
        return Some(if lw >= rw { l.clone() } else { r.clone() });
    }
    // Mixed signedness: the signed type wide enough for both.
    let (uw, sw) = if ls { (rw, lw) } else { (lw, rw) };
    Some(match uw.max(sw / 2) {
        1 => DataType::Int16,
        2 => DataType::Int32,
        _ => DataType::Int64,
    })
}

fn decimal_union(p1: u8, s1: i8, p2: u8, s2: i8) -> DataType {
    let scale = s1.max(s2);
    let int_digits = (p1 as i16 - s1 as i16).max(p2 as i16 - s2 as i16);
    let precision = (int_digits + scale as i16).clamp(1, 38) as u8;
    DataType::Decimal128(precision, scale)
}

/// The type both operands of a comparison (or of `CASE` branches, `IN` lists,
/// `UNION` columns) are cast to.
pub fn common_type(l: &DataType, r: &DataType) -> Option<DataType> {
    use DataType::*;
    if l == r {
        return Some(l.clone());
    }
    Some(match (l, r) {
        (Null, t) | (t, Null) => t.clone(),
        (a, b) if is_string(a) && is_string(b) => {
            if matches!(a, Utf8View) || matches!(b, Utf8View) {
                Utf8View
            } else {
                LargeUtf8
            }
        }
        (Date32, s) | (s, Date32) if is_string(s) => Date32,
        (Timestamp(u, tz), s) | (s, Timestamp(u, tz)) if is_string(s) => Timestamp(*u, tz.clone()),
        (Date32, Timestamp(u, tz)) | (Timestamp(u, tz), Date32) => Timestamp(*u, tz.clone()),
        (Decimal128(p1, s1), Decimal128(p2, s2)) => decimal_union(*p1, *s1, *p2, *s2),
        (Decimal128(p, s), i) | (i, Decimal128(p, s)) if int_rank(i).is_some() => {
            let DataType::Decimal128(ip, is) = int_as_decimal(i)? else {
                return None;
            };
            decimal_union(*p, *s, ip, is)
        }
        (Float32 | Float64, t) | (t, Float32 | Float64) if t.is_numeric() => Float64,
        (a, b) if int_rank(a).is_some() && int_rank(b).is_some() => wider_int(a, b)?,
        _ => return None,
    })
}

/// The one type a list of values is cast to (CASE's branches, coalesce's
/// arguments, an IN list and its value), each value given as its type and
/// whether it is a string constant. As in PostgreSQL, where a quoted
/// literal has no type of its own, string constants take the type the
/// other values share (`int_col IN ('25', '155')`, `coalesce(n, '-1')`)
/// and are cast to it; without other values they are strings.
pub fn common_type_of_values(values: &[(&DataType, bool)]) -> Option<DataType> {
    let all = || {
        values
            .iter()
            .try_fold(DataType::Null, |t, (v, _)| common_type(&t, v))
    };
    let typed = values
        .iter()
        .filter(|(_, string_constant)| !string_constant)
        .try_fold(DataType::Null, |t, (v, _)| common_type(&t, v))?;
    if typed == DataType::Null || is_string(&typed) {
        all()
    } else {
        Some(typed)
    }
}

/// The types the operands of `l op r` are cast to before the kernel runs.
pub fn coerce_binary(op: Operator, l: &DataType, r: &DataType) -> Result<(DataType, DataType)> {
    use DataType::*;
    let mismatch = || SlothError::types(format!("cannot apply '{}' to {l} and {r}", op_name(op)));
    match op {
        Operator::And | Operator::Or => {
            for t in [l, r] {
                if !matches!(t, Boolean | Null) {
                    return Err(SlothError::types(format!(
                        "'{}' needs Boolean operands, got {l} and {r}",
                        op_name(op)
                    )));
                }
            }
            Ok((Boolean, Boolean))
        }
        op if op.is_arithmetic() => match (l, r) {
            (Date32 | Timestamp(..), Interval(_)) | (Interval(_), Date32 | Timestamp(..)) => {
                Ok((l.clone(), r.clone()))
            }
            (Date32, Date32) if op == Operator::Minus => Ok((Int64, Int64)),
            // Like DuckDB: a quotient of decimals is a double (arrow's fixed
            // 4 extra digits would truncate ratios such as TPC-H Q8's).
            (Decimal128(..), t) | (t, Decimal128(..))
                if op == Operator::Divide && (t.is_numeric()) =>
            {
                Ok((Float64, Float64))
            }
            (Decimal128(..), Decimal128(..)) => Ok((l.clone(), r.clone())),
            (Decimal128(..), i) if int_rank(i).is_some() => {
                Ok((l.clone(), int_as_decimal(i).unwrap()))
            }
            (i, Decimal128(..)) if int_rank(i).is_some() => {
                Ok((int_as_decimal(i).unwrap(), r.clone()))
            }
            (a, b) if (a.is_numeric() || *a == Null) && (b.is_numeric() || *b == Null) => {
                let t = common_type(a, b).ok_or_else(mismatch)?;
                let t = if t == Null { Int64 } else { t };
                Ok((t.clone(), t))
            }
            _ => Err(mismatch()),
        },
        _ => {
            let t = common_type(l, r).ok_or_else(mismatch)?;
            Ok((t.clone(), t))
        }
    }
}

fn op_name(op: Operator) -> String {
    super::Expr::Binary {
        left: Box::new(super::Expr::Column("a".into())),
        op,
        right: Box::new(super::Expr::Column("b".into())),
    }
    .to_string()
    .trim_start_matches("(a ")
    .trim_end_matches(" b)")
    .to_string()
}

/// The output type of a window function over arguments of the given types:
/// an aggregate's, the argument's for lag / lead, an integer for ranks and
/// ntile, a float for percent_rank and cume_dist.
pub fn window_output_type(func: WindowFunc, args: &[DataType]) -> Result<DataType> {
    match func {
        WindowFunc::Aggregate(f) | WindowFunc::FramedAggregate(f, _) => agg_output_type(f, args),
        WindowFunc::Lag(_)
        | WindowFunc::Lead(_)
        | WindowFunc::ShiftPresent(_)
        | WindowFunc::Value(..) => Ok(args[0].clone()),
        WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank | WindowFunc::Ntile(_) => {
            Ok(DataType::Int64)
        }
        WindowFunc::PercentRank | WindowFunc::CumeDist => Ok(DataType::Float64),
    }
}

/// The output type of an aggregate over inputs of the given types.
pub fn agg_output_type(func: AggFunc, inputs: &[DataType]) -> Result<DataType> {
    let input = inputs.first();
    let numeric = |name: &str| -> Result<&DataType> {
        match input {
            Some(t) if t.is_numeric() || *t == DataType::Null => Ok(t),
            Some(t) => Err(SlothError::types(format!(
                "{name}() needs a numeric column, got {t}"
            ))),
            None => Err(SlothError::plan(format!("{name}() needs an argument"))),
        }
    };
    Ok(match func {
        AggFunc::Count | AggFunc::CountStar | AggFunc::NUnique => DataType::Int64,
        AggFunc::Sum => match numeric("sum")? {
            DataType::Decimal128(_, s) => DataType::Decimal128(38, *s),
            t if t.is_floating() => DataType::Float64,
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
                DataType::UInt64
            }
            _ => DataType::Int64,
        },
        AggFunc::Mean | AggFunc::Std | AggFunc::Var | AggFunc::Median | AggFunc::Quantile(_) => {
            numeric(func.name())?;
            DataType::Float64
        }
        AggFunc::Bivariate(b) => {
            if inputs.len() != 2
                || !inputs
                    .iter()
                    .all(|t| t.is_numeric() || *t == DataType::Null)
            {
                return Err(SlothError::types(format!(
                    "{}() needs two numeric arguments, got {inputs:?}",
                    b.name()
                )));
            }
            DataType::Float64
        }
        AggFunc::Bitwise(_) => match input {
            Some(t) if t.is_integer() => t.clone(),
            Some(DataType::Null) => DataType::Int64,
            Some(t) => {
                return Err(SlothError::types(format!(
                    "{}() needs an integer argument, got {t}",
                    func.name()
                )));
            }
            None => {
                return Err(SlothError::plan(format!(
                    "{}() needs an argument",
                    func.name()
                )));
            }
        },
        AggFunc::ArrayAgg(order) => match input {
            Some(t) if inputs.len() == 1 + order.is_some() as usize => DataType::List(
                std::sync::Arc::new(arrow::datatypes::Field::new("item", t.clone(), true)),
            ),
            _ => return Err(SlothError::plan("array_agg() takes one value")),
        },
        AggFunc::StringAgg(order) => {
            if inputs.len() != 2 + order.is_some() as usize {
                return Err(SlothError::plan(
                    "string_agg() takes a value and a separator",
                ));
            }
            DataType::Utf8
        }
        AggFunc::FirstBy(_) if inputs.len() != 2 => {
            return Err(SlothError::plan(format!(
                "{}() takes a value and a key",
                func.name()
            )));
        }
        AggFunc::Min | AggFunc::Max | AggFunc::First | AggFunc::Last | AggFunc::FirstBy(_) => input
            .cloned()
            .ok_or_else(|| SlothError::plan(format!("{}() needs an argument", func.name())))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_widen_and_decimals_stay_exact() {
        assert_eq!(
            common_type(&DataType::Int32, &DataType::Int64),
            Some(DataType::Int64)
        );
        assert_eq!(
            common_type(&DataType::UInt8, &DataType::Int8),
            Some(DataType::Int16)
        );
        assert_eq!(
            common_type(&DataType::Decimal128(15, 2), &DataType::Int64),
            Some(DataType::Decimal128(21, 2))
        );
        assert_eq!(
            common_type(&DataType::Decimal128(15, 2), &DataType::Decimal128(10, 4)),
            Some(DataType::Decimal128(17, 4))
        );
        assert_eq!(
            common_type(&DataType::Decimal128(15, 2), &DataType::Float64),
            Some(DataType::Float64)
        );
    }

    #[test]
    fn strings_meet_dates_and_views() {
        assert_eq!(
            common_type(&DataType::Utf8View, &DataType::Utf8),
            Some(DataType::Utf8View)
        );
        assert_eq!(
            common_type(&DataType::Date32, &DataType::Utf8),
            Some(DataType::Date32)
        );
        assert_eq!(common_type(&DataType::Boolean, &DataType::Int64), None);
    }

    #[test]
    fn mismatches_name_both_types() {
        let err = coerce_binary(Operator::Plus, &DataType::Utf8, &DataType::Int64).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("Utf8") && msg.contains("Int64") && msg.contains('+'),
            "{msg}"
        );
    }
}
