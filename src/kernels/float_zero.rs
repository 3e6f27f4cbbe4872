//! SQL equality for floats: `-0.0 = 0.0`, and every NaN equals every NaN.
//!
//! Arrow's comparison kernels and the key encoders compare floats by their
//! bits (IEEE total order), which tells `-0.0` from `0.0` and a NaN with
//! its sign bit set (`-x` of a NaN) from one without: `x = 0` missed the
//! `-0.0` rows, `GROUP BY`, `DISTINCT` and joins made two groups of each,
//! and a negative NaN sorted below every number. Comparisons and keys go
//! through [`canonical_floats`] first, which turns every `-0.0` into `0.0`
//! and every NaN into the positive quiet NaN: equal to itself and greater
//! than every number, as in DuckDB and PostgreSQL.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray};
use arrow::datatypes::{DataType, Float32Type, Float64Type};

/// `array` with every `-0.0` made `0.0` and every NaN the positive NaN;
/// the same array (no copy) when it holds neither or is not a
/// Float32/Float64 array.
pub fn canonical_floats(array: &ArrayRef) -> ArrayRef {
    macro_rules! normalize {
        ($t:ty, $n:ty) => {{
            let values = array.as_primitive::<$t>();
            let odd = |v: $n| {
                (v == 0.0 && v.is_sign_negative())
                    || (v.is_nan() && v.to_bits() != <$n>::NAN.to_bits())
            };
            if !values.values().iter().any(|v| odd(*v)) {
                return array.clone();
            }
            Arc::new(values.unary::<_, $t>(|v| match v {
                v if v.is_nan() => <$n>::NAN,
                v if v == 0.0 => 0.0,
                v => v,
            }))
        }};
    }
    match array.data_type() {
        DataType::Float64 => normalize!(Float64Type, f64),
        DataType::Float32 => normalize!(Float32Type, f32),
        _ => array.clone(),
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, Float64Array};

    use super::*;

    #[test]
    fn negative_zeros_become_zero_nans_one_nan_and_the_rest_is_untouched() {
        let a: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(-0.0),
            Some(0.0),
            None,
            Some(f64::NAN),
            Some(-1.5),
            Some(-f64::NAN),
        ]));
        let n = canonical_floats(&a);
        let n = n.as_primitive::<Float64Type>();
        assert!(n.value(0).is_sign_positive() && n.value(0) == 0.0);
        assert!(n.is_null(2) && n.value(3).is_nan() && n.value(4) == -1.5);
        assert_eq!(n.value(5).to_bits(), f64::NAN.to_bits());
        let clean: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 0.0]));
        assert!(Arc::ptr_eq(&canonical_floats(&clean), &clean));
    }
}
