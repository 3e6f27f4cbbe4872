//! The select list: its items with their output names (`*` and `t.*`
//! expanded, duplicate names numbered), and the final projection, with
//! hidden columns for ORDER BY expressions outside the list, DISTINCT, and
//! the sort.

use std::collections::HashSet;
use std::sync::Arc;

use sqlparser::ast::{self, SelectItem};

use crate::error::{Result, SlothError};
use crate::expr::{Expr, col};
use crate::plan::LogicalPlan;
use crate::sql::expr::convert;
use crate::sql::planner::{ScopeColumn, ident, sort_key};
use crate::sql::subquery::SelectResolver;
use crate::sql::unsupported::{check_wildcard, excluded_names};

/// An expression and its output name.
pub(super) type Item = (Expr, String);

/// The items of the select list, named, duplicate names numbered.
pub(super) fn select_items(resolver: &SelectResolver, s: &ast::Select) -> Result<Vec<Item>> {
    let mut items: Vec<Item> = Vec::new();
    for item in &s.projection {
        match item {
            SelectItem::UnnamedExpr(e) => {
                let name = match e {
                    ast::Expr::Identifier(i) => ident(i),
                    ast::Expr::CompoundIdentifier(p) => p.last().map(ident).unwrap_or_default(),
                    other => expression_name(other),
                };
                items.push((convert(e, resolver)?, name));
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                items.push((convert(expr, resolver)?, ident(alias)))
            }
            SelectItem::Wildcard(options) => {
                if s.from.is_empty() {
                    return Err(SlothError::plan("SELECT * needs a FROM clause"));
                }
                let columns: Vec<&ScopeColumn> = resolver.scope.columns.iter().collect();
                items.extend(expand_wildcard(resolver, &columns, options)?);
            }
            SelectItem::QualifiedWildcard(kind, options) => {
                // `t.*`, or `"T".*` (a quoted name keeps its case).
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(name) => name
                        .0
                        .last()
                        .and_then(|p| p.as_ident())
                        .map(ident)
                        .unwrap_or_default(),
                    other => {
                        return Err(SlothError::unsupported(format!("select item '{other}.*'")));
                    }
                };
                let columns: Vec<&ScopeColumn> = resolver
                    .scope
                    .columns
                    .iter()
                    .filter(|c| c.qualifier == q)
                    .collect();
                if columns.is_empty() {
                    return Err(SlothError::plan(format!("no table named '{q}' in FROM")));
                }
                items.extend(expand_wildcard(resolver, &columns, options)?);
            }
            other => return Err(SlothError::unsupported(format!("select item '{other}'"))),
        }
    }
    dedupe_names(&mut items);
    Ok(items)
}

/// The projection of `items` over `plan`, then DISTINCT and the sort by
/// `sort_exprs`; ORDER BY expressions that are no item are computed as
/// hidden columns and projected away after the sort, leaving the first
/// `visible` items.
pub(super) fn project(
    mut plan: LogicalPlan,
    items: &[Item],
    sort_exprs: Vec<(Expr, &ast::OrderByExpr)>,
    distinct: bool,
    visible: usize,
) -> Result<LogicalPlan> {
    let mut exprs: Vec<Expr> = items
        .iter()
        .map(|(e, n)| e.clone().alias(n.as_str()))
        .collect();
    let mut keys = Vec::new();
    let mut hidden = 0;
    for (e, o) in sort_exprs {
        let key = if let Expr::Column(c) = &e
            && let Some(name) = c.strip_prefix('\u{0}')
        {
            col(name)
        } else if let Some((_, name)) = items.iter().find(|(ie, _)| *ie == e) {
            col(name.as_str())
        } else {
            let name = format!("__s{hidden}");
            hidden += 1;
            exprs.push(e.alias(name.as_str()));
            col(name)
        };
        keys.push(sort_key(key, o));
    }
    plan = LogicalPlan::project(Arc::new(plan), exprs);
    if distinct {
        if hidden > 0 {
            return Err(SlothError::plan(
                "with SELECT DISTINCT, ORDER BY expressions must appear in the select list",
            ));
        }
        plan = LogicalPlan::distinct(Arc::new(plan));
    }
    if !keys.is_empty() {
        plan = LogicalPlan::sort(Arc::new(plan), keys);
    }
    if hidden > 0 {
        let visible = items
            .iter()
            .take(visible)
            .map(|(_, n)| col(n.as_str()))
            .collect();
        plan = LogicalPlan::project(Arc::new(plan), visible);
    }
    Ok(plan)
}

fn dedupe_names(items: &mut [(Expr, String)]) {
    let mut seen: HashSet<String> = HashSet::new();
    for (_, name) in items.iter_mut() {
        let mut candidate = name.clone();
        let mut n = 1;
        while !seen.insert(candidate.clone()) {
            candidate = format!("{name}_{n}");
            n += 1;
        }
        *name = candidate;
    }
}

/// A select item's column name when it has no alias: the expression as
/// written, keywords and unquoted names lowercased, quoted text kept
/// (`count(*) FILTER (WHERE s = 'F')` → `count(*) filter (where s = 'F')`).
fn expression_name(e: &ast::Expr) -> String {
    let text = e.to_string();
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    for ch in text.chars() {
        match quote {
            Some(q) => {
                out.push(ch);
                if ch == q {
                    quote = None;
                }
            }
            None => {
                if ch == '\'' || ch == '"' {
                    quote = Some(ch);
                }
                out.push(ch.to_ascii_lowercase());
            }
        }
    }
    out
}

/// `*` (or `t.*`) over `columns`, less those EXCLUDE/EXCEPT names.
fn expand_wildcard(
    resolver: &SelectResolver,
    columns: &[&ScopeColumn],
    options: &ast::WildcardAdditionalOptions,
) -> Result<Vec<(Expr, String)>> {
    check_wildcard(options)?;
    let excluded = excluded_names(options, ident);
    if let Some(missing) = excluded
        .iter()
        .find(|n| !columns.iter().any(|c| &c.name == *n))
    {
        let known: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        return Err(SlothError::plan(format!(
            "EXCLUDE names column '{missing}', which * does not select (columns: {})",
            known.join(", ")
        )));
    }
    if let Some((_, twice)) = excluded
        .iter()
        .enumerate()
        .find(|(i, n)| excluded[..*i].contains(n))
    {
        return Err(SlothError::plan(format!(
            "EXCLUDE names column '{twice}' twice"
        )));
    }
    let kept: Vec<(Expr, String)> = columns
        .iter()
        .filter(|c| !excluded.contains(&c.name))
        .map(|c| (col(c.internal.as_str()), c.name.clone()))
        .collect();
    if kept.is_empty() {
        return Err(SlothError::plan("EXCLUDE removes every column of *"));
    }
    replaced(resolver, kept, options.opt_replace.as_ref())
}

/// `* REPLACE (expr AS name, ..)` (DuckDB's): the named columns computed
/// by their expressions, in their places and under their names.
fn replaced(
    resolver: &SelectResolver,
    mut kept: Vec<(Expr, String)>,
    replace: Option<&ast::ReplaceSelectItem>,
) -> Result<Vec<(Expr, String)>> {
    for element in replace.iter().flat_map(|r| &r.items) {
        let name = ident(&element.column_name);
        let Some(slot) = kept.iter_mut().find(|(_, n)| *n == name) else {
            return Err(SlothError::plan(format!(
                "REPLACE names column '{name}', which * does not select"
            )));
        };
        slot.0 = convert(&element.expr, resolver)?;
    }
    Ok(kept)
}
