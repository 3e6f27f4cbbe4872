//! SQL queries → logical plans.
//!
//! Column names: every FROM item's columns keep their names unless two items
//! share a name; those get `qualifier.name` internally, so the flat-named
//! plan stays unambiguous. Comma joins are turned into inner equi-joins
//! from the WHERE clause's equalities as the FROM items are combined.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use sqlparser::ast::{
    self, JoinConstraint, JoinOperator, SelectItem, SetExpr, SetOperator, SetQuantifier,
    TableFactor,
};

use super::SqlContext;
use super::expr::{Resolver, convert};
use super::subquery::{OUTER, SelectResolver, is_correlated, rename_columns};
use super::unsupported::{
    check_query, check_select, check_table_factor, check_wildcard, excluded_names,
};
use crate::error::{Result, SlothError};
use crate::expr::{Expr, Operator, col, lit};
use crate::plan::{JoinType, LogicalPlan, SortKey};

/// One visible column: `qualifier.name`, called `internal` in the plan.
#[derive(Clone)]
struct ScopeColumn {
    qualifier: String,
    name: String,
    internal: String,
}

#[derive(Default, Clone)]
pub(super) struct Scope {
    columns: Vec<ScopeColumn>,
}

impl Resolver for Scope {
    fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<String> {
        let hits: Vec<&ScopeColumn> = self
            .columns
            .iter()
            .filter(|c| c.name == name && qualifier.is_none_or(|q| q == c.qualifier))
            .collect();
        match hits.as_slice() {
            [one] => Ok(one.internal.clone()),
            [] => Err(SlothError::ColumnNotFound {
                name: qualifier.map_or(name.to_string(), |q| format!("{q}.{name}")),
                available: self
                    .columns
                    .iter()
                    .map(|c| format!("{}.{}", c.qualifier, c.name))
                    .collect(),
            }),
            _ => Err(SlothError::plan(format!(
                "column reference '{name}' is ambiguous; qualify it with a table name"
            ))),
        }
    }
}

/// Plans queries against the tables of a [`SqlContext`].
pub struct QueryPlanner<'a> {
    ctx: &'a SqlContext,
    ctes: RefCell<BTreeMap<String, Arc<LogicalPlan>>>,
    next_id: Cell<usize>,
}

/// A FROM item before naming: its plan and the qualifier its columns answer to.
struct Factor {
    plan: Arc<LogicalPlan>,
    qualifier: String,
}

fn ident(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_ascii_lowercase()
    }
}

fn literal_usize(e: &ast::Expr, what: &str) -> Result<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n
                .parse()
                .map_err(|_| SlothError::plan(format!("{what} must be a non-negative integer"))),
            _ => Err(SlothError::plan(format!(
                "{what} must be a non-negative integer"
            ))),
        },
        _ => Err(SlothError::unsupported(format!(
            "{what} must be a constant"
        ))),
    }
}

/// Replaces, top-down, every sub-expression for which `f` gives a replacement.
fn replace_top_down(e: &Expr, f: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
    if let Some(r) = f(e) {
        return r;
    }
    rebuild_children(e, &|c| replace_top_down(c, f))
}

fn rebuild_children(e: &Expr, f: &dyn Fn(&Expr) -> Expr) -> Expr {
    let b = |x: &Expr| Box::new(f(x));
    match e {
        Expr::Binary { left, op, right } => Expr::Binary {
            left: b(left),
            op: *op,
            right: b(right),
        },
        Expr::Not(x) => Expr::Not(b(x)),
        Expr::Negative(x) => Expr::Negative(b(x)),
        Expr::IsNull(x) => Expr::IsNull(b(x)),
        Expr::IsNotNull(x) => Expr::IsNotNull(b(x)),
        Expr::Cast(x, t) => Expr::Cast(b(x), t.clone()),
        Expr::Alias(x, n) => Expr::Alias(b(x), n.clone()),
        Expr::Case {
            when_then,
            otherwise,
        } => Expr::Case {
            when_then: when_then.iter().map(|(w, t)| (f(w), f(t))).collect(),
            otherwise: otherwise.as_ref().map(|o| b(o)),
        },
        Expr::InList {
            expr,
            list,
            negated,
        } => Expr::InList {
            expr: b(expr),
            list: list.iter().map(f).collect(),
            negated: *negated,
        },
        Expr::Function(func, args) => Expr::Function(*func, args.iter().map(f).collect()),
        Expr::Agg {
            func,
            args,
            distinct,
        } => Expr::Agg {
            func: *func,
            args: args.iter().map(f).collect(),
            distinct: *distinct,
        },
        Expr::Window {
            func,
            args,
            partition_by,
            order_by,
        } => Expr::Window {
            func: *func,
            args: args.iter().map(f).collect(),
            partition_by: partition_by.iter().map(f).collect(),
            order_by: order_by
                .iter()
                .map(|k| SortKey {
                    expr: f(&k.expr),
                    ..k.clone()
                })
                .collect(),
        },
        leaf => leaf.clone(),
    }
}

