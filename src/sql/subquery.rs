//! Subqueries, decorrelated into joins (never run per row).
//!
//! - `EXISTS (q)` / `NOT EXISTS (q)` → semi / anti join on the correlation
//!   equalities; other correlated conditions become the join's pair filter
//!   (TPC-H Q21's `l2.l_suppkey <> l1.l_suppkey`).
//! - `x IN (q)` → semi join on `x = q.value` (plus correlation).
//! - `(a, b) IN (q)` → semi join on `a = q.1 AND b = q.2`.
//! - `EXISTS (q)` / `x IN (q)` as a value (`CASE WHEN EXISTS ..`, a select
//!   list) → left joins with `q`'s row counts per correlation key and, for
//!   IN, its `(key, value)` groups (`subquery_predicate`).
//! - `x op ALL / ANY (q)` for an order comparison, `= ALL` and `<> ANY` →
//!   a left join with `q`'s count, non-null count, minimum and maximum per
//!   correlation key, and a CASE over them (`quantified`).
//! - `x NOT IN (q)` (uncorrelated) → anti join, made null-aware: a null in
//!   `q` rejects every row, a null `x` is rejected unless `q` is empty.
//! - A scalar subquery `(q)` → a left join with `q` grouped by its
//!   correlation columns (TPC-H Q2, Q17, Q20), or a cross join with its one
//!   row when uncorrelated (Q11, Q15, Q22); the expression reads its value.
//!   A `count` read so is 0, not null, for outer rows without a match. A
//!   subquery that is not such an aggregate is grouped first (row count and
//!   first value per correlation key, or in all when uncorrelated), so it
//!   yields one row, null when empty, and more than one row is an error
//!   (`scalar_subquery_value`), never duplicated outer rows.
//! - A subquery whose value is read (scalar, ALL / ANY, EXISTS or IN as a
//!   value) and whose correlation is more than equalities is planned again
//!   over a [`Domain`], the distinct outer values it reads, so that it
//!   joins back on equalities to those values.
//!
//! Correlated references are resolved in the enclosing query's scope (one
//! level up) and marked; the subquery's planner lifts the conjuncts that
//! hold them out of its WHERE and exposes the inner columns they use.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

use arrow::datatypes::{Field, Schema};
use sqlparser::ast;

use super::expr::{Resolver, convert};
use super::planner::{QueryPlanner, Scope, ident};
use crate::error::{Result, SlothError};
use crate::expr::{AggFunc, Expr, Operator, ScalarValue, col, count_star, lit, when};
use crate::functions;
use crate::io::ScanSource;
use crate::plan::{
    Aggregate, Filter, Join, JoinType, LogicalPlan, Project, Scan, Transformed, Window,
};

/// Prefix marking a column resolved in the enclosing query.
pub(in crate::sql) const OUTER: &str = "\u{1}";

/// A join that a subquery adds to the query that contains it.
pub(in crate::sql) struct PendingJoin {
    plan: Arc<LogicalPlan>,
    how: JoinType,
    left_on: Vec<Expr>,
    right_on: Vec<Expr>,
    filter: Option<Expr>,
    /// Applied above the join (NOT IN's null handling).
    post_filter: Option<Expr>,
    /// The outer values `plan` was planned against, when its correlation
    /// is more than equalities: built from the outer rows as they are
    /// joined.
    domain: Option<Arc<Domain>>,
}

impl PendingJoin {
    /// The same join with its outer keys rewritten by `f`: a subquery of a
    /// grouped select list joins after the aggregation, so its outer keys
    /// read the aggregation's outputs.
    pub(in crate::sql) fn map_outer_keys(
        mut self,
        f: impl Fn(&Expr) -> Result<Expr>,
    ) -> Result<Self> {
        self.left_on = self.left_on.iter().map(f).collect::<Result<_>>()?;
        Ok(self)
    }

    /// True if the subquery provides one of these columns.
    pub(in crate::sql) fn provides_any(&self, columns: &[String]) -> bool {
        self.plan
            .schema()
            .is_ok_and(|s| s.fields().iter().any(|f| columns.contains(f.name())))
    }
}

/// The distinct outer values that a subquery correlated by more than
/// equalities is planned against, DuckDB's "delim join": `(select count(*)
/// from r where r.x > t.y)` becomes, for each distinct `t.y` (a column
/// `__dom<id>.0`), the count of `r` rows above it, grouped by that column
/// and left-joined back to `t` on it. The subquery is planned over a
/// stand-in scan of that schema, which [`SelectResolver::apply_pending`]
/// replaces with the distinct values of the outer rows it joins.
pub(in crate::sql) struct Domain {
    /// The stand-in's (empty) rows: they identify it in the plan.
    stand_in_rows: Arc<Vec<arrow::record_batch::RecordBatch>>,
    /// A scan of those rows with the domain's columns.
    stand_in: Arc<LogicalPlan>,
    /// (outer column, domain column), in the domain's column order.
    columns: Vec<(String, String)>,
}

