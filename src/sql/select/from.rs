//! FROM: the tables, CTEs and derived tables a SELECT reads, their
//! explicit joins (`JOIN .. ON / USING`), and the comma joins that WHERE's
//! equalities turn into inner equi-joins.
//!
//! Every FROM item's columns keep their names unless two items share a
//! name; those get `qualifier.name` internally, so the flat-named plan
//! stays unambiguous.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use arrow::datatypes::DataType;
use sqlparser::ast::{self, JoinConstraint, JoinOperator, TableFactor};

use crate::error::{Result, SlothError};
use crate::expr::{Expr, Operator, col, lit};
use crate::plan::{Join, JoinType, LogicalPlan};
use crate::sql::expr::convert;
use crate::sql::planner::{QueryPlanner, Scope, ScopeColumn, ident, renamed};
use crate::sql::table_functions::{quoted_path, table_function};
use crate::sql::unsupported::check_table_factor;

/// A FROM item before naming: its plan and the qualifier its columns answer to.
struct Factor {
    plan: Arc<LogicalPlan>,
    qualifier: String,
}

/// A FROM item: its plan and the internal names of its columns.
pub(super) type Item = (Arc<LogicalPlan>, HashSet<String>);

impl QueryPlanner<'_> {
    fn factor(&self, f: &TableFactor) -> Result<Factor> {
        check_table_factor(f)?;
        match f {
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let table = name.0.last().map(|p| p.to_string()).unwrap_or_default();
                let key = table.trim_matches('"').to_ascii_lowercase();
                let cte = self.ctes.borrow().get(&key).cloned();
                let plan = match cte {
                    Some(p) => p,
                    None => match self.ctx.table(&key) {
                        Ok(t) => Arc::new(t.logical_plan().clone()),
                        Err(e) => match quoted_path(self.ctx, name)? {
                            Some(file) => Arc::new(file.logical_plan().clone()),
                            None => return Err(e),
                        },
                    },
                };
                Ok(Factor {
                    plan,
                    qualifier: alias.as_ref().map_or(key, |a| ident(&a.name)),
                })
            }
            TableFactor::Table {
                name,
                alias,
                args: Some(args),
                ..
            } => {
                let Some(file) = table_function(self.ctx, name, args)? else {
                    return Err(SlothError::unsupported(format!("table function '{name}'")));
                };
                let qualifier = match alias {
                    Some(a) => ident(&a.name),
                    None => name.to_string().to_ascii_lowercase(),
                };
                let plan = match alias {
                    Some(a) => renamed(file.logical_plan().clone(), &a.columns)?,
                    None => file.logical_plan().clone(),
                };
                Ok(Factor {
                    plan: Arc::new(plan),
                    qualifier,
                })
            }
            TableFactor::Derived {
                subquery, alias, ..
            } => {
                let plan = self.plan_query(subquery)?;
                let qualifier = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_default();
                let plan = match alias {
                    Some(a) => renamed(plan, &a.columns)?,
                    None => plan,
                };
                Ok(Factor {
                    plan: Arc::new(plan),
                    qualifier,
                })
            }
            other => Err(SlothError::unsupported(format!("FROM item '{other}'"))),
        }
    }

    /// Plans FROM's items (with their explicit joins) and the scope of
    /// their columns; [`combine_items`] joins the items.
    pub(super) fn plan_from(&self, from: &[ast::TableWithJoins]) -> Result<(Vec<Item>, Scope)> {
        let (planned, scope) = self.named_factors(from)?;
        let items = explicit_joins(from, planned, &scope)?;
        Ok((items, scope))
    }

    /// Every table of FROM (those joined explicitly too), in order, with
    /// the columns two of them share renamed `qualifier.name`; and the
    /// scope of all their columns.
    fn named_factors(&self, from: &[ast::TableWithJoins]) -> Result<(Vec<Item>, Scope)> {
        // All factors, in order, to find clashing names.
        let mut factors: Vec<Factor> = Vec::new();
        for twj in from {
            factors.push(self.factor(&twj.relation)?);
            for j in &twj.joins {
                factors.push(self.factor(&j.relation)?);
            }
        }
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let mut factor_cols = Vec::new();
        for f in &factors {
            let schema = f.plan.schema()?;
            let cols: Vec<(String, DataType)> = schema
                .fields()
                .iter()
                .map(|f| (f.name().clone(), f.data_type().clone()))
                .collect();
            for (c, _) in &cols {
                *counts.entry(c.clone()).or_default() += 1;
            }
            factor_cols.push(cols);
        }
        // Rename clashing columns to qualifier.name.
        let mut scope = Scope::default();
        let mut planned: Vec<(Arc<LogicalPlan>, HashSet<String>)> = Vec::new();
        for (f, cols) in factors.into_iter().zip(factor_cols) {
            let mut renamed = false;
            let mut exprs = Vec::new();
            let mut internals = HashSet::new();
            for (c, data_type) in cols {
                let internal = if counts[&c] > 1 {
                    format!("{}.{c}", f.qualifier)
                } else {
                    c.clone()
                };
                if scope.columns.iter().any(|s| s.internal == internal) {
                    return Err(SlothError::plan(format!(
                        "table name '{}' is used twice; give one an alias",
                        f.qualifier
                    )));
                }
                renamed |= internal != c;
                exprs.push(if internal != c {
                    col(c.as_str()).alias(internal.clone())
                } else {
                    col(c.as_str())
                });
                internals.insert(internal.clone());
                scope.columns.push(ScopeColumn {
                    qualifier: f.qualifier.clone(),
                    name: c,
                    internal,
                    data_type,
                });
            }
            let plan = if renamed {
                Arc::new(LogicalPlan::project(f.plan, exprs))
            } else {
                f.plan
            };
            planned.push((plan, internals));
        }
        Ok((planned, scope))
    }
}