impl<'a> QueryPlanner<'a> {
    /// A planner over `ctx`'s tables.
    pub fn new(ctx: &'a SqlContext) -> Self {
        QueryPlanner {
            ctx,
            ctes: RefCell::new(BTreeMap::new()),
            next_id: Cell::new(0),
        }
    }

    /// A fresh number for naming subquery columns.
    pub(super) fn next_id(&self) -> usize {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        id
    }

    /// Plans a full query (WITH, set operations, ORDER BY, LIMIT).
    pub fn plan_query(&self, q: &ast::Query) -> Result<LogicalPlan> {
        check_query(q)?;
        let saved = self.ctes.borrow().clone();
        if let Some(with) = &q.with {
            if with.recursive {
                return Err(SlothError::unsupported("WITH RECURSIVE"));
            }
            for cte in &with.cte_tables {
                let plan = self.plan_query(&cte.query)?;
                self.ctes
                    .borrow_mut()
                    .insert(ident(&cte.alias.name), Arc::new(plan));
            }
        }
        let order_by: Vec<&ast::OrderByExpr> = match &q.order_by {
            None => vec![],
            Some(ob) => match &ob.kind {
                ast::OrderByKind::Expressions(e) => e.iter().collect(),
                ast::OrderByKind::All(_) => return Err(SlothError::unsupported("ORDER BY ALL")),
            },
        };
        let mut plan = match q.body.as_ref() {
            SetExpr::Select(s) => self.plan_select(s, &order_by)?,
            other => {
                let plan = self.plan_set_expr(other)?;
                self.order_by_output(plan, &order_by)?
            }
        };
        let (mut limit, offset) = match &q.limit_clause {
            None => (None, 0),
            Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => (
                limit
                    .as_ref()
                    .map(|l| literal_usize(l, "LIMIT"))
                    .transpose()?,
                offset
                    .as_ref()
                    .map(|o| literal_usize(&o.value, "OFFSET"))
                    .transpose()?
                    .unwrap_or(0),
            ),
            Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => (
                Some(literal_usize(limit, "LIMIT")?),
                literal_usize(offset, "OFFSET")?,
            ),
        };
        // `FETCH FIRST n ROWS ONLY` is LIMIT n (check_query refused the
        // WITH TIES / PERCENT forms).
        if let Some(fetch) = &q.fetch {
            let n = match &fetch.quantity {
                Some(e) => literal_usize(e, "FETCH FIRST")?,
                None => 1,
            };
            limit = Some(limit.map_or(n, |l| l.min(n)));
        }
        if limit.is_some() || offset > 0 {
            plan = LogicalPlan::Slice {
                input: Arc::new(plan),
                offset,
                len: limit,
            };
        }
        *self.ctes.borrow_mut() = saved;
        Ok(plan)
    }