impl Domain {
    /// The domain column that stands for the outer column `outer`.
    pub(in crate::sql) fn column_for(&self, outer: &str) -> Option<&str> {
        self.columns
            .iter()
            .find(|(o, _)| o == outer)
            .map(|(_, d)| d.as_str())
    }

    /// The stand-in scan and the names of its columns: a FROM item.
    pub(in crate::sql) fn item(&self) -> (Arc<LogicalPlan>, HashSet<String>) {
        let names = self.columns.iter().map(|(_, d)| d.clone()).collect();
        (self.stand_in.clone(), names)
    }

    /// The domain columns, in order.
    fn column_names(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|(_, d)| d.as_str())
    }

    /// (outer column, domain column) pairs, in the domain's order.
    pub(in crate::sql) fn columns(&self) -> impl Iterator<Item = (&str, &str)> {
        self.columns.iter().map(|(o, d)| (o.as_str(), d.as_str()))
    }

    /// `plan` with the stand-in replaced by the distinct values of
    /// `outer_values` (one expression per domain column) over `outer`.
    fn substitute(
        &self,
        plan: &LogicalPlan,
        outer: &Arc<LogicalPlan>,
        outer_values: &[Expr],
    ) -> Result<Arc<LogicalPlan>> {
        let values = LogicalPlan::distinct(Arc::new(LogicalPlan::project(
            outer.clone(),
            outer_values
                .iter()
                .zip(self.column_names())
                .map(|(e, d)| e.clone().alias(d))
                .collect(),
        )));
        let replaced = plan.transform_up(&mut |node| match &node {
            LogicalPlan::Scan(scan)
                if matches!(&scan.source, ScanSource::Memory { batches, .. }
                    if Arc::ptr_eq(batches, &self.stand_in_rows)) =>
            {
                Ok(Transformed::yes(values.clone()))
            }
            _ => Ok(Transformed::no(node)),
        })?;
        Ok(Arc::new(replaced.data))
    }
}

/// A planned subquery, its columns renamed `__sq<id>.<name>`.
struct Subquery {
    plan: Arc<LogicalPlan>,
    /// The prefix of its columns, `__sq<id>.`.
    prefix: String,
    /// Output columns (correlation columns excluded).
    values: Vec<String>,
    /// (outer expression, subquery column) equalities.
    keys: Vec<(Expr, Expr)>,
    /// Other correlated conditions, over outer and subquery columns.
    filter: Option<Expr>,
    /// The outer values it was planned against, if any (then `keys` pair
    /// the outer columns with their domain columns and `filter` is none).
    domain: Option<Arc<Domain>>,
}

/// Resolves names for one SELECT: its own scope first, then (marked) the
/// enclosing query's; collects the joins its subqueries need.
pub(in crate::sql) struct SelectResolver<'p, 'a> {
    pub planner: &'p QueryPlanner<'a>,
    pub scope: &'p Scope,
    pub outer: Option<&'p Scope>,
    pub pending: RefCell<Vec<PendingJoin>>,
    /// The SELECT's `WINDOW name AS (..)` definitions.
    pub windows: &'p [ast::NamedWindowDefinition],
    /// The outer values a subquery is planned against: its outer columns
    /// resolve to the domain's.
    pub domain: Option<&'p Domain>,
}

impl Resolver for SelectResolver<'_, '_> {
    fn parameter(&self, n: usize) -> Result<Expr> {
        self.planner.parameter(n)
    }

    fn named_window(&self, name: &str) -> Option<ast::NamedWindowExpr> {
        self.windows
            .iter()
            .find(|w| ident(&w.0) == name)
            .map(|w| w.1.clone())
    }

    fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<String> {
        match self.scope.resolve(qualifier, name) {
            Err(e @ SlothError::ColumnNotFound { .. }) => match self.outer {
                Some(o) => o
                    .resolve(qualifier, name)
                    .map(|n| match self.domain.and_then(|d| d.column_for(&n)) {
                        Some(d) => d.to_string(),
                        None => format!("{OUTER}{n}"),
                    })
                    .map_err(|_| e),
                None => Err(e),
            },
            other => other,
        }
    }

