//! SELECT → logical plan, clause by clause, in the order SQL evaluates
//! them:
//!
//! 1. FROM (`from.rs`): the tables and their joins;
//! 2. WHERE (`where_clause.rs`): comma joins and filters; a subquery's
//!    conditions on outer columns set aside for its decorrelating join;
//! 3. the select list (`projection.rs`): items and their names;
//! 4. GROUP BY, the aggregation and HAVING (`aggregate.rs`);
//! 5. window functions and QUALIFY;
//! 6. the projection, DISTINCT and ORDER BY (`projection.rs`, `order.rs`);
//! 7. TOP (`order.rs`).
//!
//! Subqueries anywhere in it become joins (`sql/subquery.rs`): those of
//! WHERE before the aggregation, those of the outputs after it unless a
//! key or an aggregate reads them.

mod aggregate;
mod from;
mod order;
mod projection;
mod where_clause;

use std::cell::RefCell;
use std::sync::Arc;

use sqlparser::ast;

use crate::error::{Result, SlothError};
use crate::expr::{Expr, col};
use crate::plan::LogicalPlan;
use crate::sql::planner::{QueryPlanner, Scope};
use crate::sql::subquery::{Domain, OUTER, SelectResolver};
use crate::sql::unsupported::check_select;

use from::one_row;

impl QueryPlanner<'_> {
    /// Plans a SELECT that is no subquery.
    pub(in crate::sql) fn plan_select(
        &self,
        s: &ast::Select,
        order_by: &[&ast::OrderByExpr],
    ) -> Result<LogicalPlan> {
        Ok(self.plan_select_inner(s, order_by, None, None)?.0)
    }

    /// Plans a SELECT. With `outer` (a subquery), conditions that read the
    /// outer query's columns are returned instead of applied, with the inner
    /// columns they use exposed as outputs `__c<i>`. With a `domain` too,
    /// the SELECT is planned once per row of it: the domain joins FROM,
    /// the outer columns it holds read its columns, and those are grouped
    /// by and returned as equalities to the outer columns.
    pub(in crate::sql) fn plan_select_inner(
        &self,
        s: &ast::Select,
        order_by: &[&ast::OrderByExpr],
        outer: Option<&Scope>,
        domain: Option<&Domain>,
    ) -> Result<(LogicalPlan, Vec<Expr>)> {
        check_select(s)?;
        let (mut from_items, scope) = if s.from.is_empty() {
            one_row()?
        } else {
            self.plan_from(&s.from)?
        };
        from_items.extend(domain.map(Domain::item));
        let resolver = SelectResolver {
            planner: self,
            scope: &scope,
            outer,
            pending: RefCell::new(vec![]),
            windows: &s.named_window,
            domain,
        };
        let where_clause::Filtered {
            mut plan,
            mut correlated,
            mut correlated_columns,
        } = where_clause::filter(&resolver, s.selection.as_ref(), from_items)?;
        for (outer_column, column) in domain.iter().flat_map(|d| d.columns()) {
            let exposed = format!("__c{}", correlated_columns.len());
            correlated.push(col(format!("{OUTER}{outer_column}")).eq(col(exposed)));
            correlated_columns.push(column.to_string());
        }

        let mut items = projection::select_items(&resolver, s)?;
        let visible = items.len();
        for (i, c) in correlated_columns.iter().enumerate() {
            items.push((col(c.as_str()), format!("__c{i}")));
        }
        let (having, qualify) = aggregate::having_and_qualify(&resolver, s, &items[..visible])?;
        let sort_exprs = order::order_by_exprs(&resolver, &items, order_by)?;
        let qualify = match &s.distinct {
            Some(ast::Distinct::On(on)) => {
                order::distinct_on(&resolver, &items[..visible], on, &sort_exprs, qualify)?
            }
            _ => qualify,
        };
        let mut outputs = aggregate::Outputs {
            items,
            having,
            qualify,
            sort_exprs,
        };

        // Joins for scalar subqueries of the outputs come after the
        // aggregation, unless it reads them.
        let pending: Vec<_> = resolver.pending.borrow_mut().drain(..).collect();
        if aggregate::needs_aggregate(s, &outputs) {
            let mut grouping = aggregate::group_keys(&resolver, s, &outputs.items, visible)?;
            grouping.add_keys(correlated_columns.iter().map(|c| col(c.as_str())));
            plan = aggregate::aggregate(&resolver, plan, grouping, &mut outputs, pending)?;
        } else {
            resolver.pending.borrow_mut().extend(pending);
            plan = resolver.apply_pending(plan)?;
        }

        plan = windows_and_qualify(plan, &mut outputs);
        let distinct = matches!(s.distinct, Some(ast::Distinct::Distinct));
        plan = projection::project(
            plan,
            &outputs.items,
            outputs.sort_exprs,
            distinct,
            visible + correlated_columns.len(),
        )?;
        if outer.is_none() && !correlated.is_empty() {
            return Err(SlothError::plan(
                "a correlated reference outside a subquery",
            ));
        }
        let plan = order::top(plan, s, !correlated.is_empty())?;
        Ok((plan, correlated))
    }
}

/// The window functions of the outputs, computed on the (aggregated) rows
/// and then read by name, and QUALIFY's filter over them.
fn windows_and_qualify(plan: LogicalPlan, outputs: &mut aggregate::Outputs) -> LogicalPlan {
    let windowed = crate::plan::lift_windows(
        Arc::new(plan),
        outputs
            .items
            .iter_mut()
            .map(|(e, _)| e)
            .chain(outputs.sort_exprs.iter_mut().map(|(e, _)| e))
            .chain(outputs.qualify.iter_mut()),
    );
    let plan = Arc::unwrap_or_clone(windowed);
    match outputs.qualify.take() {
        Some(predicate) => LogicalPlan::filter(Arc::new(plan), predicate),
        None => plan,
    }
}