/// The explicit joins inside each FROM item (`a JOIN b ON ..`), over the
/// named tables `planned` (in FROM's order).
fn explicit_joins(
    from: &[ast::TableWithJoins],
    planned: Vec<Item>,
    scope: &Scope,
) -> Result<Vec<Item>> {
    let mut items: Vec<(Arc<LogicalPlan>, HashSet<String>)> = Vec::new();
    let mut next = planned.into_iter();
    for twj in from {
        let (mut plan, mut cols) = next.next().expect("one factor per relation");
        for j in &twj.joins {
            let (right, rcols) = next.next().expect("one factor per join");
            let (how, constraint) = join_kind(&j.join_operator)?;
            let on = join_condition(constraint, scope, (&cols, &rcols))?;
            let (joined, residual) = join_on(plan, &cols, right, &rcols, on, how)?;
            plan = joined;
            if how.outputs_right() {
                cols.extend(rcols);
            }
            if let Some(r) = residual {
                plan = Arc::new(LogicalPlan::filter(plan, r));
            }
        }
        items.push((plan, cols));
    }
    Ok(items)
}

/// The kind of an explicit join and its constraint (none for a cross join).
fn join_kind(op: &JoinOperator) -> Result<(JoinType, Option<&JoinConstraint>)> {
    Ok(match op {
        JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinType::Inner, Some(c)),
        JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinType::Left, Some(c)),
        JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (JoinType::Right, Some(c)),
        JoinOperator::FullOuter(c) => (JoinType::Full, Some(c)),
        JoinOperator::Semi(c) | JoinOperator::LeftSemi(c) => (JoinType::Semi, Some(c)),
        JoinOperator::Anti(c) | JoinOperator::LeftAnti(c) => (JoinType::Anti, Some(c)),
        JoinOperator::CrossJoin(_) => (JoinType::Cross, None),
        other => {
            let text: String = format!("join '{other:?}'").chars().take(60).collect();
            return Err(SlothError::unsupported(text));
        }
    })
}