    /// `x op ALL (q)` / `x op ANY (q)` for an order comparison, or `=` ALL /
    /// `<>` ANY: decided by the count, non-null count, minimum and maximum
    /// of `q`'s values (per correlation key, from a left join), with SQL's
    /// three values. For `>` ALL: true when `q` is empty; else null for a
    /// null `x`; false when some value is at least `x` (`x <= max`); else
    /// null when `q` holds a null; else true. The others mirror it.
    /// EXISTS reads a count of the subquery's rows per correlation key
    /// (from a left join); `x IN (q)` reads that count, the count of
    /// non-null values, and whether a group of `(key, value)` matched `x`:
    /// true on a match; else false for an empty subquery; else null for a
    /// null `x` or a null among the values; else false.
    fn subquery_predicate(&self, e: &ast::Expr) -> Result<Expr> {
        let (q, negated, x) = match e {
            ast::Expr::Exists { subquery, negated } => (rows_that_exist(subquery), *negated, None),
            ast::Expr::In {
                expr,
                target: ast::InTarget::Subquery(q),
                negated,
                ..
            } => (q.clone(), *negated, Some(convert(expr, self)?)),
            other => {
                return Err(SlothError::unsupported(format!(
                    "'{other}' in this position"
                )));
            }
        };
        let sq = self.planner.plan_value_subquery(&q, self.scope)?;
        let id = self.planner.next_id();
        let [n, nn, hit] = ["__n", "__nn", "__hit"].map(|s| format!("__sq{id}.{s}"));
        let (left_on, right_on): (Vec<Expr>, Vec<Expr>) = sq.keys.into_iter().unzip();
        let how = per_key_join(&left_on);
        let value = match (&x, sq.values.as_slice()) {
            (None, _) => None,
            (Some(_), [v]) => Some(col(v.as_str())),
            (Some(_), values) => {
                return Err(SlothError::plan(format!(
                    "IN (subquery) must return one column, got {}",
                    values.len()
                )));
            }
        };
        let mut aggs = vec![count_star().alias(n.as_str())];
        aggs.extend(value.clone().map(|v| {
            Expr::Agg {
                func: AggFunc::Count,
                args: vec![v],
                distinct: false,
            }
            .alias(nn.as_str())
        }));
        let mut pending = self.pending.borrow_mut();
        pending.push(PendingJoin {
            plan: Arc::new(LogicalPlan::aggregate(
                sq.plan.clone(),
                right_on.clone(),
                aggs,
            )),
            how,
            left_on: left_on.clone(),
            right_on: right_on.clone(),
            filter: None,
            post_filter: None,
            domain: sq.domain.clone(),
        });
        let rows = Expr::Function(functions::COALESCE, vec![col(n.as_str()), lit(0i64)]);
        let (Some(x), Some(value)) = (x, value) else {
            return Ok(if negated {
                rows.eq(lit(0i64))
            } else {
                rows.gt(lit(0i64))
            });
        };
        // The (key, value) groups: a row of x's key and value matches one.
        let (mut hit_left, mut hit_right) = (left_on, right_on);
        hit_left.push(x.clone());
        hit_right.push(value);
        pending.push(PendingJoin {
            plan: Arc::new(LogicalPlan::aggregate(
                sq.plan,
                hit_right.clone(),
                vec![count_star().alias(hit.as_str())],
            )),
            how: JoinType::Left,
            left_on: hit_left,
            right_on: hit_right,
            filter: None,
            post_filter: None,
            domain: sq.domain,
        });
        let null = Expr::Literal(ScalarValue::Boolean(None));
        let found = when(col(hit.as_str()).is_not_null())
            .then(lit(true))
            .when(rows.eq(lit(0i64)))
            .then(lit(false))
            .when(x.is_null())
            .then(null.clone())
            .when(col(nn.as_str()).lt(col(n.as_str())))
            .then(null)
            .otherwise(lit(false));
        Ok(if negated { found.not() } else { found })
    }

