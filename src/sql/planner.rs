//! SQL queries → logical plans.
//!
//! Column names: every FROM item's columns keep their names unless two items
//! share a name; those get `qualifier.name` internally, so the flat-named
//! plan stays unambiguous. Comma joins are turned into inner equi-joins
//! from the WHERE clause's equalities as the FROM items are combined.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::datatypes::DataType;
use sqlparser::ast::{self, SetExpr, SetOperator, SetQuantifier};

use super::SqlContext;
use super::expr::{Resolver, convert};
use super::unsupported::check_query;
use crate::error::{Result, SlothError};
use crate::expr::{Expr, col};
use crate::plan::{Distinct, LogicalPlan, SortKey, Union};

/// One visible column: `qualifier.name`, called `internal` in the plan.
#[derive(Clone)]
pub(super) struct ScopeColumn {
    pub(super) qualifier: String,
    pub(super) name: String,
    pub(super) internal: String,
    /// Its type: what a subquery's decorrelation needs to stand in for it.
    pub(super) data_type: DataType,
}

#[derive(Default, Clone)]
pub(super) struct Scope {
    pub(super) columns: Vec<ScopeColumn>,
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

/// Constants outside a SELECT (`LIMIT $1 + 1`): no columns, the
/// statement's parameters.
impl Resolver for QueryPlanner<'_> {
    fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<String> {
        Scope::default().resolve(qualifier, name)
    }
    fn parameter(&self, n: usize) -> Result<Expr> {
        QueryPlanner::parameter(self, n)
    }
}

/// Plans queries against the tables of a [`SqlContext`].
pub struct QueryPlanner<'a> {
    pub(super) ctx: &'a SqlContext,
    pub(super) ctes: RefCell<BTreeMap<String, Arc<LogicalPlan>>>,
    next_id: Cell<usize>,
    /// The values of `$1`, `$2`, .. (constants).
    params: Vec<Expr>,
}

pub(super) fn ident(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_ascii_lowercase()
    }
}

pub(super) fn literal_usize(e: &ast::Expr, what: &str) -> Result<usize> {
    constant_count(e, &Scope::default(), what)?
        .ok_or_else(|| SlothError::plan(format!("{what} must be a non-negative integer, got NULL")))
}

/// A row count given as a constant expression (`LIMIT 10`, `LIMIT 2 * 5`,
/// `OFFSET $1`); `None` for NULL, which PostgreSQL reads as no limit.
pub(super) fn constant_count(e: &ast::Expr, r: &dyn Resolver, what: &str) -> Result<Option<usize>> {
    let not_a_count = || SlothError::plan(format!("{what} must be a non-negative integer"));
    let value = match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => return n.parse().map(Some).map_err(|_| not_a_count()),
            ast::Value::Null => return Ok(None),
            _ => convert(e, r)?,
        },
        other => convert(other, r).map_err(|err| match err {
            SlothError::ColumnNotFound { .. } => {
                SlothError::plan(format!("{what} must be a constant, not '{other}'"))
            }
            err => err,
        })?,
    };
    match crate::physical_expr::eval::evaluate_constant(&value)? {
        crate::expr::ScalarValue::Null => Ok(None),
        crate::expr::ScalarValue::Int64(Some(n)) => {
            usize::try_from(n).map(Some).map_err(|_| not_a_count())
        }
        _ => Err(not_a_count()),
    }
}

