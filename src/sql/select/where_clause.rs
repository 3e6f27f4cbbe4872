//! WHERE: its conjuncts join the FROM items (comma joins) and filter the
//! rows; in a subquery, the conditions that read the outer query's columns
//! are set aside for the decorrelating join, with the inner columns they
//! read exposed as outputs `__c<i>`.

use std::sync::Arc;

use sqlparser::ast;

use super::from::{Item, combine_items};
use crate::error::Result;
use crate::expr::{Expr, Operator};
use crate::plan::LogicalPlan;
use crate::sql::expr::convert;
use crate::sql::subquery::{OUTER, SelectResolver, is_correlated, rename_columns};

/// The rows WHERE keeps, and what a subquery sets aside.
pub(super) struct Filtered {
    /// FROM's items joined and filtered.
    pub plan: LogicalPlan,
    /// Conditions on outer columns, their inner columns renamed `__c<i>`.
    pub correlated: Vec<Expr>,
    /// The inner columns those conditions read, by `__c<i>` index.
    pub correlated_columns: Vec<String>,
}

/// Plans `selection` over FROM's `items`.
pub(super) fn filter(
    resolver: &SelectResolver,
    selection: Option<&ast::Expr>,
    items: Vec<Item>,
) -> Result<Filtered> {
    let mut conjuncts = Vec::new();
    let mut correlated = Vec::new();
    for c in selection.into_iter().flat_map(split_sql_conjunction) {
        if resolver.subquery_condition(c)? {
            continue;
        }
        for e in factor_or(convert(c, resolver)?) {
            if is_correlated(&e) {
                correlated.push(e)
            } else {
                conjuncts.push(e)
            }
        }
    }
    let (plan, conjuncts) = combine_items(items, conjuncts)?;
    let mut plan = resolver.apply_pending(plan)?;
    if let Some(p) = Expr::conjunction(conjuncts) {
        plan = LogicalPlan::filter(Arc::new(plan), p);
    }
    let mut correlated_columns: Vec<String> = Vec::new();
    for c in &correlated {
        for n in c.columns() {
            if !n.starts_with(OUTER) && !correlated_columns.contains(&n) {
                correlated_columns.push(n);
            }
        }
    }
    let correlated = correlated
        .iter()
        .map(|c| {
            rename_columns(
                c,
                &|n| match correlated_columns.iter().position(|x| x == n) {
                    Some(i) => format!("__c{i}"),
                    None => n.to_string(),
                },
            )
        })
        .collect();
    Ok(Filtered {
        plan,
        correlated,
        correlated_columns,
    })
}

/// The conjuncts of `e`, in order, found without recursion (a generated
/// WHERE may AND together thousands of conditions).
fn split_sql_conjunction(e: &ast::Expr) -> Vec<&ast::Expr> {
    let mut conjuncts = Vec::new();
    let mut pending = vec![e];
    while let Some(e) = pending.pop() {
        match e {
            ast::Expr::BinaryOp {
                left,
                op: ast::BinaryOperator::And,
                right,
            } => {
                pending.push(right);
                pending.push(left);
            }
            ast::Expr::Nested(inner)
                if matches!(
                    inner.as_ref(),
                    ast::Expr::BinaryOp {
                        op: ast::BinaryOperator::And,
                        ..
                    }
                ) =>
            {
                pending.push(inner)
            }
            e => conjuncts.push(e),
        }
    }
    conjuncts
}

/// `(A AND X) OR (A AND Y)` → `[A, X OR Y]`: pulls conjuncts common to every
/// branch of a disjunction out of it, so that join keys hidden in ORs
/// (TPC-H Q19) become visible to the join planner.
fn factor_or(e: Expr) -> Vec<Expr> {
    fn disjuncts(e: Expr) -> Vec<Expr> {
        match e {
            Expr::Binary {
                left,
                op: Operator::Or,
                right,
            } => {
                let mut v = disjuncts(*left);
                v.extend(disjuncts(*right));
                v
            }
            e => vec![e],
        }
    }
    let branches: Vec<Vec<Expr>> = disjuncts(e.clone())
        .into_iter()
        .map(|d| d.split_conjunction())
        .collect();
    if branches.len() < 2 {
        return vec![e];
    }
    let common: Vec<Expr> = branches[0]
        .iter()
        .filter(|c| branches[1..].iter().all(|b| b.contains(c)))
        .cloned()
        .collect();
    if common.is_empty() {
        return vec![e];
    }
    let rest: Vec<Expr> = branches
        .into_iter()
        .map(|b| {
            Expr::conjunction(b.into_iter().filter(|c| !common.contains(c)))
                .unwrap_or(crate::expr::lit(true))
        })
        .collect();
    let mut out = common;
    out.push(
        rest.into_iter()
            .reduce(|a, b| a.or(b))
            .expect("two or more branches"),
    );
    out
}