    fn quantified_subquery(
        &self,
        x: Expr,
        op: &ast::BinaryOperator,
        all: bool,
        q: &ast::Query,
    ) -> Result<Expr> {
        use ast::BinaryOperator as B;
        let sq = self.planner.plan_value_subquery(q, self.scope)?;
        let [value] = sq.values.as_slice() else {
            return Err(SlothError::plan(format!(
                "a subquery of ALL / ANY must return one column, got {}",
                sq.values.len()
            )));
        };
        let id = self.planner.next_id();
        let [n, nn, min, max] = ["__n", "__nn", "__min", "__max"].map(|s| format!("__sq{id}.{s}"));
        let v = col(value.as_str());
        let (left_on, right_on): (Vec<Expr>, Vec<Expr>) = sq.keys.into_iter().unzip();
        let agg = |func: AggFunc| Expr::Agg {
            func,
            args: vec![v.clone()],
            distinct: false,
        };
        let stats = LogicalPlan::aggregate(
            sq.plan,
            right_on.clone(),
            vec![
                count_star().alias(n.as_str()),
                agg(AggFunc::Count).alias(nn.as_str()),
                agg(AggFunc::Min).alias(min.as_str()),
                agg(AggFunc::Max).alias(max.as_str()),
            ],
        );
        let (min, max) = (col(min.as_str()), col(max.as_str()));
        let differs = min.clone().neq(x.clone()).or(max.clone().neq(x.clone()));
        // The condition under which some value decides the answer (false
        // for ALL, true for ANY) whatever the nulls.
        let decisive = match (op, all) {
            (B::Gt, true) => x.clone().lt_eq(max),
            (B::GtEq, true) => x.clone().lt(max),
            (B::Lt, true) => x.clone().gt_eq(min),
            (B::LtEq, true) => x.clone().gt(min),
            (B::Eq, true) | (B::NotEq, false) => differs,
            (B::Gt, false) => x.clone().gt(min),
            (B::GtEq, false) => x.clone().gt_eq(min),
            (B::Lt, false) => x.clone().lt(max),
            (B::LtEq, false) => x.clone().lt_eq(max),
            _ => {
                let (q, what) = if all {
                    ("ALL", "NOT IN")
                } else {
                    ("ANY", "IN")
                };
                return Err(SlothError::unsupported(format!(
                    "'{op} {q} (subquery)' other than as a WHERE condition (write it as {what})"
                )));
            }
        };
        self.pending.borrow_mut().push(PendingJoin {
            plan: Arc::new(stats),
            how: per_key_join(&left_on),
            left_on,
            right_on,
            filter: None,
            post_filter: None,
            domain: sq.domain,
        });
        let null = Expr::Literal(ScalarValue::Boolean(None));
        let rows = Expr::Function(functions::COALESCE, vec![col(n.as_str()), lit(0i64)]);
        Ok(when(rows.eq(lit(0i64)))
            .then(lit(all))
            .when(x.is_null())
            .then(null.clone())
            .when(decisive)
            .then(lit(!all))
            .when(col(nn.as_str()).lt(col(n.as_str())))
            .then(null)
            .otherwise(lit(all)))
    }

    fn scalar_subquery(&self, q: &ast::Query) -> Result<Expr> {
        let sq = self.planner.plan_value_subquery(q, self.scope)?;
        let [value] = sq.values.as_slice() else {
            return Err(SlothError::plan(format!(
                "a scalar subquery must return one column, got {}",
                sq.values.len()
            )));
        };
        let value_name = value.clone();
        let domain = sq.domain.clone();
        let correlated = !sq.keys.is_empty();
        let (left_on, right_on): (Vec<Expr>, Vec<Expr>) = sq.keys.into_iter().unzip();
        let how = per_key_join(&left_on);
        let (plan, right_on, value) = match one_row_aggregate(&sq.plan, &value_name, correlated)? {
            // A typed null too (`0.2 * avg(x)` over no rows).
            Some(empty) if empty.is_null() => (sq.plan, right_on, col(value_name.as_str())),
            // A left join leaves unmatched rows null (a matched row's keys
            // are not: equal keys are not null); they read the value over
            // no rows.
            Some(empty) => {
                let unmatched = right_on[0].clone().is_null();
                let value = when(unmatched)
                    .then(lit(empty))
                    .otherwise(col(value_name.as_str()));
                (sq.plan, right_on, value)
            }
            None => {
                let (plan, right_on) = at_most_one_row(sq.plan, right_on, &value_name);
                (plan, right_on, col(value_name.as_str()))
            }
        };
        self.pending.borrow_mut().push(PendingJoin {
            plan,
            how,
            left_on,
            right_on,
            filter: None,
            post_filter: None,
            domain,
        });
        Ok(value)
    }
}

/// EXISTS's subquery without what cannot change whether it has rows: an
/// ORDER BY, and a LIMIT of one row or more without OFFSET (`EXISTS
/// (SELECT .. WHERE t2.id = t1.id LIMIT 1)`), so that a correlated one
/// decorrelates like any other.
fn rows_that_exist(q: &ast::Query) -> Box<ast::Query> {
    let mut q = Box::new(q.clone());
    let keeps_a_row = match &q.limit_clause {
        Some(ast::LimitClause::LimitOffset {
            limit: Some(limit),
            offset: None,
            limit_by,
        }) if limit_by.is_empty() => {
            super::planner::literal_usize(limit, "LIMIT").is_ok_and(|n| n >= 1)
        }
        _ => false,
    };
    if keeps_a_row && q.fetch.is_none() {
        q.limit_clause = None;
        q.order_by = None;
    }
    q
}