    fn plan_set_expr(&self, body: &SetExpr) -> Result<LogicalPlan> {
        match body {
            SetExpr::Select(s) => self.plan_select(s, &[]),
            SetExpr::Query(q) => self.plan_query(q),
            SetExpr::SetOperation {
                left,
                op: SetOperator::Union,
                set_quantifier,
                right,
            } => {
                let l = self.plan_set_expr(left)?;
                let r = self.plan_set_expr(right)?;
                let union = LogicalPlan::Union {
                    inputs: vec![Arc::new(l), Arc::new(r)],
                };
                Ok(match set_quantifier {
                    SetQuantifier::All => union,
                    SetQuantifier::Distinct | SetQuantifier::None => LogicalPlan::Distinct {
                        input: Arc::new(union),
                    },
                    other => return Err(SlothError::unsupported(format!("UNION {other}"))),
                })
            }
            SetExpr::SetOperation {
                left,
                op: op @ (SetOperator::Intersect | SetOperator::Except | SetOperator::Minus),
                set_quantifier,
                right,
            } => {
                let l = self.plan_set_expr(left)?;
                let r = self.plan_set_expr(right)?;
                let except = !matches!(op, SetOperator::Intersect);
                match set_quantifier {
                    SetQuantifier::Distinct | SetQuantifier::None => {
                        super::set_operations::intersect_or_except(l, r, except)
                    }
                    SetQuantifier::All => {
                        super::set_operations::intersect_or_except_all(l, r, except)
                    }
                    other => Err(SlothError::unsupported(format!("{op} {other}"))),
                }
            }
            other => Err(SlothError::unsupported(format!(
                "query form '{}'",
                other.to_string().chars().take(40).collect::<String>()
            ))),
        }
    }

