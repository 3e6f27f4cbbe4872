//! GROUP BY, the aggregation, HAVING and QUALIFY.
//!
//! The aggregation computes each grouping key and each distinct aggregate
//! once, as columns `__k<i>` and `__a<i>`; the select items, HAVING,
//! QUALIFY and ORDER BY are rewritten to read those, and any column they
//! still read outside an aggregate is an error. HAVING and QUALIFY may
//! name select-list aliases (`having n > 1` for `count(*) as n`).

use std::sync::Arc;

use sqlparser::ast;

use super::projection::Item;
use crate::error::{Result, SlothError};
use crate::expr::{Expr, col};
use crate::plan::LogicalPlan;
use crate::sql::expr::{Resolver, convert};
use crate::sql::planner::{ident, ordinal, replace_top_down};
use crate::sql::subquery::{PendingJoin, SelectResolver};

/// What a SELECT outputs and orders by: the parts the aggregation rewrites.
pub(super) struct Outputs<'o> {
    /// The select items (visible ones, then correlated columns).
    pub items: Vec<Item>,
    /// HAVING.
    pub having: Option<Expr>,
    /// QUALIFY: filters after the window functions, as HAVING does after
    /// the aggregation.
    pub qualify: Option<Expr>,
    /// The ORDER BY keys.
    pub sort_exprs: Vec<(Expr, &'o ast::OrderByExpr)>,
}

impl Outputs<'_> {
    fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.items
            .iter()
            .map(|(e, _)| e)
            .chain(self.having.iter())
            .chain(self.qualify.iter())
            .chain(self.sort_exprs.iter().map(|(e, _)| e))
    }
}

/// HAVING and QUALIFY, with the select list's `aliased` items' names.
pub(super) fn having_and_qualify(
    resolver: &SelectResolver,
    s: &ast::Select,
    aliased: &[Item],
) -> Result<(Option<Expr>, Option<Expr>)> {
    let with_aliases = WithAliases {
        inner: resolver,
        items: aliased,
    };
    let convert = |e: &Option<ast::Expr>| e.as_ref().map(|e| with_aliases.convert(e)).transpose();
    Ok((convert(&s.having)?, convert(&s.qualify)?))
}

/// Whether the SELECT aggregates: GROUP BY, HAVING, or an aggregate
/// anywhere in its outputs.
pub(super) fn needs_aggregate(s: &ast::Select, outputs: &Outputs) -> bool {
    let grouped = match &s.group_by {
        ast::GroupByExpr::Expressions(e, _) => !e.is_empty(),
        ast::GroupByExpr::All(_) => true,
    };
    grouped || outputs.having.is_some() || outputs.exprs().any(Expr::contains_agg)
}

/// The grouping keys: GROUP BY's expressions (ordinals and output aliases
/// allowed), or for `GROUP BY ALL` every one of the first `visible` items
/// without an aggregate or a window.
pub(super) fn group_keys(
    resolver: &SelectResolver,
    s: &ast::Select,
    items: &[Item],
    visible: usize,
) -> Result<Vec<Expr>> {
    let group_exprs = match &s.group_by {
        ast::GroupByExpr::Expressions(e, _) => e,
        ast::GroupByExpr::All(_) => {
            return Ok(items[..visible]
                .iter()
                .filter(|(e, _)| !e.contains_agg() && !e.contains_window())
                .map(|(e, _)| e.clone())
                .collect());
        }
    };
    group_exprs
        .iter()
        .map(|g| {
            if let Some(i) = ordinal(g)? {
                return items.get(i).map(|(e, _)| e.clone()).ok_or_else(|| {
                    SlothError::plan(format!("GROUP BY position {} is out of range", i + 1))
                });
            }
            match convert(g, resolver) {
                Ok(e) => Ok(e),
                // GROUP BY an output alias.
                Err(err) => match g {
                    ast::Expr::Identifier(i) => items
                        .iter()
                        .find(|(_, n)| *n == ident(i))
                        .map(|(e, _)| e.clone())
                        .ok_or(err),
                    _ => Err(err),
                },
            }
        })
        .collect()
}

