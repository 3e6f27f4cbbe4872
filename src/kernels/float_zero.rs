//! IEEE equality for floats: `-0.0 = 0.0`.
//!
//! Arrow's comparison kernels and the key encoders compare floats by their
//! bits (a total order, in which NaN equals NaN), which tells `-0.0` from
//! `0.0`: `x = 0` missed the `-0.0` rows, and `GROUP BY`, `DISTINCT` and
//! joins made two groups of them. Comparisons and keys go through
//! [`normalize_zeros`] first, which turns every `-0.0` into `0.0` (NaN is
//! left as it is: equal to itself and greater than every number, as in
//! DuckDB and PostgreSQL).

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray};
use arrow::datatypes::{DataType, Float32Type, Float64Type};

/// `array` with every `-0.0` made `0.0`; the same array (no copy) when
/// it holds none or is not a Float32/Float64 array.
pub fn normalize_zeros(array: &ArrayRef) -> ArrayRef {
    macro_rules! normalize {
        ($t:ty) => {{
            let values = array.as_primitive::<$t>();
            if !values
                .values()
                .iter()
                .any(|v| *v == 0.0 && v.is_sign_negative())
            {
                return array.clone();
            }
            Arc::new(values.unary::<_, $t>(|v| if v == 0.0 { 0.0 } else { v }))
        }};
    }
    match array.data_type() {
        DataType::Float64 => normalize!(Float64Type),
        DataType::Float32 => normalize!(Float32Type),
        _ => array.clone(),
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, Float64Array};

    use super::*;

    #[test]
    fn negative_zeros_become_zero_and_the_rest_is_untouched() {
        let a: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(-0.0),
            Some(0.0),
            None,
            Some(f64::NAN),
            Some(-1.5),
        ]));
        let n = normalize_zeros(&a);
        let n = n.as_primitive::<Float64Type>();
        assert!(n.value(0).is_sign_positive() && n.value(0) == 0.0);
        assert!(n.is_null(2) && n.value(3).is_nan() && n.value(4) == -1.5);
        let clean: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 0.0]));
        assert!(Arc::ptr_eq(&normalize_zeros(&clean), &clean));
    }
}