/// Replaces, top-down, every sub-expression for which `f` gives a replacement.
pub(super) fn replace_top_down(e: &Expr, f: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
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
            params: vec![],
        }
    }

    /// A planner whose statements read `params` as `$1`, `$2`, ...
    pub fn with_params(mut self, params: Vec<Expr>) -> Self {
        self.params = params;
        self
    }

    /// The value of `$n`.
    pub(super) fn parameter(&self, n: usize) -> Result<Expr> {
        self.params.get(n - 1).cloned().ok_or_else(|| {
            SlothError::plan(format!(
                "no value for parameter ${n} ({} given)",
                self.params.len()
            ))
        })
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
            let mut defined = Vec::new();
            for cte in &with.cte_tables {
                let name = ident(&cte.alias.name);
                if defined.contains(&name) {
                    return Err(SlothError::plan(format!("WITH defines '{name}' twice")));
                }
                let plan = if with.recursive {
                    self.plan_recursive_cte(&name, cte)?
                } else {
                    renamed(self.plan_query(&cte.query)?, &cte.alias.columns)?
                };
                self.ctes.borrow_mut().insert(name.clone(), Arc::new(plan));
                defined.push(name);
            }
        }
        let (order_by, order_by_all): (Vec<&ast::OrderByExpr>, _) = match &q.order_by {
            None => (vec![], None),
            Some(ob) => match &ob.kind {
                // The generic dialect reads `ORDER BY ALL` as a column `all`.
                ast::OrderByKind::Expressions(e) => match e.as_slice() {
                    [only] if is_keyword_all(&only.expr) => (vec![], Some(&only.options)),
                    _ => (e.iter().collect(), None),
                },
                ast::OrderByKind::All(options) => (vec![], Some(options)),
            },
        };
        let mut plan = match q.body.as_ref() {
            SetExpr::Select(s) => self.plan_select(s, &order_by)?,
            other => {
                let plan = self.plan_set_expr(other)?;
                self.order_by_output(plan, &order_by)?
            }
        };
        if let Some(options) = order_by_all {
            plan = order_by_all_columns(plan, options)?;
        }
        let (mut limit, offset) = match &q.limit_clause {
            None => (None, 0),
            Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => (
                limit
                    .as_ref()
                    .map(|l| constant_count(l, self, "LIMIT"))
                    .transpose()?
                    .flatten(),
                offset
                    .as_ref()
                    .map(|o| constant_count(&o.value, self, "OFFSET"))
                    .transpose()?
                    .flatten()
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
            plan = LogicalPlan::slice(Arc::new(plan), offset, limit);
        }
        *self.ctes.borrow_mut() = saved;
        Ok(plan)
    }

    pub(super) fn plan_set_expr(&self, body: &SetExpr) -> Result<LogicalPlan> {
        match body {
            SetExpr::Select(s) => self.plan_select(s, &[]),
            SetExpr::Query(q) => self.plan_query(q),
            SetExpr::Values(v) => super::values::plan_values(v),
            SetExpr::SetOperation {
                left,
                op: SetOperator::Union,
                set_quantifier,
                right,
            } => {
                let l = self.plan_set_expr(left)?;
                let r = self.plan_set_expr(right)?;
                let distinct = match set_quantifier {
                    SetQuantifier::All => false,
                    SetQuantifier::Distinct | SetQuantifier::None => true,
                    other => return Err(SlothError::unsupported(format!("UNION {other}"))),
                };
                // A chain `a UNION ALL b UNION ALL c ..` (or of UNIONs) is one
                // union of all its inputs, not a union nested per term:
                // a generated chain of thousands stays a flat, shallow plan.
                let union = match (l, distinct) {
                    (LogicalPlan::Union(union), false) => union.push(Arc::new(r)),
                    (LogicalPlan::Distinct(Distinct { input, .. }), true)
                        if matches!(input.as_ref(), LogicalPlan::Union(Union { .. })) =>
                    {
                        match Arc::unwrap_or_clone(input) {
                            LogicalPlan::Union(union) => union.push(Arc::new(r)),
                            _ => unreachable!("matched a union"),
                        }
                    }
                    (l, _) => Union::new(vec![Arc::new(l), Arc::new(r)]),
                };
                let union = LogicalPlan::Union(union);
                Ok(match distinct {
                    false => union,
                    true => LogicalPlan::distinct(Arc::new(union)),
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
        let schema = plan.schema()?;
        let names = plan.column_names()?;
        let scope = Scope {
            columns: schema
                .fields()
                .iter()
                .map(|f| ScopeColumn {
                    qualifier: String::new(),
                    name: f.name().clone(),
                    internal: f.name().clone(),
                    data_type: f.data_type().clone(),
                })
                .collect(),
        };
        let keys = order_by
            .iter()
            .map(|o| {
                let expr = match ordinal(&o.expr)? {
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
        Ok(LogicalPlan::sort(Arc::new(plan), keys))
    }
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

/// An unquoted `all`, which as the only ORDER BY key means `ORDER BY ALL`.
fn is_keyword_all(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("all"))
}

/// `ORDER BY ALL` (DuckDB's): by every output column, left to right, each
/// in the direction and null order given.
fn order_by_all_columns(plan: LogicalPlan, options: &ast::OrderByOptions) -> Result<LogicalPlan> {
    let by = plan
        .column_names()?
        .iter()
        .map(|name| {
            let key = ast::OrderByExpr {
                expr: ast::Expr::Identifier(ast::Ident::new(name.as_str())),
                options: options.clone(),
                with_fill: None,
            };
            sort_key(col(name.as_str()), &key)
        })
        .collect();
    Ok(LogicalPlan::sort(Arc::new(plan), by))
}

/// The 0-based output position an ORDER BY / GROUP BY key names when it
/// is an integer literal (1 is the first column); position 0 is an error,
/// as in PostgreSQL.
pub(super) fn ordinal(e: &ast::Expr) -> Result<Option<usize>> {
    let ast::Expr::Value(v) = e else {
        return Ok(None);
    };
    let ast::Value::Number(n, _) = &v.value else {
        return Ok(None);
    };
    match n.parse::<usize>() {
        Ok(0) => Err(SlothError::plan(
            "position 0 is not in the select list (positions start at 1)",
        )),
        Ok(i) => Ok(Some(i - 1)),
        Err(_) => Ok(None),
    }
}

/// `plan` with its first columns renamed to `names` (`AS t(a, b)`, `WITH
/// t(a, b) AS (..)`); the columns past them keep their names.
pub(super) fn renamed(
    plan: LogicalPlan,
    names: &[ast::TableAliasColumnDef],
) -> Result<LogicalPlan> {
    if names.is_empty() {
        return Ok(plan);
    }
    let columns = plan.column_names()?;
    if names.len() > columns.len() {
        return Err(SlothError::plan(format!(
            "{} column names for {} columns",
            names.len(),
            columns.len()
        )));
    }
    let exprs = columns
        .iter()
        .enumerate()
        .map(|(i, n)| match names.get(i) {
            Some(c) => col(n.as_str()).alias(ident(&c.name)),
            None => col(n.as_str()),
        })
        .collect();
    Ok(LogicalPlan::project(Arc::new(plan), exprs))
}
