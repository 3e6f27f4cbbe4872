//! Clauses sloth does not run are refused by name.
//!
//! sqlparser parses far more than sloth plans: `GROUP BY ALL WITH TOTALS`,
//! `LIMIT .. BY`, `TABLESAMPLE`, `FOR UPDATE` and many more
//! arrive as fields of the statement's structs. A planner that read only the
//! fields it knows would drop the others without a word and return wrong
//! rows (`LIMIT .. BY` as no limit, a sample as the whole table).
//! These checks run before planning and name the first such clause, so a
//! query either means what it says or fails with "not supported: …".

use sqlparser::ast::{self, GroupByExpr, Select, TableFactor};

use crate::error::{Result, SlothError};

fn refuse(what: impl std::fmt::Display) -> Result<()> {
    Err(SlothError::unsupported(what.to_string()))
}

/// Refuses the first clause of `clauses` that is present.
fn refuse_present(clauses: &[(bool, &str)]) -> Result<()> {
    match clauses.iter().find(|(present, _)| *present) {
        Some((_, what)) => refuse(what),
        None => Ok(()),
    }
}

/// Query-level clauses beyond WITH, ORDER BY, LIMIT/OFFSET and FETCH FIRST.
pub(super) fn check_query(q: &ast::Query) -> Result<()> {
    if let Some(ast::LimitClause::LimitOffset { limit_by, .. }) = &q.limit_clause
        && !limit_by.is_empty()
    {
        return refuse("LIMIT .. BY");
    }
    if let Some(fetch) = &q.fetch
        && (fetch.with_ties || fetch.percent)
    {
        return refuse(format!("{fetch}"));
    }
    refuse_present(&[
        (
            !q.locks.is_empty(),
            "FOR UPDATE/SHARE (sloth reads files; there is nothing to lock)",
        ),
        (q.for_clause.is_some(), "FOR XML/JSON/BROWSE"),
        (q.settings.is_some(), "SETTINGS"),
        (q.format_clause.is_some(), "FORMAT"),
        (!q.pipe_operators.is_empty(), "pipe operators (|>)"),
    ])
}

/// SELECT-level clauses the planner does not read.
pub(super) fn check_select(s: &Select) -> Result<()> {
    if let Some(top) = &s.top
        && (top.with_ties || top.percent)
    {
        return refuse(format!("{top}"));
    }
    refuse_present(&[
        (!s.optimizer_hints.is_empty(), "optimizer hints"),
        (s.select_modifiers.is_some(), "SELECT modifiers"),
        (s.exclude.is_some(), "EXCLUDE after the select list"),
        (s.into.is_some(), "SELECT INTO"),
        (!s.lateral_views.is_empty(), "LATERAL VIEW"),
        (s.prewhere.is_some(), "PREWHERE"),
        (!s.connect_by.is_empty(), "CONNECT BY"),
        (!s.cluster_by.is_empty(), "CLUSTER BY"),
        (!s.distribute_by.is_empty(), "DISTRIBUTE BY"),
        (!s.sort_by.is_empty(), "SORT BY"),
        (s.value_table_mode.is_some(), "SELECT AS STRUCT/VALUE"),
        (
            !matches!(s.flavor, ast::SelectFlavor::Standard),
            "FROM-first SELECT",
        ),
    ])?;
    // WITH ROLLUP / WITH CUBE are planned with the grouping sets.
    match &s.group_by {
        GroupByExpr::All(modifiers) if !modifiers.is_empty() => {
            refuse(format!("GROUP BY ALL {}", modifiers[0]))
        }
        _ => Ok(()),
    }
}

/// `*` options: EXCLUDE/EXCEPT are planned; the rest are refused.
pub(super) fn check_wildcard(o: &ast::WildcardAdditionalOptions) -> Result<()> {
    refuse_present(&[
        (o.opt_ilike.is_some(), "* ILIKE"),
        (o.opt_rename.is_some(), "* RENAME"),
        (o.opt_alias.is_some(), "* AS alias"),
    ])
}

/// Table options beyond a name and an alias.
pub(super) fn check_table_factor(f: &TableFactor) -> Result<()> {
    match f {
        TableFactor::Table {
            with_hints,
            version,
            with_ordinality,
            partitions,
            json_path,
            sample,
            index_directives,
            ..
        } => {
            if sample.is_some() {
                return refuse("TABLESAMPLE");
            }
            if version.is_some() {
                return refuse("table versions (time travel)");
            }
            if !with_hints.is_empty() || !index_directives.is_empty() {
                return refuse("table hints");
            }
            if *with_ordinality || !partitions.is_empty() || json_path.is_some() {
                return refuse(format!("FROM item '{f}'"));
            }
            Ok(())
        }
        TableFactor::Derived { lateral: true, .. } => refuse("LATERAL subqueries"),
        _ => Ok(()),
    }
}

/// The names `* EXCLUDE (..)` / `* EXCEPT (..)` leave out, lowercased
/// unless quoted, as the planner names columns.
pub(super) fn excluded_names(
    o: &ast::WildcardAdditionalOptions,
    ident: impl Fn(&ast::Ident) -> String,
) -> Vec<String> {
    let mut names = Vec::new();
    match &o.opt_exclude {
        Some(ast::ExcludeSelectItem::Single(n)) => names.extend(last_part(n, &ident)),
        Some(ast::ExcludeSelectItem::Multiple(ns)) => {
            names.extend(ns.iter().filter_map(|n| last_part(n, &ident)))
        }
        None => {}
    }
    if let Some(e) = &o.opt_except {
        names.push(ident(&e.first_element));
        names.extend(e.additional_elements.iter().map(&ident));
    }
    names
}

fn last_part(n: &ast::ObjectName, ident: &impl Fn(&ast::Ident) -> String) -> Option<String> {
    n.0.last().and_then(|p| p.as_ident()).map(ident)
}
