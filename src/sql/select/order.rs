//! ORDER BY of a SELECT (output ordinals and aliases first, then
//! expressions over the FROM scope) and `TOP n`.

use std::sync::Arc;

use sqlparser::ast;

use super::projection::Item;
use crate::error::{Result, SlothError};
use crate::expr::{Expr, WindowFunc, lit};
use crate::plan::LogicalPlan;
use crate::sql::expr::convert;
use crate::sql::planner::{ident, literal_usize, ordinal, replace_top_down, sort_key};
use crate::sql::subquery::SelectResolver;

/// Each ORDER BY key as an expression: an output ordinal or alias becomes a
/// marked column (`\u{0}name`) that the projection reads by name.
pub(super) fn order_by_exprs<'o>(
    resolver: &SelectResolver,
    items: &[Item],
    order_by: &[&'o ast::OrderByExpr],
) -> Result<Vec<(Expr, &'o ast::OrderByExpr)>> {
    order_by
        .iter()
        .map(|o| Ok((key_expr(resolver, items, &o.expr, "ORDER BY")?, *o)))
        .collect()
}

/// An ORDER BY or DISTINCT ON key: an output ordinal or alias as a marked
/// column, else an expression over the FROM scope.
fn key_expr(
    resolver: &SelectResolver,
    items: &[Item],
    e: &ast::Expr,
    clause: &str,
) -> Result<Expr> {
    Ok(if let Some(i) = ordinal(e)? {
        let (_, name) = items.get(i).ok_or_else(|| {
            SlothError::plan(format!("{clause} position {} is out of range", i + 1))
        })?;
        Expr::Column(format!("\u{0}{name}"))
    } else if let Some((_, name)) = match e {
        ast::Expr::Identifier(i) => items.iter().find(|(_, n)| *n == ident(i)),
        _ => None,
    } {
        Expr::Column(format!("\u{0}{name}"))
    } else {
        convert(e, resolver)?
    })
}

/// `SELECT DISTINCT ON (keys) ..` (PostgreSQL's): of each group of rows
/// with equal keys, the first in ORDER BY's order, as the filter
/// `row_number() OVER (PARTITION BY keys ORDER BY ..) = 1` (an arbitrary
/// one of the group without ORDER BY), joined to QUALIFY's.
pub(super) fn distinct_on(
    resolver: &SelectResolver,
    items: &[Item],
    on: &[ast::Expr],
    sort_exprs: &[(Expr, &ast::OrderByExpr)],
    qualify: Option<Expr>,
) -> Result<Option<Expr>> {
    // Output names read as the items they name: the filter runs before the
    // projection that gives them.
    let unmarked = |e: Expr| {
        replace_top_down(&e, &|n| match n {
            Expr::Column(c) => c.strip_prefix('\u{0}').and_then(|name| {
                items
                    .iter()
                    .find(|(_, n)| n == name)
                    .map(|(e, _)| e.clone())
            }),
            _ => None,
        })
    };
    let keys = on
        .iter()
        .map(|e| Ok(unmarked(key_expr(resolver, items, e, "DISTINCT ON")?)))
        .collect::<Result<Vec<_>>>()?;
    let order = sort_exprs
        .iter()
        .map(|(e, o)| sort_key(unmarked(e.clone()), o))
        .collect();
    let first = Expr::over(WindowFunc::RowNumber, keys, order).eq(lit(1i64));
    Ok(Some(match qualify {
        Some(q) => q.and(first),
        None => first,
    }))
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
    Ok(LogicalPlan::slice(Arc::new(plan), 0, Some(n)))
}