    /// ORDER BY over a set operation: output names and ordinals only.
    fn order_by_output(
        &self,
        plan: LogicalPlan,
        order_by: &[&ast::OrderByExpr],
    ) -> Result<LogicalPlan> {
        if order_by.is_empty() {
            return Ok(plan);
        }
        let names = plan.column_names()?;
        let scope = Scope {
            columns: names
                .iter()
                .map(|n| ScopeColumn {
                    qualifier: String::new(),
                    name: n.clone(),
                    internal: n.clone(),
                })
                .collect(),
        };
        let keys = order_by
            .iter()
            .map(|o| {
                let expr = match ordinal(&o.expr) {
                    Some(i) => col(names
                        .get(i)
                        .ok_or_else(|| {
                            SlothError::plan(format!("ORDER BY position {} is out of range", i + 1))
                        })?
                        .as_str()),
                    None => convert(&o.expr, &scope)?,
                };
                Ok(sort_key(expr, o))
            })
            .collect::<Result<_>>()?;
        Ok(LogicalPlan::Sort {
            input: Arc::new(plan),
            by: keys,
        })
    }

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
                    None => Arc::new(self.ctx.table(&key)?.logical_plan().clone()),
                };
                Ok(Factor {
                    plan,
                    qualifier: alias.as_ref().map_or(key, |a| ident(&a.name)),
                })
            }
            TableFactor::Derived {
                subquery, alias, ..
            } => {
                let plan = self.plan_query(subquery)?;
                let qualifier = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_default();
                let plan = match alias.as_ref().filter(|a| !a.columns.is_empty()) {
                    Some(a) => {
                        let names = plan.column_names()?;
                        let exprs = names
                            .iter()
                            .zip(&a.columns)
                            .map(|(n, c)| col(n.as_str()).alias(ident(&c.name)))
                            .collect();
                        LogicalPlan::Project {
                            input: Arc::new(plan),
                            exprs,
                        }
                    }
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
    fn plan_from(&self, from: &[ast::TableWithJoins]) -> Result<(Vec<Item>, Scope)> {
        // 1. All factors, in order, to find clashing names.
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
            let cols = f.plan.column_names()?;
            for c in &cols {
                *counts.entry(c.clone()).or_default() += 1;
            }
            factor_cols.push(cols);
        }
        // 2. Rename clashing columns to qualifier.name.
        let mut scope = Scope::default();
        let mut planned: Vec<(Arc<LogicalPlan>, HashSet<String>)> = Vec::new();
        for (f, cols) in factors.into_iter().zip(factor_cols) {
            let mut renamed = false;
            let mut exprs = Vec::new();
            let mut internals = HashSet::new();
            for c in cols {
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
                });
            }
            let plan = if renamed {
                Arc::new(LogicalPlan::Project {
                    input: f.plan,
                    exprs,
                })
            } else {
                f.plan
            };
            planned.push((plan, internals));
        }
        // 3. Explicit joins inside each FROM item.
        let mut items: Vec<(Arc<LogicalPlan>, HashSet<String>)> = Vec::new();
        let mut next = planned.into_iter();
        for twj in from {
            let (mut plan, mut cols) = next.next().expect("one factor per relation");
            for j in &twj.joins {
                let (right, rcols) = next.next().expect("one factor per join");
                let (how, constraint) = match &j.join_operator {
                    JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinType::Inner, Some(c)),
                    JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinType::Left, Some(c)),
                    JoinOperator::Right(c) | JoinOperator::RightOuter(c) => {
                        (JoinType::Right, Some(c))
                    }
                    JoinOperator::FullOuter(c) => (JoinType::Full, Some(c)),
                    JoinOperator::Semi(c) | JoinOperator::LeftSemi(c) => (JoinType::Semi, Some(c)),
                    JoinOperator::Anti(c) | JoinOperator::LeftAnti(c) => (JoinType::Anti, Some(c)),
                    JoinOperator::CrossJoin(_) => (JoinType::Cross, None),
                    other => {
                        return Err(SlothError::unsupported(
                            format!("join '{other:?}'")
                                .chars()
                                .take(60)
                                .collect::<String>(),
                        ));
                    }
                };
                let on: Vec<Expr> = match constraint {
                    None | Some(JoinConstraint::None) => vec![],
                    Some(JoinConstraint::On(e)) => convert(e, &scope)?.split_conjunction(),
                    Some(JoinConstraint::Using(names)) => names
                        .iter()
                        .map(|n| {
                            let n = n.to_string().to_ascii_lowercase();
                            let l = scope
                                .columns
                                .iter()
                                .find(|c| c.name == n && cols.contains(&c.internal));
                            let r = scope
                                .columns
                                .iter()
                                .find(|c| c.name == n && rcols.contains(&c.internal));
                            match (l, r) {
                                (Some(l), Some(r)) => {
                                    Ok(col(l.internal.as_str()).eq(col(r.internal.as_str())))
                                }
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
                };
                let (joined, residual) = join_on(plan, &cols, right, &rcols, on, how)?;
                plan = joined;
                if how.outputs_right() {
                    cols.extend(rcols);
                }
                if let Some(r) = residual {
                    plan = Arc::new(LogicalPlan::Filter {
                        input: plan,
                        predicate: r,
                    });
                }
            }
            items.push((plan, cols));
        }
        Ok((items, scope))
    }

    fn plan_select(&self, s: &ast::Select, order_by: &[&ast::OrderByExpr]) -> Result<LogicalPlan> {
        Ok(self.plan_select_inner(s, order_by, None)?.0)
    }

    /// Plans a SELECT. With `outer` (a subquery), conditions that read the
    /// outer query's columns are returned instead of applied, with the inner
    /// columns they use exposed as outputs `__c<i>`.
    pub(super) fn plan_select_inner(
        &self,
        s: &ast::Select,
        order_by: &[&ast::OrderByExpr],
        outer: Option<&Scope>,
    ) -> Result<(LogicalPlan, Vec<Expr>)> {
        check_select(s)?;
        let (from_items, scope) = if s.from.is_empty() {
            one_row()?
        } else {
            self.plan_from(&s.from)?
        };
        let resolver = SelectResolver {
            planner: self,
            scope: &scope,
            outer,
            pending: RefCell::new(vec![]),
        };
        let scope_ref = &resolver;
        let mut conjuncts = Vec::new();
        let mut correlated = Vec::new();
        for c in s.selection.iter().flat_map(split_sql_conjunction) {
            if resolver.subquery_condition(&c)? {
                continue;
            }
            for e in factor_or(convert(&c, scope_ref)?) {
                if is_correlated(&e) {
                    correlated.push(e)
                } else {
                    conjuncts.push(e)
                }
            }
        }
        let (plan, conjuncts) = combine_items(from_items, conjuncts)?;
        let mut plan = resolver.apply_pending(plan);
        if let Some(p) = Expr::conjunction(conjuncts) {
            plan = LogicalPlan::Filter {
                input: Arc::new(plan),
                predicate: p,
            };
        }
        // Inner columns that correlated conditions read, exposed as __c<i>.
        let mut corr_cols: Vec<String> = Vec::new();
        for c in &correlated {
            for n in c.columns() {
                if !n.starts_with(OUTER) && !corr_cols.contains(&n) {
                    corr_cols.push(n);
                }
            }
        }
        let correlated: Vec<Expr> = correlated
            .iter()
            .map(|c| {
                rename_columns(c, &|n| match corr_cols.iter().position(|x| x == n) {
                    Some(i) => format!("__c{i}"),
                    None => n.to_string(),
                })
            })
            .collect();
        let scope = scope_ref;

        // Select items with output names.
        let mut items: Vec<(Expr, String)> = Vec::new();
        for item in &s.projection {
            match item {
                SelectItem::UnnamedExpr(e) => {
                    let name = match e {
                        ast::Expr::Identifier(i) => ident(i),
                        ast::Expr::CompoundIdentifier(p) => p.last().map(ident).unwrap_or_default(),
                        other => expression_name(other),
                    };
                    items.push((convert(e, scope)?, name));
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    items.push((convert(expr, scope)?, ident(alias)))
                }
                SelectItem::Wildcard(options) => {
                    if s.from.is_empty() {
                        return Err(SlothError::plan("SELECT * needs a FROM clause"));
                    }
                    let columns: Vec<&ScopeColumn> = scope.scope.columns.iter().collect();
                    items.extend(expand_wildcard(&columns, options)?);
                }
                SelectItem::QualifiedWildcard(kind, options) => {
                    let q = kind.to_string().to_ascii_lowercase();
                    let q = q.trim_end_matches(".*").to_string();
                    let columns: Vec<&ScopeColumn> = scope
                        .scope
                        .columns
                        .iter()
                        .filter(|c| c.qualifier == q)
                        .collect();
                    if columns.is_empty() {
                        return Err(SlothError::plan(format!("no table named '{q}' in FROM")));
                    }
                    items.extend(expand_wildcard(&columns, options)?);
                }
                other => return Err(SlothError::unsupported(format!("select item '{other}'"))),
            }
        }
        dedupe_names(&mut items);
        let visible_items = items.len();
        for (i, c) in corr_cols.iter().enumerate() {
            items.push((col(c.as_str()), format!("__c{i}")));
        }

        let group_exprs: Vec<&ast::Expr> = match &s.group_by {
            ast::GroupByExpr::Expressions(e, _) => e.iter().collect(),
            ast::GroupByExpr::All(_) => vec![],
        };
        // GROUP BY ALL: every select item without an aggregate or a window.
        let group_all: Option<Vec<Expr>> =
            matches!(s.group_by, ast::GroupByExpr::All(_)).then(|| {
                items[..visible_items]
                    .iter()
                    .filter(|(e, _)| !e.contains_agg() && !e.contains_window())
                    .map(|(e, _)| e.clone())
                    .collect()
            });
        // HAVING and QUALIFY may name select-list aliases (`having n > 1`
        // for `count(*) as n`): they stand for the aliased expressions.
        let with_aliases = WithAliases {
            inner: scope,
            items: &items[..visible_items],
        };
        let having = s
            .having
            .as_ref()
            .map(|h| with_aliases.convert(h))
            .transpose()?;
        // QUALIFY filters after the window functions, as HAVING does after
        // the aggregation.
        let mut qualify = s
            .qualify
            .as_ref()
            .map(|q| with_aliases.convert(q))
            .transpose()?;
        // ORDER BY: output ordinals and aliases first, then expressions.
        let mut sort_exprs: Vec<(Expr, &ast::OrderByExpr)> = Vec::new();
        for o in order_by {
            let e = if let Some(i) = ordinal(&o.expr) {
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
                convert(&o.expr, scope)?
            };
            sort_exprs.push((e, o));
        }

        // Joins for scalar subqueries of the select list / HAVING / ORDER BY
        // come after the aggregation.
        let late_pending: Vec<_> = resolver.pending.borrow_mut().drain(..).collect();
        let aggregate = !group_exprs.is_empty()
            || group_all.is_some()
            || having.is_some()
            || qualify.as_ref().is_some_and(Expr::contains_agg)
            || items.iter().any(|(e, _)| e.contains_agg())
            || sort_exprs.iter().any(|(e, _)| e.contains_agg());
        if aggregate {
            let keys: Vec<Expr> = match group_all {
                Some(keys) => keys,
                None => group_exprs
                    .iter()
                    .map(|g| {
                        if let Some(i) = ordinal(g) {
                            return items.get(i).map(|(e, _)| e.clone()).ok_or_else(|| {
                                SlothError::plan(format!(
                                    "GROUP BY position {} is out of range",
                                    i + 1
                                ))
                            });
                        }
                        match convert(g, scope) {
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
                    .collect::<Result<Vec<Expr>>>()?,
            };
            let mut keys = keys;
            keys.extend(corr_cols.iter().map(|c| col(c.as_str())));
            // A subquery of the select list that is also a group key
            // (`GROUP BY 1`), or that an aggregate reads (`count(*) FILTER
            // (WHERE EXISTS ..)`, `sum((SELECT ..))`), must be joined
            // before the aggregation; the others join after it.
            let mut early_columns: Vec<String> = keys.iter().flat_map(Expr::columns).collect();
            let aggregated = items
                .iter()
                .map(|(e, _)| e)
                .chain(having.iter())
                .chain(qualify.iter())
                .chain(sort_exprs.iter().map(|(e, _)| e));
            for e in aggregated {
                e.visit(&mut |n| {
                    if matches!(n, Expr::Agg { .. }) {
                        early_columns.extend(n.columns());
                    }
                });
            }
            let (early, late_pending): (Vec<_>, Vec<_>) = late_pending
                .into_iter()
                .partition(|p| p.provides_any(&early_columns));
            resolver.pending.borrow_mut().extend(early);
            plan = resolver.apply_pending(plan);
            let mut aggs: Vec<Expr> = Vec::new();
            let mut collect = |e: &Expr| {
                e.visit(&mut |n| {
                    if matches!(n, Expr::Agg { .. }) && !aggs.contains(n) {
                        aggs.push(n.clone());
                    }
                })
            };
            items.iter().for_each(|(e, _)| collect(e));
            having.iter().for_each(&mut collect);
            qualify.iter().for_each(&mut collect);
            sort_exprs.iter().for_each(|(e, _)| collect(e));
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
            let new_items = items
                .iter()
                .map(|(e, n)| Ok((rewrite(e)?, n.clone())))
                .collect::<Result<Vec<_>>>()?;
            let new_having = having.as_ref().map(&rewrite).transpose()?;
            qualify = qualify.as_ref().map(&rewrite).transpose()?;
            let new_sorts = sort_exprs
                .iter()
                .map(|(e, o)| Ok((rewrite(e)?, *o)))
                .collect::<Result<Vec<_>>>()?;
            let late_pending = late_pending
                .into_iter()
                .map(|p| p.map_outer_keys(rewrite))
                .collect::<Result<Vec<_>>>()?;
            plan = LogicalPlan::Aggregate {
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
            resolver.pending.borrow_mut().extend(late_pending);
            plan = resolver.apply_pending(plan);
            if let Some(h) = new_having {
                plan = LogicalPlan::Filter {
                    input: Arc::new(plan),
                    predicate: h,
                };
            }
            items = new_items;
            sort_exprs = new_sorts;
        } else {
            resolver.pending.borrow_mut().extend(late_pending);
            plan = resolver.apply_pending(plan);
        }

        // Window functions: computed on the (aggregated) rows, read by name.
        plan = Arc::unwrap_or_clone(crate::plan::lift_windows(
            Arc::new(plan),
            items
                .iter_mut()
                .map(|(e, _)| e)
                .chain(sort_exprs.iter_mut().map(|(e, _)| e))
                .chain(qualify.iter_mut()),
        ));
        if let Some(predicate) = qualify {
            plan = LogicalPlan::Filter {
                input: Arc::new(plan),
                predicate,
            };
        }

        // Projection, with hidden sort columns where ORDER BY needs them.
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
        plan = LogicalPlan::Project {
            input: Arc::new(plan),
            exprs,
        };
        if matches!(s.distinct, Some(ast::Distinct::Distinct)) {
            if hidden > 0 {
                return Err(SlothError::plan(
                    "with SELECT DISTINCT, ORDER BY expressions must appear in the select list",
                ));
            }
            plan = LogicalPlan::Distinct {
                input: Arc::new(plan),
            };
        }
        if !keys.is_empty() {
            plan = LogicalPlan::Sort {
                input: Arc::new(plan),
                by: keys,
            };
        }
        if hidden > 0 {
            let visible = items
                .iter()
                .take(visible_items + corr_cols.len())
                .map(|(_, n)| col(n.as_str()))
                .collect();
            plan = LogicalPlan::Project {
                input: Arc::new(plan),
                exprs: visible,
            };
        }
        if outer.is_none() && !correlated.is_empty() {
            return Err(SlothError::plan(
                "a correlated reference outside a subquery",
            ));
        }
        if let Some(top) = &s.top {
            // A limit inside a correlated subquery would cut the rows of
            // all outer rows together, once decorrelated into a join.
            if !correlated.is_empty() {
                return Err(SlothError::unsupported("TOP in a correlated subquery"));
            }
            let n = match &top.quantity {
                Some(ast::TopQuantity::Constant(n)) => *n as usize,
                Some(ast::TopQuantity::Expr(e)) => literal_usize(e, "TOP")?,
                None => return Err(SlothError::plan("TOP needs a row count")),
            };
            plan = LogicalPlan::Slice {
                input: Arc::new(plan),
                offset: 0,
                len: Some(n),
            };
        }
        Ok((plan, correlated))
    }
}

/// A FROM item: its plan and the internal names of its columns.
type Item = (Arc<LogicalPlan>, HashSet<String>);

/// Comma joins: combines FROM items, taking join keys from the WHERE
/// equalities between them; returns the joined plan and the conjuncts left.
fn combine_items(items: Vec<Item>, mut converted: Vec<Expr>) -> Result<(LogicalPlan, Vec<Expr>)> {
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

pub(super) fn sort_key(expr: Expr, o: &ast::OrderByExpr) -> SortKey {
    let descending = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
    // PostgreSQL's default: nulls sort as larger than any value, so last
    // ascending and first descending (DuckDB puts them last either way).
    let nulls_last = match o.options.nulls_first {
        Some(first) => !first,
        None => !descending,
    };
    SortKey {
        expr,
        descending,
        nulls_last,
    }
}

fn ordinal(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<usize>().ok().filter(|i| *i > 0).map(|i| i - 1),
            _ => None,
        },
        _ => None,
    }
}

fn split_sql_conjunction(e: &ast::Expr) -> Vec<ast::Expr> {
    match e {
        ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => {
            let mut v = split_sql_conjunction(left);
            v.extend(split_sql_conjunction(right));
            v
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
            split_sql_conjunction(inner)
        }
        e => vec![e.clone()],
    }
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
            right = Arc::new(LogicalPlan::Filter {
                input: right,
                predicate: p,
            });
        }
    }
    if let Some(p) = Expr::conjunction(left_only.clone()) {
        if preserves_left {
            residual.extend(left_only);
        } else {
            left = Arc::new(LogicalPlan::Filter {
                input: left,
                predicate: p,
            });
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
    let j = LogicalPlan::Join {
        left,
        right,
        left_on,
        right_on,
        how,
        filter,
    };
    Ok((Arc::new(j), above))
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
    Ok(columns
        .iter()
        .filter(|c| !excluded.contains(&c.name))
        .map(|c| (col(c.internal.as_str()), c.name.clone()))
        .collect())
}

/// The FROM of a SELECT without one: a single row with one hidden column,
/// so `SELECT 1 + 1` evaluates its items once.
fn one_row() -> Result<(Vec<Item>, Scope)> {
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
