//! One cell as a dynamically typed value: what a tuple-at-a-time engine
//! passes around. Converting to and from Arrow happens once per cell at the
//! edges (scan, output).

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::*;

use crate::error::{Result, SlothError};

/// A single value of any supported type.
#[derive(Debug, Clone)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// Boolean.
    Bool(bool),
    /// Any signed or unsigned integer (unsigned 64-bit above i64::MAX is not supported).
    Int(i64),
    /// Float32 or Float64.
    Float(f64),
    /// Any string type.
    Str(Arc<str>),
    /// Date32 days (also Date64 / timestamps as their raw i64 in `Int`).
    Date(i32),
    /// Decimal128 unscaled value and scale.
    Decimal(i128, i8),
}

/// A row: one value per column.
pub type Row = Vec<Value>;

impl Value {
    /// True for NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Reads cell `i` of `array`.
    pub fn from_array(array: &dyn Array, i: usize) -> Result<Value> {
        if array.is_null(i) {
            return Ok(Value::Null);
        }
        Ok(match array.data_type() {
            // A NullArray has no null buffer: every value is a logical null.
            DataType::Null => Value::Null,
            DataType::Boolean => Value::Bool(array.as_boolean().value(i)),
            DataType::Int8 => Value::Int(array.as_primitive::<Int8Type>().value(i) as i64),
            DataType::Int16 => Value::Int(array.as_primitive::<Int16Type>().value(i) as i64),
            DataType::Int32 => Value::Int(array.as_primitive::<Int32Type>().value(i) as i64),
            DataType::Int64 => Value::Int(array.as_primitive::<Int64Type>().value(i)),
            DataType::UInt8 => Value::Int(array.as_primitive::<UInt8Type>().value(i) as i64),
            DataType::UInt16 => Value::Int(array.as_primitive::<UInt16Type>().value(i) as i64),
            DataType::UInt32 => Value::Int(array.as_primitive::<UInt32Type>().value(i) as i64),
            DataType::UInt64 => Value::Int(array.as_primitive::<UInt64Type>().value(i) as i64),
            DataType::Float32 => Value::Float(array.as_primitive::<Float32Type>().value(i) as f64),
            DataType::Float64 => Value::Float(array.as_primitive::<Float64Type>().value(i)),
            DataType::Utf8 => Value::Str(array.as_string::<i32>().value(i).into()),
            DataType::LargeUtf8 => Value::Str(array.as_string::<i64>().value(i).into()),
            DataType::Utf8View => Value::Str(array.as_string_view().value(i).into()),
            DataType::Date32 => Value::Date(array.as_primitive::<Date32Type>().value(i)),
            DataType::Decimal128(_, s) => {
                Value::Decimal(array.as_primitive::<Decimal128Type>().value(i), *s)
            }
            t => {
                return Err(SlothError::unsupported(format!(
                    "row-wise execution of {t} values"
                )));
            }
        })
    }

    /// SQL comparison (None when either side is NULL).
    pub fn sql_cmp(&self, other: &Value) -> Option<Ordering> {
        use Value::*;
        Some(match (self, other) {
            (Null, _) | (_, Null) => return None,
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            // -0.0 = 0.0; NaN equals itself and follows every number.
            (Float(a), Float(b)) => canonical(*a).total_cmp(&canonical(*b)),
            (Int(a), Float(b)) => (*a as f64).total_cmp(&canonical(*b)),
            (Float(a), Int(b)) => canonical(*a).total_cmp(&(*b as f64)),
            (Str(a), Str(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (Decimal(a, sa), Decimal(b, sb)) => {
                let s = (*sa).max(*sb);
                rescale(*a, *sa, s).cmp(&rescale(*b, *sb, s))
            }
            _ => return None,
        })
    }

    /// Total order for sorting: NULL compares as `nulls_first` says.
    pub fn sort_cmp(&self, other: &Value, nulls_first: bool) -> Ordering {
        match (self.is_null(), other.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            _ => self.sql_cmp(other).unwrap_or(Ordering::Equal),
        }
    }

    /// As f64 (numbers only).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(v) => Some(*v as f64),
            Value::Float(v) => Some(*v),
            Value::Decimal(v, s) => Some(*v as f64 / 10f64.powi(*s as i32)),
            _ => None,
        }
    }
}

