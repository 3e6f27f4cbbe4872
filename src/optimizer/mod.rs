//! Rule-based optimizer over [`LogicalPlan`]s.
//!
//! Each rule lives in its own file and rewrites a plan into an equivalent
//! one. The driver runs the enabled rules in [`RULES`] order, repeatedly,
//! until a pass changes nothing (or [`MAX_PASSES`] is reached), and reports
//! which rules fired. Any rule can be switched off by name
//! ([`OptimizerOptions::disable`]); tests run every query with the optimizer
//! on, off, and with each rule off, and compare the results.

mod aggregate_semi_join;

mod common_subexpr_eliminate;
mod cross_join_count;
mod eager_aggregation;
mod eliminate_outer_join;
mod join_output_pruning;
mod join_reorder;
mod limit_pushdown;
mod predicate_pushdown;
mod projection_pushdown;
mod semi_join_pushdown;
mod simplify_expressions;
#[cfg(test)]
pub(crate) mod test_util;

use crate::error::Result;
use crate::expr::Expr;
use crate::plan::{LogicalPlan, Transformed};

/// The names of `exprs` when every one is a plain column, else `None`
/// (join keys that are computed expressions).
pub(crate) fn column_names(exprs: &[Expr]) -> Option<Vec<String>> {
    exprs
        .iter()
        .map(|e| match e {
            Expr::Column(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

pub(crate) use crate::plan::column_passed_on;

/// How the driver applies a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyOrder {
    /// Every node is offered to [`OptimizerRule::rewrite`], inputs before
    /// the node that reads them; a node the rule leaves keeps its inputs.
    BottomUp,
    /// The rule is handed the root and walks the plan itself (rules that
    /// carry context down, such as the predicates or columns a parent
    /// needs).
    WholePlan,
}

/// One rewrite of logical plans.
pub trait OptimizerRule: Sync {
    /// Name used in `explain` output and to disable the rule.
    fn name(&self) -> &'static str;
    /// How the driver applies [`OptimizerRule::rewrite`].
    fn apply_order(&self) -> ApplyOrder;
    /// Rewrites one node ([`ApplyOrder::BottomUp`]) or the whole plan
    /// ([`ApplyOrder::WholePlan`]), and says whether it changed it: the
    /// driver stops when a pass changes nothing.
    fn rewrite(&self, plan: LogicalPlan) -> Result<Transformed<LogicalPlan>>;
}

/// `rule` applied to `plan` in the order it asks for.
pub fn apply_rule(
    rule: &dyn OptimizerRule,
    plan: &LogicalPlan,
) -> Result<Transformed<LogicalPlan>> {
    match rule.apply_order() {
        ApplyOrder::BottomUp => plan.transform_up(&mut |node| rule.rewrite(node)),
        ApplyOrder::WholePlan => rule.rewrite(plan.clone()),
    }
}

/// All rules, in the order one pass applies them.
pub static RULES: &[&dyn OptimizerRule] = &[
    &simplify_expressions::SimplifyExpressions,
    &predicate_pushdown::PredicatePushdown,
    &eliminate_outer_join::EliminateOuterJoin,
    &semi_join_pushdown::SemiJoinPushdown,
    &aggregate_semi_join::AggregateSemiJoin,
    &eager_aggregation::EagerAggregation,
    &cross_join_count::CrossJoinCount,
    &join_reorder::JoinReorder,
    &limit_pushdown::LimitPushdown,
    &common_subexpr_eliminate::CommonSubexprEliminate,
    &projection_pushdown::ProjectionPushdown,
];

/// Rules applied once, in this order, after [`RULES`] reach their fixed
/// point: they add structure the others should not see.
pub static FINAL_RULES: &[&dyn OptimizerRule] = &[&join_output_pruning::JoinOutputPruning];

/// Upper bound on passes; plans reach a fixed point in two or three.
pub const MAX_PASSES: usize = 8;

pub use crate::config::OptimizerOptions;

impl OptimizerOptions {
    /// Names of all rules, in the order a pass applies them.
    pub fn rule_names() -> Vec<&'static str> {
        RULES.iter().chain(FINAL_RULES).map(|r| r.name()).collect()
    }
}

/// Optimizes `plan`; returns the new plan and the names of the rules that fired.
pub fn optimize(
    plan: &LogicalPlan,
    options: &OptimizerOptions,
) -> Result<(LogicalPlan, Vec<String>)> {
    let o = optimize_traced(plan, options)?;
    Ok((o.plan, o.fired))
}

/// What [`optimize_traced`] did.
#[derive(Debug)]
pub struct Optimized {
    /// The optimized plan.
    pub plan: LogicalPlan,
    /// Names of the rules that changed it, in the order they first did.
    pub fired: Vec<String>,
    /// Whether [`RULES`] reached a fixed point within [`MAX_PASSES`]. A
    /// rule that rewrites its own output on every pass (a projection added
    /// above another each time) never does; the plan is still correct, but
    /// the tests require convergence.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub converged: bool,
}

/// [`optimize`], also telling whether the rules converged.
pub fn optimize_traced(plan: &LogicalPlan, options: &OptimizerOptions) -> Result<Optimized> {
    for d in &options.disabled {
        if !RULES.iter().chain(FINAL_RULES).any(|r| r.name() == d) {
            return Err(crate::SlothError::plan(format!(
                "unknown optimizer rule '{d}'; rules: {}",
                OptimizerOptions::rule_names().join(", ")
            )));
        }
    }
    let mut plan = plan.clone();
    let mut fired: Vec<String> = Vec::new();
    // Applies `rule`; whether it changed the plan.
    let mut apply = |rule: &dyn OptimizerRule, plan: &mut LogicalPlan| -> Result<bool> {
        let Transformed { data, transformed } = apply_rule(rule, plan)?;
        if !transformed {
            return Ok(false);
        }
        // Tests hold every rule to its word: a claimed change is a change.
        debug_assert!(
            data != *plan,
            "{} said it changed a plan it left as it was:\n{plan}",
            rule.name()
        );
        if !fired.iter().any(|f| f == rule.name()) {
            fired.push(rule.name().to_string());
        }
        *plan = data;
        Ok(true)
    };
    let mut converged = false;
    for _ in 0..MAX_PASSES {
        let mut changed = false;
        for rule in RULES.iter().filter(|r| options.enabled(r.name())) {
            changed |= apply(*rule, &mut plan)?;
        }
        if !changed {
            converged = true;
            break;
        }
    }
    for rule in FINAL_RULES.iter().filter(|r| options.enabled(r.name())) {
        apply(*rule, &mut plan)?;
    }
    Ok(Optimized {
        plan,
        fired,
        converged,
    })
}
