//! Numeric scalar functions over Arrow arrays: the float functions of
//! [`MathFunc`], `power`, `floor / ceil / trunc / sign`, and
//! `greatest / least`. Each loop is compiled per function (the function is
//! a concrete closure, never a pointer called per row).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Float64Array};
use arrow::compute::kernels::{boolean, cmp};
use arrow::compute::{cast, is_null, prep_null_mask_filter};
use arrow::datatypes::{DataType, Decimal128Type, Float64Type, Int64Type};

use crate::error::{Result, SlothError};
use crate::expr::{MathApply, MathFunc};

/// `m` of every value of a Float64 array.
pub fn math(a: &ArrayRef, m: MathFunc) -> ArrayRef {
    struct Each<'a>(&'a Float64Array);
    impl MathApply<Float64Array> for Each<'_> {
        fn apply(self, f: impl Fn(f64) -> f64 + Copy) -> Float64Array {
            self.0.unary(f)
        }
    }
    Arc::new(m.with(Each(a.as_primitive::<Float64Type>())))
}

/// `power(a, b)` of two Float64 arrays of one length.
pub fn power(a: &ArrayRef, b: &ArrayRef) -> Result<ArrayRef> {
    let out: Float64Array = arrow::compute::binary(
        a.as_primitive::<Float64Type>(),
        b.as_primitive::<Float64Type>(),
        f64::powf,
    )?;
    Ok(Arc::new(out))
}

/// The functions that take a number to an integral value or a sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// Largest integer not above.
    Floor,
    /// Smallest integer not below.
    Ceil,
    /// Toward zero.
    Trunc,
    /// -1, 0 or 1.
    Sign,
}

impl Rounding {
    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            Rounding::Floor => "floor",
            Rounding::Ceil => "ceil",
            Rounding::Trunc => "trunc",
            Rounding::Sign => "sign",
        }
    }
}

/// `floor`, `ceil`, `trunc` or `sign` (`func`) of a numeric array, of type
/// `out` (ints stay ints, decimals go to scale 0, floats to Float64, signs
/// to Int64).
pub fn integral(a: &ArrayRef, func: Rounding, out: &DataType) -> Result<ArrayRef> {
    use Rounding::{Ceil, Floor, Sign, Trunc};
    Ok(match (a.data_type(), func) {
        (DataType::Decimal128(_, scale), _) => {
            let unit = 10i128.pow((*scale).max(0) as u32);
            let d = a.as_primitive::<Decimal128Type>();
            match func {
                Sign => Arc::new(d.unary::<_, Int64Type>(|v| v.signum() as i64)),
                _ => {
                    let r = match func {
                        Floor => d.unary::<_, Decimal128Type>(|v| v.div_euclid(unit)),
                        Ceil => d.unary::<_, Decimal128Type>(|v| -(-v).div_euclid(unit)),
                        _ => d.unary::<_, Decimal128Type>(|v| v / unit),
                    };
                    Arc::new(r.with_data_type(out.clone()))
                }
            }
        }
        (t, Sign) if t.is_integer() => {
            let v = cast(a, &DataType::Int64)?;
            Arc::new(
                v.as_primitive::<Int64Type>()
                    .unary::<_, Int64Type>(i64::signum),
            )
        }
        (t, _) if t.is_integer() => a.clone(),
        (t, _) if t.is_floating() => {
            let v = cast(a, &DataType::Float64)?;
            let v = v.as_primitive::<Float64Type>();
            match func {
                Floor => Arc::new(v.unary::<_, Float64Type>(f64::floor)),
                Ceil => Arc::new(v.unary::<_, Float64Type>(f64::ceil)),
                Trunc => Arc::new(v.unary::<_, Float64Type>(f64::trunc)),
                _ => Arc::new(v.unary::<_, Int64Type>(|x| (x > 0.0) as i64 - (x < 0.0) as i64))
                    as ArrayRef,
            }
        }
        (DataType::Null, _) => arrow::array::new_null_array(out, a.len()),
        (t, _) => {
            return Err(SlothError::types(format!(
                "{}() needs a number, got {t}",
                func.name()
            )));
        }
    })
}

