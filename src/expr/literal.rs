//! Constants in expressions.

use std::fmt;
use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::{DataType, IntervalMonthDayNano, IntervalUnit};

use crate::error::{Result, SlothError};

/// A single typed constant. Used for literals only, never per row.
#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue {
    /// Untyped SQL `NULL`.
    Null,
    /// Boolean.
    Boolean(Option<bool>),
    /// 64-bit integer.
    Int64(Option<i64>),
    /// 64-bit float.
    Float64(Option<f64>),
    /// String.
    Utf8(Option<String>),
    /// Days since 1970-01-01.
    Date32(Option<i32>),
    /// Exact decimal: unscaled value, precision, scale.
    Decimal128(Option<i128>, u8, i8),
    /// Calendar interval: months, days, nanoseconds.
    Interval { months: i32, days: i32, nanos: i64 },
}

impl ScalarValue {
    /// The arrow type of this constant.
    pub fn data_type(&self) -> DataType {
        match self {
            ScalarValue::Null => DataType::Null,
            ScalarValue::Boolean(_) => DataType::Boolean,
            ScalarValue::Int64(_) => DataType::Int64,
            ScalarValue::Float64(_) => DataType::Float64,
            ScalarValue::Utf8(_) => DataType::Utf8,
            ScalarValue::Date32(_) => DataType::Date32,
            ScalarValue::Decimal128(_, p, s) => DataType::Decimal128(*p, *s),
            ScalarValue::Interval { .. } => DataType::Interval(IntervalUnit::MonthDayNano),
        }
    }

    /// True for any null constant.
    pub fn is_null(&self) -> bool {
        matches!(
            self,
            ScalarValue::Null
                | ScalarValue::Boolean(None)
                | ScalarValue::Int64(None)
                | ScalarValue::Float64(None)
                | ScalarValue::Utf8(None)
                | ScalarValue::Date32(None)
                | ScalarValue::Decimal128(None, _, _)
        )
    }

    /// A one-element array holding this value.
    pub fn to_array(&self) -> Result<ArrayRef> {
        Ok(match self {
            ScalarValue::Null => new_null_array(&DataType::Null, 1),
            ScalarValue::Boolean(v) => Arc::new(BooleanArray::from(vec![*v])),
            ScalarValue::Int64(v) => Arc::new(Int64Array::from(vec![*v])),
            ScalarValue::Float64(v) => Arc::new(Float64Array::from(vec![*v])),
            ScalarValue::Utf8(v) => Arc::new(StringArray::from(vec![v.clone()])),
            ScalarValue::Date32(v) => Arc::new(Date32Array::from(vec![*v])),
            ScalarValue::Decimal128(v, p, s) => {
                Arc::new(Decimal128Array::from(vec![*v]).with_precision_and_scale(*p, *s)?)
            }
            ScalarValue::Interval {
                months,
                days,
                nanos,
            } => Arc::new(IntervalMonthDayNanoArray::from(vec![
                IntervalMonthDayNano::new(*months, *days, *nanos),
            ])),
        })
    }

    /// Reads element `i` of an array of a supported type (used for constant folding).
    pub fn from_array(array: &dyn Array, i: usize) -> Option<ScalarValue> {
        use arrow::array::AsArray;
        use arrow::datatypes::*;
        if array.is_null(i) {
            return Some(match array.data_type() {
                DataType::Boolean => ScalarValue::Boolean(None),
                DataType::Int64 => ScalarValue::Int64(None),
                DataType::Float64 => ScalarValue::Float64(None),
                DataType::Utf8 => ScalarValue::Utf8(None),
                DataType::Date32 => ScalarValue::Date32(None),
                DataType::Decimal128(p, s) => ScalarValue::Decimal128(None, *p, *s),
                _ => ScalarValue::Null,
            });
        }
        Some(match array.data_type() {
            DataType::Boolean => ScalarValue::Boolean(Some(array.as_boolean().value(i))),
            DataType::Int64 => ScalarValue::Int64(Some(array.as_primitive::<Int64Type>().value(i))),
            DataType::Float64 => {
                ScalarValue::Float64(Some(array.as_primitive::<Float64Type>().value(i)))
            }
            DataType::Utf8 => {
                ScalarValue::Utf8(Some(array.as_string::<i32>().value(i).to_string()))
            }
            DataType::Date32 => {
                ScalarValue::Date32(Some(array.as_primitive::<Date32Type>().value(i)))
            }
            DataType::Decimal128(p, s) => ScalarValue::Decimal128(
                Some(array.as_primitive::<Decimal128Type>().value(i)),
                *p,
                *s,
            ),
            _ => return None,
        })
    }
}