impl SelectResolver<'_, '_> {
    /// If `c` is an `[NOT] EXISTS` or `[NOT] IN (subquery)` condition, plans
    /// it as a pending join and returns true.
    pub fn subquery_condition(&self, c: &ast::Expr) -> Result<bool> {
        match c {
            ast::Expr::Exists { subquery, negated } => {
                let subquery = rows_that_exist(subquery);
                let sq = self.planner.plan_subquery(&subquery, self.scope, None)?;
                let (left_on, right_on) = if sq.keys.is_empty() {
                    // Uncorrelated, or correlated by its filter alone: every
                    // (outer, inner) pair is a candidate, one constant key.
                    (vec![lit(true)], vec![lit(true)])
                } else {
                    sq.keys.into_iter().unzip()
                };
                let how = if *negated {
                    JoinType::Anti
                } else {
                    JoinType::Semi
                };
                self.pending.borrow_mut().push(PendingJoin {
                    plan: sq.plan,
                    how,
                    left_on,
                    right_on,
                    filter: sq.filter,
                    post_filter: None,
                    domain: None,
                });
                Ok(true)
            }
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Not,
                expr,
            } => match expr.as_ref() {
                ast::Expr::Exists { subquery, negated } => {
                    self.subquery_condition(&ast::Expr::Exists {
                        subquery: subquery.clone(),
                        negated: !negated,
                    })
                }
                ast::Expr::Nested(inner) => self.subquery_condition(&ast::Expr::UnaryOp {
                    op: ast::UnaryOperator::Not,
                    expr: inner.clone(),
                }),
                _ => Ok(false),
            },
            ast::Expr::Nested(inner) => self.subquery_condition(inner),
            // `x = ANY (q)` is `x IN (q)` and `x <> ALL (q)` is `x NOT IN
            // (q)`, nulls included.
            ast::Expr::AnyOp {
                left,
                compare_op: ast::BinaryOperator::Eq,
                right,
                ..
            }
            | ast::Expr::AllOp {
                left,
                compare_op: ast::BinaryOperator::NotEq,
                right,
            } => match right.as_ref() {
                ast::Expr::Subquery(q) => self.subquery_condition(&ast::Expr::In {
                    expr: left.clone(),
                    target: ast::InTarget::Subquery(q.clone()),
                    negated: matches!(c, ast::Expr::AllOp { .. }),
                    global: false,
                }),
                _ => Ok(false),
            },
            ast::Expr::In {
                expr,
                target: ast::InTarget::Subquery(q),
                negated,
                ..
            } => {
                // `x IN (q)` is the one-column case of `(a, b) IN (q)`.
                let items = match expr.as_ref() {
                    ast::Expr::Tuple(items) => items.as_slice(),
                    one => std::slice::from_ref(one),
                };
                if !negated || items.len() > 1 {
                    return self.row_in_subquery(items, q, *negated);
                }
                let x = convert(expr, self)?;
                let sq = self.planner.plan_subquery(q, self.scope, None)?;
                let [value] = sq.values.as_slice() else {
                    return Err(SlothError::plan(format!(
                        "IN (subquery) must return one column, got {}",
                        sq.values.len()
                    )));
                };
                let value = col(value.as_str());
                let (mut left_on, mut right_on): (Vec<Expr>, Vec<Expr>) =
                    sq.keys.into_iter().unzip();
                left_on.push(x.clone());
                right_on.push(value.clone());
                if left_on.len() > 1 || sq.filter.is_some() {
                    // Correlated: not an anti join, but the three-valued
                    // value of `NOT (x IN (q))` per outer row, which the
                    // filter then keeps where it is true.
                    return Ok(false);
                }
                // NOT IN is null-aware: count rows and non-null values of the subquery once.
                let id = self.planner.next_id();
                let (n, nn) = (format!("__sq{id}.__n"), format!("__sq{id}.__nn"));
                let stats = LogicalPlan::aggregate(
                    sq.plan.clone(),
                    vec![],
                    vec![
                        count_star().alias(n.as_str()),
                        Expr::Agg {
                            func: AggFunc::Count,
                            args: vec![value],
                            distinct: false,
                        }
                        .alias(nn.as_str()),
                    ],
                );
                let keep = col(n.as_str())
                    .eq(lit(0))
                    .or(x.is_not_null().and(col(nn.as_str()).eq(col(n.as_str()))));
                let mut pending = self.pending.borrow_mut();
                pending.push(PendingJoin {
                    plan: sq.plan,
                    how: JoinType::Anti,
                    left_on,
                    right_on,
                    filter: None,
                    post_filter: None,
                    domain: None,
                });
                pending.push(PendingJoin {
                    plan: Arc::new(stats),
                    how: JoinType::Cross,
                    left_on: vec![],
                    right_on: vec![],
                    filter: None,
                    post_filter: Some(keep),
                    domain: None,
                });
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// `(a, b, ..) IN (q)`, or `a IN (q)` with one item: a semi join on
    /// `a = q.1`, `b = q.2`, .. (plus the correlation).
    fn row_in_subquery(&self, items: &[ast::Expr], q: &ast::Query, negated: bool) -> Result<bool> {
        if negated {
            // A null in either row makes a component unknown, so NOT IN of
            // rows is not an anti join on the components.
            return Err(SlothError::unsupported(
                "NOT IN with a row value (write it as NOT EXISTS)",
            ));
        }
        let xs = items
            .iter()
            .map(|i| convert(i, self))
            .collect::<Result<Vec<_>>>()?;
        let sq = self.planner.plan_subquery(q, self.scope, None)?;
        if xs.len() == 1 && sq.values.len() != 1 {
            return Err(SlothError::plan(format!(
                "IN (subquery) must return one column, got {}",
                sq.values.len()
            )));
        }
        if sq.values.len() != xs.len() {
            return Err(SlothError::plan(format!(
                "a row of {} values IN a subquery of {} columns",
                xs.len(),
                sq.values.len()
            )));
        }
        let (mut left_on, mut right_on): (Vec<Expr>, Vec<Expr>) = sq.keys.into_iter().unzip();
        left_on.extend(xs);
        right_on.extend(sq.values.iter().map(|v| col(v.as_str())));
        self.pending.borrow_mut().push(PendingJoin {
            plan: sq.plan,
            how: JoinType::Semi,
            left_on,
            right_on,
            filter: sq.filter,
            post_filter: None,
            domain: None,
        });
        Ok(true)
    }

    /// Adds the collected joins on top of `plan`.
    pub fn apply_pending(&self, mut plan: LogicalPlan) -> Result<LogicalPlan> {
        for p in self.pending.borrow_mut().drain(..) {
            let left = Arc::new(plan);
            let right = match &p.domain {
                Some(d) => d.substitute(&p.plan, &left, &p.left_on[..d.columns.len()])?,
                None => p.plan,
            };
            plan = LogicalPlan::Join(Join::new(
                left, right, p.left_on, p.right_on, p.how, p.filter,
            ));
            if let Some(f) = p.post_filter {
                plan = LogicalPlan::filter(Arc::new(plan), f);
            }
        }
        Ok(plan)
    }
}

/// True if `plan` computes a window function anywhere.
fn plan_has_window(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::Window(Window { .. }))
        || plan.inputs().into_iter().any(|i| plan_has_window(i))
}

/// How a subquery's per-key result joins the outer rows: a left join on
/// the correlation keys (outer rows without a match read nulls), or, when
/// uncorrelated, a cross join with its one row.
fn per_key_join(outer_keys: &[Expr]) -> JoinType {
    if outer_keys.is_empty() {
        JoinType::Cross
    } else {
        JoinType::Left
    }
}

/// Replaces column names by `f(name)`.
pub(in crate::sql) fn rename_columns(e: &Expr, f: &dyn Fn(&str) -> String) -> Expr {
    e.clone().transform(&mut |n| match n {
        Expr::Column(c) => Expr::Column(f(&c)),
        other => other,
    })
}

/// True if the expression reads a column of the enclosing query.
pub(in crate::sql) fn is_correlated(e: &Expr) -> bool {
    e.columns().iter().any(|c| c.starts_with(OUTER))
}

/// What a scalar subquery's value is for an outer row it has no row for:
/// what its expression gives over no rows (`count(*) + 2` is 2,
/// `coalesce(sum(x), 0)` is 0), null for most.
type Empty = ScalarValue;

/// Whether `plan` (a subquery as [`QueryPlanner::plan_subquery`] wraps it)
/// is an aggregate without a GROUP BY of its own: one row per correlation
/// key (`correlated`), or exactly one row. `Some` then says what an outer
/// row without a match reads; `None` when the shape does not promise it.
fn one_row_aggregate(plan: &LogicalPlan, value: &str, correlated: bool) -> Result<Option<Empty>> {
    // The renaming projection, then the SELECT's own.
    let LogicalPlan::Project(Project { input, exprs, .. }) = plan else {
        return Ok(None);
    };
    let Some(renamed) = exprs.iter().find(|e| e.output_name() == value) else {
        return Ok(None);
    };
    let LogicalPlan::Project(Project {
        input: select_input,
        exprs: items,
        ..
    }) = input.as_ref()
    else {
        return Ok(None);
    };
    let inner_name = renamed.unalias().to_string();
    let Some(item) = items.iter().find(|e| e.output_name() == inner_name) else {
        return Ok(None);
    };
    let (aggregate, having) = match select_input.as_ref() {
        LogicalPlan::Filter(Filter { input, .. }) => (input.as_ref(), true),
        other => (other, false),
    };
    let LogicalPlan::Aggregate(Aggregate { keys, aggs, .. }) = aggregate else {
        return Ok(None);
    };
    // Grouped by the correlation columns alone (exposed as `__c<i>` and
    // appended to the keys of a GROUP BY, which here must be empty), or not
    // at all.
    let correlation_columns = items
        .iter()
        .filter(|e| e.output_name().starts_with("__c"))
        .count();
    if keys.len() != correlation_columns {
        return Ok(None);
    }
    // Uncorrelated, HAVING may leave no row, which a cross join would
    // turn into no outer rows.
    if !correlated && having {
        return Ok(None);
    }
    if !correlated {
        // One row whatever the input: its value is the value.
        return Ok(Some(ScalarValue::Null));
    }
    // The item over no rows: counts are 0, the other aggregates null.
    let empty_aggregates = item.clone().transform(&mut |n| match n {
        Expr::Column(c) => match aggs.iter().find(|a| a.output_name() == c) {
            Some(a)
                if matches!(
                    a.unalias(),
                    Expr::Agg {
                        func: AggFunc::Count | AggFunc::CountStar,
                        ..
                    }
                ) =>
            {
                lit(0i64)
            }
            Some(_) => lit(ScalarValue::Null),
            None => Expr::Column(c),
        },
        other => other,
    });
    let empty = crate::physical_expr::eval::evaluate_constant(&empty_aggregates).map_err(|_| {
        SlothError::unsupported(format!(
            "a correlated scalar subquery whose value over no rows is not a constant ('{item}')"
        ))
    })?;
    // HAVING may keep or drop the group of no rows; only a null is safe.
    if having && !empty.is_null() {
        return Err(SlothError::unsupported(
            "a correlated scalar subquery with HAVING whose value over no rows is not null",
        ));
    }
    Ok(Some(empty))
}

/// `plan` grouped by its correlation keys `right_on` (or into one row):
/// its row count and first `value` per key, the value checked to come from
/// at most one row. Returns the plan and the keys to join on.
fn at_most_one_row(
    plan: Arc<LogicalPlan>,
    right_on: Vec<Expr>,
    value: &str,
) -> (Arc<LogicalPlan>, Vec<Expr>) {
    let key_names: Vec<String> = (0..right_on.len())
        .map(|i| format!("{value}.__key{i}"))
        .collect();
    let rows = format!("{value}.__rows");
    let grouped = LogicalPlan::aggregate(
        plan,
        right_on
            .into_iter()
            .zip(&key_names)
            .map(|(k, n)| k.alias(n.as_str()))
            .collect(),
        vec![
            count_star().alias(rows.as_str()),
            col(value).first().alias(value),
        ],
    );
    let mut exprs: Vec<Expr> = key_names.iter().map(|n| col(n.as_str())).collect();
    exprs.push(
        Expr::Function(
            functions::SCALAR_SUBQUERY_VALUE,
            vec![col(rows.as_str()), col(value)],
        )
        .alias(value),
    );
    let checked = LogicalPlan::project(Arc::new(grouped), exprs);
    (
        Arc::new(checked),
        key_names.iter().map(|n| col(n.as_str())).collect(),
    )
}

impl QueryPlanner<'_> {
    /// Plans a subquery whose value (not only whether it has rows) the
    /// outer query reads: one correlated by more than equalities is
    /// planned again against the [`Domain`] of the outer columns it reads,
    /// so that it joins back on equalities.
    fn plan_value_subquery(&self, q: &ast::Query, outer: &Scope) -> Result<Subquery> {
        let sq = self.plan_subquery(q, outer, None)?;
        let Some(filter) = &sq.filter else {
            return Ok(sq);
        };
        let correlation = sq
            .keys
            .iter()
            .fold(filter.clone(), |c, (o, i)| c.and(o.clone().eq(i.clone())));
        let mut outer_columns: Vec<String> = Vec::new();
        for c in correlation.columns() {
            if !c.starts_with(&sq.prefix) && !outer_columns.contains(&c) {
                outer_columns.push(c);
            }
        }
        // An outer row whose column is null finds no domain row to join
        // (keys compare with `=`), so it reads the subquery's value over no
        // rows: right only when the condition holds for no row then.
        if let Some(c) = outer_columns
            .iter()
            .find(|c| !correlation.rejects_nulls(&HashSet::from([c.to_string()])))
        {
            return Err(SlothError::unsupported(format!(
                "a correlated subquery whose condition can hold when outer column '{c}' is NULL"
            )));
        }
        let domain = Arc::new(self.domain(outer, outer_columns)?);
        let sq = self.plan_subquery(q, outer, Some(&domain))?;
        if sq.filter.is_some() {
            return Err(SlothError::unsupported(
                "a correlated subquery whose correlation is not an equality, in this position",
            ));
        }
        if plan_has_window(&sq.plan) {
            return Err(SlothError::unsupported(
                "window functions in a subquery correlated by a non-equality",
            ));
        }
        Ok(Subquery {
            domain: Some(domain),
            ..sq
        })
    }

