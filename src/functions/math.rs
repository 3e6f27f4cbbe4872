//! Numeric functions: the float functions of [`MathFunc`] (`sqrt`, `ln`,
//! trigonometry, ..), `power`, `abs`, `round`, and `floor / ceil / trunc /
//! sign`.
//!
//! Float functions follow IEEE outside their domain (`sqrt(-1)` is NaN),
//! as DuckDB does. A new float function is one line of the `math_funcs!`
//! table in `expr/mod.rs`; this file registers every entry of it.

use std::sync::Arc;

use arrow::array::AsArray;
use arrow::array::{ArrayRef, Float64Array, Int64Array, Scalar};
use arrow::compute::cast;
use arrow::compute::kernels::{cmp, numeric, zip::zip};
use arrow::datatypes::{DataType, Float64Type, Int64Type};

use super::{aligned, on_first};
use crate::error::{Result, SlothError};
use crate::expr::function::{
    ArgType, ColumnarValue, Signature, check_arity, constant_i64, need_number,
};
use crate::expr::value::Value;
use crate::expr::{Expr, MathFunc, ScalarFunc, ScalarFunction, lit};
use crate::kernels::math::{self, Rounding};

pub(super) fn functions() -> Vec<ScalarFunc> {
    let floats = MathFunc::ALL.iter().map(|m| ScalarFunc::new(m));
    floats
        .chain([POWER, ABS, ROUND, FLOOR, CEIL, TRUNC, SIGN])
        .chain([ATAN2, GCD, LCM, ISNAN])
        .collect()
}

/// `log10(x)`, also SQL's one-argument `log(x)`.
pub const LOG10: ScalarFunc = ScalarFunc::new(&MathFunc::Log10);
/// `power(a, b)`, as floats.
pub const POWER: ScalarFunc = ScalarFunc::new(&Power);
/// Absolute value, in the argument's type.
pub const ABS: ScalarFunc = ScalarFunc::new(&Abs);
/// Round to n decimals (default 0).
pub const ROUND: ScalarFunc = ScalarFunc::new(&Round);
/// Largest integer not above (ints unchanged; decimals to scale 0).
pub const FLOOR: ScalarFunc = ScalarFunc::new(&Integral {
    rounding: Rounding::Floor,
    names: &["floor"],
});
/// Smallest integer not below.
pub const CEIL: ScalarFunc = ScalarFunc::new(&Integral {
    rounding: Rounding::Ceil,
    names: &["ceil", "ceiling"],
});
/// Toward zero.
pub const TRUNC: ScalarFunc = ScalarFunc::new(&Integral {
    rounding: Rounding::Trunc,
    names: &["trunc", "truncate"],
});
/// -1, 0 or 1.
pub const SIGN: ScalarFunc = ScalarFunc::new(&Integral {
    rounding: Rounding::Sign,
    names: &["sign"],
});

impl ScalarFunction for MathFunc {
    fn names(&self) -> &'static [&'static str] {
        MathFunc::sql_names(*self)
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity(self.name(), args.len(), 1, 1)?;
        need_number(self.name(), args[0].data_type)?;
        Ok(Signature::all_cast(1, DataType::Float64, DataType::Float64))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        on_first(args, |a| Ok(math::math(a, *self)))
    }
}

/// `atan2(y, x)`: the angle of the point (x, y), as floats.
pub const ATAN2: ScalarFunc = ScalarFunc::new(&FloatPair {
    names: &["atan2"],
    apply: f64::atan2,
});
/// Greatest common divisor of two integers (always non-negative).
pub const GCD: ScalarFunc = ScalarFunc::new(&IntPair {
    names: &["gcd"],
    apply: gcd,
});
/// Least common multiple of two integers (0 when either is 0).
pub const LCM: ScalarFunc = ScalarFunc::new(&IntPair {
    names: &["lcm"],
    apply: lcm,
});
/// Whether a float is NaN.
pub const ISNAN: ScalarFunc = ScalarFunc::new(&IsNan);

/// A float function of two floats.
#[derive(Debug)]
struct FloatPair {
    names: &'static [&'static str],
    apply: fn(f64, f64) -> f64,
}

impl ScalarFunction for FloatPair {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity(self.name(), args.len(), 2, 2)?;
        for a in args {
            need_number(self.name(), a.data_type)?;
        }
        Ok(Signature::all_cast(2, DataType::Float64, DataType::Float64))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, rows: usize) -> Result<ColumnarValue> {
        let (arrays, constant) = aligned(args, rows)?;
        let out: Float64Array = arrow::compute::binary(
            arrays[0].as_primitive::<Float64Type>(),
            arrays[1].as_primitive::<Float64Type>(),
            self.apply,
        )?;
        Ok(ColumnarValue::wrap(Arc::new(out), constant))
    }
}