impl fmt::Display for ScalarValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            return write!(f, "NULL");
        }
        match self {
            ScalarValue::Boolean(Some(v)) => write!(f, "{v}"),
            ScalarValue::Int64(Some(v)) => write!(f, "{v}"),
            ScalarValue::Float64(Some(v)) => write!(f, "{v:?}"),
            ScalarValue::Utf8(Some(v)) => write!(f, "'{}'", v.replace('\'', "''")),
            ScalarValue::Date32(Some(v)) => {
                let d = arrow::temporal_conversions::date32_to_datetime(*v).map(|d| d.date());
                match d {
                    Some(d) => write!(f, "DATE '{d}'"),
                    None => write!(f, "DATE({v})"),
                }
            }
            ScalarValue::Decimal128(Some(v), p, s) => {
                write!(f, "{}", Decimal128Type::format_decimal(*v, *p, *s))
            }
            ScalarValue::Interval {
                months,
                days,
                nanos,
            } => {
                write!(f, "INTERVAL '{months} months {days} days {nanos} ns'")
            }
            _ => write!(f, "NULL"),
        }
    }
}

use arrow::datatypes::{Decimal128Type, DecimalType};

impl From<i64> for ScalarValue {
    fn from(v: i64) -> Self {
        ScalarValue::Int64(Some(v))
    }
}
impl From<i32> for ScalarValue {
    fn from(v: i32) -> Self {
        ScalarValue::Int64(Some(v as i64))
    }
}
impl From<u32> for ScalarValue {
    fn from(v: u32) -> Self {
        ScalarValue::Int64(Some(v as i64))
    }
}
impl From<u64> for ScalarValue {
    fn from(v: u64) -> Self {
        ScalarValue::Int64(Some(v as i64))
    }
}
impl From<f64> for ScalarValue {
    fn from(v: f64) -> Self {
        ScalarValue::Float64(Some(v))
    }
}
impl From<bool> for ScalarValue {
    fn from(v: bool) -> Self {
        ScalarValue::Boolean(Some(v))
    }
}
impl From<&str> for ScalarValue {
    fn from(v: &str) -> Self {
        ScalarValue::Utf8(Some(v.to_string()))
    }
}
impl From<String> for ScalarValue {
    fn from(v: String) -> Self {
        ScalarValue::Utf8(Some(v))
    }
}

/// Parses `YYYY-MM-DD` into days since the epoch.
pub fn parse_date32(s: &str) -> Option<i32> {
    use arrow::datatypes::Date32Type;
    let d = chrono_parse(s)?;
    Some(Date32Type::from_naive_date(d))
}

fn chrono_parse(s: &str) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").ok()
}

/// A date literal from `YYYY-MM-DD`.
pub fn date(s: &str) -> ScalarValue {
    ScalarValue::Date32(parse_date32(s))
}

/// A numeric constant from its text, as SQL reads it: integers are `Int64`;
/// numbers with a point are exact decimals (as in DuckDB), so `0.06 - 0.01`
/// compares exactly with a decimal column; anything else (`1e3`) is `Float64`.
pub fn number(s: &str) -> Result<ScalarValue> {
    if let Ok(i) = s.parse::<i64>() {
        return Ok(ScalarValue::Int64(Some(i)));
    }
    // An integer past i64 stays exact as a decimal of scale 0 (DuckDB's
    // HUGEINT, PostgreSQL's numeric), up to 38 digits.
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let digits = s.trim_start_matches('0');
        return match digits.parse::<i128>() {
            Ok(v) if digits.len() <= 38 => {
                Ok(ScalarValue::Decimal128(Some(v), digits.len() as u8, 0))
            }
            _ => Err(SlothError::plan(format!(
                "integer literal {s} has more than 38 digits"
            ))),
        };
    }
    if let Some((int, frac)) = s.split_once('.')
        && !s.contains(['e', 'E'])
        && int.len() + frac.len() <= 38
    {
        let digits = format!("{int}{frac}");
        if let Ok(v) = digits.parse::<i128>() {
            let precision = digits.trim_start_matches('0').len().max(frac.len()).max(1) as u8;
            return Ok(ScalarValue::Decimal128(
                Some(v),
                precision,
                frac.len() as i8,
            ));
        }
    }
    s.parse::<f64>()
        .map(|f| ScalarValue::Float64(Some(f)))
        .map_err(|_| SlothError::plan(format!("invalid number '{s}'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_past_i64_stay_exact_as_decimals() {
        assert_eq!(
            number("12345678901234567890").unwrap(),
            ScalarValue::Decimal128(Some(12345678901234567890), 20, 0)
        );
        let max = "9".repeat(38);
        assert_eq!(
            number(&max).unwrap(),
            ScalarValue::Decimal128(Some(max.parse().unwrap()), 38, 0)
        );
        assert!(number(&"9".repeat(39)).is_err());
        assert_eq!(number("42").unwrap(), ScalarValue::Int64(Some(42)));
    }

    #[test]
    fn numbers_with_a_point_are_decimals() {
        assert_eq!(
            number("0.06").unwrap(),
            ScalarValue::Decimal128(Some(6), 2, 2)
        );
        assert_eq!(number("12").unwrap(), ScalarValue::Int64(Some(12)));
        assert_eq!(number("1e3").unwrap(), ScalarValue::Float64(Some(1000.0)));
    }
}