    /// A [`Domain`] for the outer columns `columns` of the scope `outer`.
    fn domain(&self, outer: &Scope, columns: Vec<String>) -> Result<Domain> {
        let id = self.next_id();
        let mut fields = Vec::new();
        let mut pairs = Vec::new();
        for (k, c) in columns.into_iter().enumerate() {
            let data_type = outer
                .columns
                .iter()
                .find(|s| s.internal == c)
                .map(|s| s.data_type.clone())
                .ok_or_else(|| {
                    SlothError::unsupported(format!(
                        "a correlated subquery reading outer expression '{c}'"
                    ))
                })?;
            let name = format!("__dom{id}.{k}");
            fields.push(Field::new(name.as_str(), data_type, true));
            pairs.push((c, name));
        }
        let schema = Arc::new(Schema::new(fields));
        let stand_in_rows = Arc::new(Vec::new());
        let stand_in = Arc::new(LogicalPlan::Scan(Scan {
            source: ScanSource::Memory {
                schema,
                batches: stand_in_rows.clone(),
            },
            projection: None,
            filters: vec![],
        }));
        Ok(Domain {
            stand_in_rows,
            stand_in,
            columns: pairs,
        })
    }

    /// Plans a subquery of a query whose scope is `outer` (against
    /// `domain`'s values, if given).
    fn plan_subquery(
        &self,
        q: &ast::Query,
        outer: &Scope,
        domain: Option<&Domain>,
    ) -> Result<Subquery> {
        let (plan, correlated) = match q.body.as_ref() {
            ast::SetExpr::Select(s)
                if q.with.is_none() && q.order_by.is_none() && q.limit_clause.is_none() =>
            {
                self.plan_select_inner(s, &[], Some(outer), domain)?
            }
            _ => (self.plan_query(q)?, vec![]),
        };
        let id = self.next_id();
        let prefix = format!("__sq{id}.");
        let names: Vec<String> = plan.column_names()?;
        let exprs = names
            .iter()
            .map(|n| col(n.as_str()).alias(format!("{prefix}{n}")))
            .collect();
        let plan = Arc::new(LogicalPlan::project(Arc::new(plan), exprs));
        let values = names
            .iter()
            .filter(|n| !n.starts_with("__c"))
            .map(|n| format!("{prefix}{n}"))
            .collect();
        let mut keys = Vec::new();
        let mut filters = Vec::new();
        for c in correlated {
            let c = rename_columns(&c, &|n| match n.strip_prefix(OUTER) {
                Some(outer) => outer.to_string(),
                None => format!("{prefix}{n}"),
            });
            let inner_only = |e: &Expr| {
                !e.columns().is_empty() && e.columns().iter().all(|n| n.starts_with(&prefix))
            };
            let outer_only = |e: &Expr| {
                !e.columns().is_empty() && e.columns().iter().all(|n| !n.starts_with(&prefix))
            };
            match &c {
                Expr::Binary {
                    left,
                    op: Operator::Eq,
                    right,
                } if outer_only(left) && inner_only(right) => {
                    keys.push((left.as_ref().clone(), right.as_ref().clone()))
                }
                Expr::Binary {
                    left,
                    op: Operator::Eq,
                    right,
                } if inner_only(left) && outer_only(right) => {
                    keys.push((right.as_ref().clone(), left.as_ref().clone()))
                }
                _ => filters.push(c),
            }
        }
        Ok(Subquery {
            plan,
            prefix,
            values,
            keys,
            filter: Expr::conjunction(filters),
            domain: None,
        })
    }
}