/// `v` with scale `from` expressed at scale `to` (to ≥ from).
pub fn rescale(v: i128, from: i8, to: i8) -> i128 {
    if to >= from {
        v * 10i128.pow((to - from) as u32)
    } else {
        v / 10i128.pow((from - to) as u32)
    }
}

/// `v` as SQL compares it: `-0.0` is `0.0` and every NaN the positive NaN,
/// so that under `total_cmp` and by bits zeros are equal, NaNs are equal
/// and NaN is above every number (as `kernels::float_zero` for columns).
fn canonical(v: f64) -> f64 {
    if v.is_nan() { f64::NAN } else { v + 0.0 }
}

// Grouping and join keys: NULLs equal each other, floats by their
// canonical bits.
impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Float(a), Float(b)) => canonical(*a).to_bits() == canonical(*b).to_bits(),
            _ => self.sql_cmp(other) == Some(Ordering::Equal),
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Value::Null => 0u8.hash(state),
            Value::Bool(b) => b.hash(state),
            Value::Int(v) => v.hash(state),
            Value::Float(v) => canonical(*v).to_bits().hash(state),
            Value::Str(s) => s.hash(state),
            Value::Date(d) => d.hash(state),
            // Normalize trailing zeros so equal decimals of other scales hash alike.
            Value::Decimal(v, s) => {
                let (mut v, mut s) = (*v, *s);
                while s > 0 && v % 10 == 0 {
                    v /= 10;
                    s -= 1;
                }
                (v, s).hash(state)
            }
        }
    }
}

/// Builds a column of `data_type` from values.
pub fn to_array(values: &[&Value], data_type: &DataType) -> Result<ArrayRef> {
    macro_rules! prim {
        ($arr:ty, $pat:pat => $e:expr) => {
            Arc::new(
                values
                    .iter()
                    .map(|v| match v {
                        $pat => Some($e),
                        _ => None,
                    })
                    .collect::<$arr>(),
            ) as ArrayRef
        };
    }
    let a: ArrayRef = match data_type {
        DataType::Null => new_null_array(&DataType::Null, values.len()),
        DataType::Boolean => prim!(BooleanArray, Value::Bool(b) => *b),
        DataType::Float64 | DataType::Float32 => {
            let f = prim!(Float64Array, Value::Float(f) => *f);
            arrow::compute::cast(&f, data_type)?
        }
        DataType::Date32 => prim!(Date32Array, Value::Date(d) => *d),
        DataType::Decimal128(p, s) => {
            let s = *s;
            let d = values
                .iter()
                .map(|v| match v {
                    Value::Decimal(x, vs) => Some(rescale(*x, *vs, s)),
                    Value::Int(x) => Some(rescale(*x as i128, 0, s)),
                    _ => None,
                })
                .collect::<Decimal128Array>()
                .with_precision_and_scale(*p, s)?;
            Arc::new(d)
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let s = values
                .iter()
                .map(|v| match v {
                    Value::Str(s) => Some(s.as_ref()),
                    _ => None,
                })
                .collect::<StringArray>();
            arrow::compute::cast(&s, data_type)?
        }
        t if t.is_integer() || matches!(t, DataType::Date64 | DataType::Timestamp(..)) => {
            let i = prim!(Int64Array, Value::Int(i) => *i);
            arrow::compute::cast(&i, t)?
        }
        t => return Err(SlothError::unsupported(format!("row-wise output of {t}"))),
    };
    Ok(a)
}