/// An integer function of two integers; `None` is an overflow.
#[derive(Debug)]
pub(super) struct IntPair {
    /// The SQL names.
    pub(super) names: &'static [&'static str],
    /// The function of two Int64 values; `None` for an overflow.
    pub(super) apply: fn(i64, i64) -> Option<i64>,
}

impl ScalarFunction for IntPair {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity(self.name(), args.len(), 2, 2)?;
        for a in args {
            if !a.data_type.is_integer() && *a.data_type != DataType::Null {
                return Err(SlothError::types(format!(
                    "{}() needs integers, got {}",
                    self.name(),
                    a.data_type
                )));
            }
        }
        Ok(Signature::all_cast(2, DataType::Int64, DataType::Int64))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, rows: usize) -> Result<ColumnarValue> {
        let (arrays, constant) = aligned(args, rows)?;
        let (a, b) = (
            arrays[0].as_primitive::<Int64Type>(),
            arrays[1].as_primitive::<Int64Type>(),
        );
        let out: Int64Array = arrow::compute::try_binary(a, b, |x, y| {
            (self.apply)(x, y).ok_or_else(|| {
                arrow::error::ArrowError::ComputeError(format!(
                    "{}({x}, {y}) overflows Int64",
                    self.name()
                ))
            })
        })?;
        Ok(ColumnarValue::wrap(Arc::new(out), constant))
    }
}

fn gcd(a: i64, b: i64) -> Option<i64> {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).ok()
}

fn lcm(a: i64, b: i64) -> Option<i64> {
    if a == 0 || b == 0 {
        return Some(0);
    }
    (a / gcd(a, b)?).checked_mul(b).map(i64::abs)
}

#[derive(Debug)]
struct IsNan;

impl ScalarFunction for IsNan {
    fn names(&self) -> &'static [&'static str] {
        &["isnan"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("isnan", args.len(), 1, 1)?;
        need_number("isnan", args[0].data_type)?;
        Ok(Signature::all_cast(1, DataType::Float64, DataType::Boolean))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        on_first(args, |a| {
            let nan: arrow::array::BooleanArray = a
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.map(f64::is_nan))
                .collect();
            Ok(Arc::new(nan) as ArrayRef)
        })
    }
}

#[derive(Debug)]
struct Power;

impl ScalarFunction for Power {
    fn names(&self) -> &'static [&'static str] {
        &["power", "pow"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("power", args.len(), 2, 2)?;
        for a in args {
            need_number("power", a.data_type)?;
        }
        Ok(Signature::all_cast(2, DataType::Float64, DataType::Float64))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, rows: usize) -> Result<ColumnarValue> {
        let (arrays, constant) = aligned(args, rows)?;
        Ok(ColumnarValue::wrap(
            math::power(&arrays[0], &arrays[1])?,
            constant,
        ))
    }
}

#[derive(Debug)]
struct Abs;

impl ScalarFunction for Abs {
    fn names(&self) -> &'static [&'static str] {
        &["abs"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("abs", args.len(), 1, 1)?;
        if !args[0].data_type.is_numeric() {
            return Err(SlothError::types(format!(
                "abs() needs a number, got {}",
                args[0].data_type
            )));
        }
        Ok(Signature::returning(1, args[0].data_type.clone()))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        on_first(args, |a| {
            let zero = cast(&Int64Array::from(vec![0]), a.data_type())?;
            let negative = cmp::lt(a, &Scalar::new(zero))?;
            Ok(zip(&negative, &numeric::neg(a)?, a)?)
        })
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        Some(Ok(match args[0] {
            Value::Null => Value::Null,
            Value::Int(v) => Value::Int(v.abs()),
            Value::Float(v) => Value::Float(v.abs()),
            Value::Decimal(v, s) => Value::Decimal(v.abs(), s),
            _ => return None,
        }))
    }
}

#[derive(Debug)]
struct Round;

impl ScalarFunction for Round {
    fn names(&self) -> &'static [&'static str] {
        &["round"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("round", args.len(), 1, 2)?;
        let t = args[0].data_type;
        if !t.is_numeric() {
            return Err(SlothError::types(format!(
                "round() needs a number, got {t}"
            )));
        }
        let digits = match args.get(1) {
            None => 0,
            Some(a) => constant_i64(
                a.constant
                    .ok_or_else(|| SlothError::unsupported("round() digits must be a constant"))?,
            )?,
        };
        let output = match t {
            DataType::Decimal128(p, _) => DataType::Decimal128(*p, digits.clamp(0, 38) as i8),
            t if t.is_integer() => t.clone(),
            _ => DataType::Float64,
        };
        Ok(Signature::returning(args.len(), output))
    }
    fn invoke(&self, args: &[ColumnarValue], output: &DataType, _: usize) -> Result<ColumnarValue> {
        let digits = match args.get(1) {
            Some(d) => constant_i64(d.array())?,
            None => 0,
        };
        on_first(args, |a| round(a, digits, output))
    }
}

