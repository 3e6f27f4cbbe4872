//! Bitwise operators of integers, as PostgreSQL's: `a & b`, `a | b`,
//! `a << n`, `a >> n` (arithmetic: the sign is kept) and `xor(a, b)`
//! (PostgreSQL's `#`, DuckDB's `xor`). Values are Int64; a shift by less
//! than 0 or 64 or more bits is an error rather than a silent wrap.

use super::math::IntPair;
use crate::expr::ScalarFunc;

pub(super) fn functions() -> Vec<ScalarFunc> {
    vec![BIT_AND, BIT_OR, XOR, SHIFT_LEFT, SHIFT_RIGHT]
}

/// `a & b`.
pub const BIT_AND: ScalarFunc = ScalarFunc::new(&IntPair {
    names: &["bitwise_and"],
    apply: |a, b| Some(a & b),
});
/// `a | b`.
pub const BIT_OR: ScalarFunc = ScalarFunc::new(&IntPair {
    names: &["bitwise_or"],
    apply: |a, b| Some(a | b),
});
/// `xor(a, b)`: the bits set in exactly one.
pub const XOR: ScalarFunc = ScalarFunc::new(&IntPair {
    names: &["xor", "bitwise_xor"],
    apply: |a, b| Some(a ^ b),
});
/// `a << n`.
pub const SHIFT_LEFT: ScalarFunc = ScalarFunc::new(&IntPair {
    names: &["bitwise_shift_left"],
    apply: |a, n| u32::try_from(n).ok().and_then(|n| a.checked_shl(n)),
});
/// `a >> n`.
pub const SHIFT_RIGHT: ScalarFunc = ScalarFunc::new(&IntPair {
    names: &["bitwise_shift_right"],
    apply: |a, n| u32::try_from(n).ok().and_then(|n| a.checked_shr(n)),
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Expr, col};
    use crate::functions::test_util::{eval, try_eval};
    use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
    use arrow::datatypes::Int64Type;
    use std::sync::Arc;

    #[test]
    fn operators_follow_twos_complement_and_refuse_wild_shifts() {
        let ints = |v: Vec<Option<i64>>| -> ArrayRef { Arc::new(Int64Array::from(v)) };
        let input = [
            ("a", ints(vec![Some(12), Some(-8), None])),
            ("b", ints(vec![Some(10), Some(2), Some(1)])),
        ];
        let run = |f: ScalarFunc| {
            let out = eval(Expr::Function(f, vec![col("a"), col("b")]), &input);
            let out = out.as_primitive::<Int64Type>();
            assert!(out.is_null(2), "{}: null in, null out", f.name());
            [out.value(0), out.value(1)]
        };
        assert_eq!(run(BIT_AND), [12 & 10, -8 & 2]);
        assert_eq!(run(BIT_OR), [12 | 10, -8 | 2]);
        assert_eq!(run(XOR), [12 ^ 10, -8 ^ 2]);
        assert_eq!(run(SHIFT_LEFT), [12 << 10, -8 << 2]);
        assert_eq!(run(SHIFT_RIGHT), [12 >> 10, -2]);
        for n in [64, -1] {
            let input = [("a", ints(vec![Some(1)])), ("b", ints(vec![Some(n)]))];
            let e = try_eval(Expr::Function(SHIFT_LEFT, vec![col("a"), col("b")]), &input);
            assert!(e.is_err(), "a shift by {n}");
        }
    }
}