/// Aggregates `plan` by `keys`, rewriting `outputs` to read the keys and
/// aggregates by name. Of the subquery joins still `pending`, those a key
/// or an aggregate reads (`GROUP BY 1` of a scalar subquery, `count(*)
/// FILTER (WHERE EXISTS ..)`) join before the aggregation, the others
/// after it.
pub(super) fn aggregate(
    resolver: &SelectResolver,
    plan: LogicalPlan,
    keys: Vec<Expr>,
    outputs: &mut Outputs,
    pending: Vec<PendingJoin>,
) -> Result<LogicalPlan> {
    let mut early_columns: Vec<String> = keys.iter().flat_map(Expr::columns).collect();
    for e in outputs.exprs() {
        e.visit(&mut |n| {
            if matches!(n, Expr::Agg { .. }) {
                early_columns.extend(n.columns());
            }
        });
    }
    let (early, late): (Vec<_>, Vec<_>) = pending
        .into_iter()
        .partition(|p| p.provides_any(&early_columns));
    resolver.pending.borrow_mut().extend(early);
    let plan = resolver.apply_pending(plan);
    let mut aggs: Vec<Expr> = Vec::new();
    for e in outputs.exprs() {
        e.visit(&mut |n| {
            if matches!(n, Expr::Agg { .. }) && !aggs.contains(n) {
                aggs.push(n.clone());
            }
        })
    }
    let key_names: Vec<String> = (0..keys.len()).map(|i| format!("__k{i}")).collect();
    let agg_names: Vec<String> = (0..aggs.len()).map(|i| format!("__a{i}")).collect();
    let rewrite = |e: &Expr| -> Result<Expr> {
        let out = replace_top_down(e, &|n| {
            if let Some(i) = keys.iter().position(|k| k == n) {
                return Some(col(key_names[i].as_str()));
            }
            if let Some(i) = aggs.iter().position(|a| a == n) {
                return Some(col(agg_names[i].as_str()));
            }
            None
        });
        for c in out.columns() {
            if !c.starts_with("__k")
                && !c.starts_with("__a")
                && !c.starts_with("__sq")
                && !c.starts_with('\u{0}')
            {
                return Err(SlothError::plan(format!(
                    "column '{c}' must appear in GROUP BY or be used in an aggregate function"
                )));
            }
        }
        Ok(out)
    };
    for (e, _) in outputs.items.iter_mut() {
        *e = rewrite(e)?;
    }
    let having = outputs.having.take().map(|h| rewrite(&h)).transpose()?;
    outputs.qualify = outputs.qualify.take().map(|q| rewrite(&q)).transpose()?;
    for (e, _) in outputs.sort_exprs.iter_mut() {
        *e = rewrite(e)?;
    }
    let late = late
        .into_iter()
        .map(|p| p.map_outer_keys(rewrite))
        .collect::<Result<Vec<_>>>()?;
    let mut plan = LogicalPlan::Aggregate {
        input: Arc::new(plan),
        keys: keys
            .into_iter()
            .zip(&key_names)
            .map(|(k, n)| k.alias(n.as_str()))
            .collect(),
        aggs: aggs
            .into_iter()
            .zip(&agg_names)
            .map(|(a, n)| a.alias(n.as_str()))
            .collect(),
    };
    resolver.pending.borrow_mut().extend(late);
    plan = resolver.apply_pending(plan);
    if let Some(h) = having {
        plan = LogicalPlan::Filter {
            input: Arc::new(plan),
            predicate: h,
        };
    }
    Ok(plan)
}

/// Resolves names in the FROM scope first and then among the select
/// list's aliases, which become marker columns that [`WithAliases::convert`]
/// replaces by the aliased expressions.
struct WithAliases<'a> {
    inner: &'a dyn Resolver,
    items: &'a [(Expr, String)],
}

/// Starts a marker column that stands for a select-list alias.
const ALIAS_MARK: char = '\u{2}';

impl WithAliases<'_> {
    fn convert(&self, e: &ast::Expr) -> Result<Expr> {
        let converted = convert(e, self)?;
        Ok(replace_top_down(&converted, &|n| match n {
            Expr::Column(c) => c.strip_prefix(ALIAS_MARK).and_then(|alias| {
                self.items
                    .iter()
                    .find(|(_, name)| name == alias)
                    .map(|(e, _)| e.clone())
            }),
            _ => None,
        }))
    }
}

impl Resolver for WithAliases<'_> {
    fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<String> {
        match self.inner.resolve(qualifier, name) {
            Err(SlothError::ColumnNotFound { .. })
                if qualifier.is_none() && self.items.iter().any(|(_, n)| n == name) =>
            {
                Ok(format!("{ALIAS_MARK}{name}"))
            }
            other => other,
        }
    }
    fn scalar_subquery(&self, q: &ast::Query) -> Result<Expr> {
        self.inner.scalar_subquery(q)
    }
}