fn round(a: &ArrayRef, digits: i64, output: &DataType) -> Result<ArrayRef> {
    match a.data_type() {
        DataType::Decimal128(..) => Ok(cast(a, output)?),
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

/// `floor`, `ceil`, `trunc` or `sign`.
#[derive(Debug)]
struct Integral {
    rounding: Rounding,
    names: &'static [&'static str],
}

impl ScalarFunction for Integral {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity(self.name(), args.len(), 1, 1)?;
        need_number(self.name(), args[0].data_type)?;
        let output = match (args[0].data_type, self.rounding) {
            (_, Rounding::Sign) => DataType::Int64,
            (DataType::Decimal128(p, _), _) => DataType::Decimal128(*p, 0),
            (t, _) if t.is_integer() => t.clone(),
            _ => DataType::Float64,
        };
        Ok(Signature::returning(1, output))
    }
    fn invoke(&self, args: &[ColumnarValue], output: &DataType, _: usize) -> Result<ColumnarValue> {
        on_first(args, |a| math::integral(a, self.rounding, output))
    }
}

impl Expr {
    /// A float function of this expression: `col("x").math(MathFunc::Sqrt)`.
    pub fn math(self, f: MathFunc) -> Expr {
        Expr::Function(ScalarFunc::new(f.as_static()), vec![self])
    }
    /// `power(self, exponent)`, as floats.
    pub fn pow(self, exponent: impl Into<Expr>) -> Expr {
        Expr::Function(POWER, vec![self, exponent.into()])
    }
    /// Rounds to `decimals` places.
    pub fn round(self, decimals: i64) -> Expr {
        Expr::Function(ROUND, vec![self, lit(decimals)])
    }
}

super::unary_builders! {
    /// The absolute value.
    abs => ABS;
    /// The largest integer not above.
    floor => FLOOR;
    /// The smallest integer not below.
    ceil => CEIL;
    /// Toward zero.
    trunc => TRUNC;
    /// -1, 0 or 1.
    sign => SIGN;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::col;
    use crate::functions::test_util::{eval, try_eval};
    use arrow::array::{Array, Decimal128Array, Int32Array};

    #[test]
    fn pairs_of_numbers() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(12), Some(-4), None, Some(0)]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![Some(18), Some(6), Some(1), Some(5)]));
        let cols = [("a", a), ("b", b)];
        let ints = |f| {
            let out = eval(Expr::Function(f, vec![col("a"), col("b")]), &cols);
            out.as_primitive::<Int64Type>().iter().collect::<Vec<_>>()
        };
        assert_eq!(ints(GCD), vec![Some(6), Some(2), None, Some(5)]);
        assert_eq!(ints(LCM), vec![Some(36), Some(12), None, Some(0)]);
        let overflow = try_eval(
            Expr::Function(LCM, vec![lit(i64::MAX), lit(i64::MAX - 1)]),
            &cols,
        );
        assert!(
            overflow
                .unwrap_err()
                .to_string()
                .contains("overflows Int64")
        );
        let angle = eval(Expr::Function(ATAN2, vec![lit(1.0), lit(1.0)]), &cols);
        let angle = angle.as_primitive::<Float64Type>().value(0);
        assert!((angle - std::f64::consts::FRAC_PI_4).abs() < 1e-12);
    }

    #[test]
    fn each_float_function_is_registered_under_its_sql_name() {
        for m in MathFunc::ALL {
            assert_eq!(crate::functions::lookup(m.name()), Some(ScalarFunc::new(m)));
        }
    }

    #[test]
    fn types_follow_the_argument_and_abs_agrees_row_by_row() {
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(-3), None, Some(4)]));
        let out = eval(col("i").abs(), &[("i", ints.clone())]);
        assert_eq!(out.data_type(), &DataType::Int32);
        for i in 0..3 {
            let v = Value::from_array(ints.as_ref(), i).unwrap();
            let row = ABS.function().invoke_row(&[v]).unwrap().unwrap();
            let cell = Value::from_array(out.as_ref(), i).unwrap();
            assert_eq!(format!("{row:?}"), format!("{cell:?}"));
        }
        let dec: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(12345)])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        );
        let rounded = eval(col("d").round(1), &[("d", dec.clone())]);
        assert_eq!(rounded.data_type(), &DataType::Decimal128(10, 1));
        let floor = eval(col("d").floor(), &[("d", dec)]);
        assert_eq!(floor.data_type(), &DataType::Decimal128(10, 0));
        let sqrt = eval(col("i").math(MathFunc::Sqrt), &[("i", ints.clone())]);
        assert_eq!(sqrt.as_primitive::<Float64Type>().value(2), 2.0);
        assert!(sqrt.as_primitive::<Float64Type>().value(0).is_nan());
        let err = try_eval(
            Expr::Function(ROUND, vec![col("i"), col("i")]),
            &[("i", ints)],
        );
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("round() digits must be a constant")
        );
    }
}