/// A join's condition as conjuncts: `ON`'s, or `USING`'s equalities
/// between the named column of each side (`left` and `right` columns).
fn join_condition(
    constraint: Option<&JoinConstraint>,
    scope: &Scope,
    (left, right): (&HashSet<String>, &HashSet<String>),
) -> Result<Vec<Expr>> {
    Ok(match constraint {
        // A cross join has no constraint; another without one is an
        // error in PostgreSQL and DuckDB, not a cross join.
        None => vec![],
        Some(JoinConstraint::None) => {
            return Err(SlothError::plan(
                "JOIN needs ON or USING (CROSS JOIN pairs every row)",
            ));
        }
        Some(JoinConstraint::On(e)) => convert(e, scope)?.split_conjunction(),
        Some(JoinConstraint::Using(names)) => names
            .iter()
            .map(|n| {
                let n = n.to_string().to_ascii_lowercase();
                let side = |cols: &HashSet<String>| {
                    scope
                        .columns
                        .iter()
                        .find(|c| c.name == n && cols.contains(&c.internal))
                };
                match (side(left), side(right)) {
                    (Some(l), Some(r)) => Ok(col(l.internal.as_str()).eq(col(r.internal.as_str()))),
                    _ => Err(SlothError::plan(format!(
                        "USING column '{n}' is not on both sides"
                    ))),
                }
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(SlothError::unsupported(format!(
                "join constraint {other:?}"
            )));
        }
    })
}

/// Comma joins: combines FROM items, taking join keys from the WHERE
/// equalities between them; returns the joined plan and the conjuncts left.
pub(super) fn combine_items(
    items: Vec<Item>,
    mut converted: Vec<Expr>,
) -> Result<(LogicalPlan, Vec<Expr>)> {
    let mut items = items.into_iter();
    let (mut plan, mut cols) = items.next().ok_or_else(|| SlothError::plan("empty FROM"))?;
    let mut rest: Vec<Item> = items.collect();
    while !rest.is_empty() {
        // The first remaining item connected to what is joined so far.
        let pick = rest
            .iter()
            .position(|(_, rc)| converted.iter().any(|e| equi_pair(e, &cols, rc).is_some()))
            .unwrap_or(0);
        let (right, rcols) = rest.remove(pick);
        let mut on = Vec::new();
        let mut i = 0;
        while i < converted.len() {
            if equi_pair(&converted[i], &cols, &rcols).is_some() {
                on.push(converted.remove(i));
            } else {
                i += 1;
            }
        }
        let how = if on.is_empty() {
            JoinType::Cross
        } else {
            JoinType::Inner
        };
        let (joined, _) = join_on(plan, &cols, right, &rcols, on, how)?;
        plan = joined;
        cols.extend(rcols);
    }
    Ok((Arc::unwrap_or_clone(plan), converted))
}

/// `a = b` with `a` over `left` columns only and `b` over `right` only (or
/// swapped): returns `(left_expr, right_expr)`.
fn equi_pair(e: &Expr, left: &HashSet<String>, right: &HashSet<String>) -> Option<(Expr, Expr)> {
    let Expr::Binary {
        left: a,
        op: Operator::Eq,
        right: b,
    } = e
    else {
        return None;
    };
    let within = |x: &Expr, cols: &HashSet<String>| {
        let c = x.columns();
        !c.is_empty() && c.iter().all(|n| cols.contains(n))
    };
    if within(a, left) && within(b, right) {
        Some((a.as_ref().clone(), b.as_ref().clone()))
    } else if within(b, left) && within(a, right) {
        Some((b.as_ref().clone(), a.as_ref().clone()))
    } else {
        None
    }
}

/// Joins with the equi-conjuncts of `on` as keys; returns the join and the
/// residual predicate an inner join leaves for a filter above it. Other
/// joins push conditions on their non-preserved side into that side and
/// keep the rest as the join's pair filter.
fn join_on(
    left: Arc<LogicalPlan>,
    lcols: &HashSet<String>,
    right: Arc<LogicalPlan>,
    rcols: &HashSet<String>,
    on: Vec<Expr>,
    how: JoinType,
) -> Result<(Arc<LogicalPlan>, Option<Expr>)> {
    let mut left_on = Vec::new();
    let mut right_on = Vec::new();
    let mut residual = Vec::new();
    let mut right_only = Vec::new();
    let mut left_only = Vec::new();
    for c in on {
        if let Some((l, r)) = equi_pair(&c, lcols, rcols) {
            left_on.push(l);
            right_on.push(r);
        } else {
            let cols = c.columns();
            if !cols.is_empty() && cols.iter().all(|n| rcols.contains(n)) {
                right_only.push(c);
            } else if !cols.is_empty() && cols.iter().all(|n| lcols.contains(n)) {
                left_only.push(c);
            } else {
                residual.push(c);
            }
        }
    }
    let (mut left, mut right) = (left, right);
    // A condition on one side only filters that side's candidates; for the
    // preserved side of an outer join it would change which rows are kept, so
    // it stays a residual there (unsupported below).
    let preserves_left = matches!(
        how,
        JoinType::Left | JoinType::Full | JoinType::Semi | JoinType::Anti
    );
    let preserves_right = matches!(how, JoinType::Right | JoinType::Full);
    if let Some(p) = Expr::conjunction(right_only.clone()) {
        if preserves_right {
            residual.extend(right_only);
        } else {
            right = Arc::new(LogicalPlan::filter(right, p));
        }
    }
    if let Some(p) = Expr::conjunction(left_only.clone()) {
        if preserves_left {
            residual.extend(left_only);
        } else {
            left = Arc::new(LogicalPlan::filter(left, p));
        }
    }
    // An inner join leaves its other conditions to a filter above it. An
    // outer, semi or anti join keeps them as its pair filter: a pair that
    // fails it is no match (the preserved side's row then comes out
    // null-extended), where a filter above the join would drop the row.
    let (how, filter, above) = match how {
        JoinType::Inner | JoinType::Cross if left_on.is_empty() => {
            (JoinType::Cross, None, Expr::conjunction(residual))
        }
        JoinType::Inner | JoinType::Cross => (JoinType::Inner, None, Expr::conjunction(residual)),
        how => {
            if left_on.is_empty() {
                // No equality: every pair is a candidate (a nested-loop
                // join, as a hash join on one constant key).
                left_on.push(lit(true));
                right_on.push(lit(true));
            }
            (how, Expr::conjunction(residual), None)
        }
    };
    let j = LogicalPlan::Join(Join::new(left, right, left_on, right_on, how, filter));
    Ok((Arc::new(j), above))
}

/// The FROM of a SELECT without one: a single row with one hidden column,
/// so `SELECT 1 + 1` evaluates its items once.
pub(super) fn one_row() -> Result<(Vec<Item>, Scope)> {
    use arrow::array::{ArrayRef, Int8Array};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::record_batch::RecordBatch;
    const NAME: &str = "__one_row";
    let schema = Arc::new(Schema::new(vec![Field::new(NAME, DataType::Int8, false)]));
    let column: ArrayRef = Arc::new(Int8Array::from(vec![0i8]));
    let batch = RecordBatch::try_new(schema, vec![column])?;
    let frame = crate::frame::LazyFrame::from_batches(vec![batch])?;
    let item = (
        Arc::new(frame.logical_plan().clone()),
        HashSet::from([NAME.to_string()]),
    );
    Ok((vec![item], Scope { columns: vec![] }))
}