/// The largest (`greatest`) or smallest non-null value of each row across
/// `args`, arrays of one type and length; null where all are null.
pub fn extreme(args: &[ArrayRef], greatest: bool) -> Result<ArrayRef> {
    let mut acc = args[0].clone();
    for b in &args[1..] {
        let beats = if greatest {
            cmp::gt(b, &acc)?
        } else {
            cmp::lt(b, &acc)?
        };
        // A null comparison (either side null) does not beat; a null
        // accumulator takes the next value whatever it is.
        let beats: BooleanArray = match beats.nulls() {
            Some(_) => prep_null_mask_filter(&beats),
            None => beats,
        };
        let take = boolean::or(&is_null(&acc)?, &beats)?;
        acc = arrow::compute::kernels::zip::zip(&take, b, &acc)?;
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Decimal128Array, Int64Array, StringArray};

    fn ints(v: &[Option<i64>]) -> ArrayRef {
        Arc::new(Int64Array::from(v.to_vec()))
    }

    #[test]
    fn floor_ceil_trunc_and_sign_of_decimals_round_toward_the_right_side() {
        let t = DataType::Decimal128(5, 2);
        let a: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(250), Some(-250), Some(-50), Some(300), None])
                .with_data_type(t),
        );
        let out = DataType::Decimal128(5, 0);
        let get = |f| {
            let r = integral(&a, f, &out).unwrap();
            r.as_primitive::<Decimal128Type>()
                .iter()
                .collect::<Vec<_>>()
        };
        // 2.50, -2.50, -0.50, 3.00
        assert_eq!(
            get(Rounding::Floor),
            [Some(2), Some(-3), Some(-1), Some(3), None]
        );
        assert_eq!(
            get(Rounding::Ceil),
            [Some(3), Some(-2), Some(0), Some(3), None]
        );
        assert_eq!(
            get(Rounding::Trunc),
            [Some(2), Some(-2), Some(0), Some(3), None]
        );
        let signs = integral(&a, Rounding::Sign, &DataType::Int64).unwrap();
        assert_eq!(
            signs.as_primitive::<Int64Type>().iter().collect::<Vec<_>>(),
            [Some(1), Some(-1), Some(-1), Some(1), None]
        );
    }

    #[test]
    fn greatest_and_least_skip_nulls() {
        let a = ints(&[Some(1), None, Some(5), None]);
        let b = ints(&[Some(3), Some(2), None, None]);
        let c = ints(&[Some(2), Some(7), Some(-1), None]);
        let g = extreme(&[a.clone(), b.clone(), c.clone()], true).unwrap();
        let l = extreme(&[a, b, c], false).unwrap();
        let vals = |x: ArrayRef| x.as_primitive::<Int64Type>().iter().collect::<Vec<_>>();
        assert_eq!(vals(g), [Some(3), Some(7), Some(5), None]);
        assert_eq!(vals(l), [Some(1), Some(2), Some(-1), None]);
        let s: ArrayRef = Arc::new(StringArray::from(vec![Some("b"), None]));
        let t: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some("z")]));
        let g = extreme(&[s, t], true).unwrap();
        assert_eq!(
            g.as_string::<i32>().iter().collect::<Vec<_>>(),
            [Some("b"), Some("z")]
        );
    }

    #[test]
    fn float_functions_follow_ieee_outside_their_domain() {
        let a: ArrayRef = Arc::new(Float64Array::from(vec![Some(4.0), Some(-1.0), None]));
        let r = math(&a, MathFunc::Sqrt);
        let r = r.as_primitive::<Float64Type>();
        assert_eq!(r.value(0), 2.0);
        assert!(r.value(1).is_nan());
        assert!(r.is_null(2));
        let z: ArrayRef = Arc::new(Float64Array::from(vec![0.0]));
        assert_eq!(
            math(&z, MathFunc::Ln)
                .as_primitive::<Float64Type>()
                .value(0),
            f64::NEG_INFINITY
        );
    }
}
