//! Null rejection: whether a condition can hold when some columns are
//! NULL. Outer join elimination turns an outer join under a filter that
//! rejects the padded side's nulls into a stricter join; a subquery
//! correlated by such a condition joins its outer rows on `=`.

use std::collections::HashSet;

use super::{Expr, Operator};

impl Expr {
    /// True when this expression, as a filter, drops every row whose `cols` are all NULL:
    /// it then evaluates to NULL or false.
    pub(crate) fn rejects_nulls(&self, cols: &HashSet<String>) -> bool {
        match self {
            Expr::Binary {
                left,
                op: Operator::And,
                right,
            } => left.rejects_nulls(cols) || right.rejects_nulls(cols),
            Expr::Binary {
                left,
                op: Operator::Or,
                right,
            } => left.rejects_nulls(cols) && right.rejects_nulls(cols),
            Expr::IsNotNull(inner) => is_null_when_null(inner, cols),
            Expr::Not(inner) => match inner.as_ref() {
                Expr::IsNull(x) => is_null_when_null(x, cols),
                _ => is_null_when_null(self, cols),
            },
            other => is_null_when_null(other, cols),
        }
    }
}

/// True when `e` is NULL whenever all of `cols` are NULL (a strict
/// expression over at least one of them).
fn is_null_when_null(e: &Expr, cols: &HashSet<String>) -> bool {
    match e {
        Expr::Column(c) => cols.contains(c),
        // `NULL AND false` is false and `NULL OR true` is true: not strict.
        Expr::Binary {
            op: Operator::And | Operator::Or,
            ..
        } => false,
        Expr::Binary { left, right, .. } => {
            is_null_when_null(left, cols) || is_null_when_null(right, cols)
        }
        Expr::Not(x) | Expr::Negative(x) | Expr::Cast(x, _) | Expr::Alias(x, _) => {
            is_null_when_null(x, cols)
        }
        Expr::InList { expr, .. } => is_null_when_null(expr, cols),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{col, lit};

    fn cols(names: &[&str]) -> HashSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn strict_comparisons_reject_nulls() {
        let y = cols(&["y"]);
        assert!(col("y").gt(lit(1)).rejects_nulls(&y));
        assert!((col("y") + col("x")).eq(lit(3)).rejects_nulls(&y));
        assert!(col("y").is_not_null().rejects_nulls(&y));
        assert!(
            col("x")
                .gt(lit(1))
                .and(col("y").lt(lit(0)))
                .rejects_nulls(&y)
        );
    }

    #[test]
    fn conditions_that_may_hold_for_nulls_do_not() {
        let y = cols(&["y"]);
        assert!(!col("y").is_null().rejects_nulls(&y));
        assert!(!col("x").gt(lit(1)).rejects_nulls(&y));
        assert!(
            !col("y")
                .gt(lit(1))
                .or(col("x").gt(lit(1)))
                .rejects_nulls(&y)
        );
    }
}
