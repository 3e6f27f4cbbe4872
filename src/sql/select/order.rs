//! ORDER BY of a SELECT (output ordinals and aliases first, then
//! expressions over the FROM scope) and `TOP n`.

use std::sync::Arc;

use sqlparser::ast;

use super::projection::Item;
use crate::error::{Result, SlothError};
use crate::expr::Expr;
use crate::plan::LogicalPlan;
use crate::sql::expr::convert;
use crate::sql::planner::{ident, literal_usize, ordinal};
use crate::sql::subquery::SelectResolver;

/// Each ORDER BY key as an expression: an output ordinal or alias becomes a
/// marked column (`\u{0}name`) that the projection reads by name.
pub(super) fn order_by_exprs<'o>(
    resolver: &SelectResolver,
    items: &[Item],
    order_by: &[&'o ast::OrderByExpr],
) -> Result<Vec<(Expr, &'o ast::OrderByExpr)>> {
    let mut sort_exprs = Vec::new();
    for o in order_by {
        let e = if let Some(i) = ordinal(&o.expr)? {
            let (_, name) = items.get(i).ok_or_else(|| {
                SlothError::plan(format!("ORDER BY position {} is out of range", i + 1))
            })?;
            Expr::Column(format!("\u{0}{name}"))
        } else if let Some((_, name)) = match &o.expr {
            ast::Expr::Identifier(i) => items.iter().find(|(_, n)| *n == ident(i)),
            _ => None,
        } {
            Expr::Column(format!("\u{0}{name}"))
        } else {
            convert(&o.expr, resolver)?
        };
        sort_exprs.push((e, *o));
    }
    Ok(sort_exprs)
}

/// `TOP n`: the first `n` rows of `plan`.
pub(super) fn top(plan: LogicalPlan, s: &ast::Select, correlated: bool) -> Result<LogicalPlan> {
    let Some(top) = &s.top else {
        return Ok(plan);
    };
    // A limit inside a correlated subquery would cut the rows of all outer
    // rows together, once decorrelated into a join.
    if correlated {
        return Err(SlothError::unsupported("TOP in a correlated subquery"));
    }
    let n = match &top.quantity {
        Some(ast::TopQuantity::Constant(n)) => *n as usize,
        Some(ast::TopQuantity::Expr(e)) => literal_usize(e, "TOP")?,
        None => return Err(SlothError::plan("TOP needs a row count")),
    };
    Ok(LogicalPlan::Slice {
        input: Arc::new(plan),
        offset: 0,
        len: Some(n),
    })
}
