//! TODO
use crate::error::Result;
use crate::plan::LogicalPlan;
use super::OptimizerRule;
pub struct PredicatePushdown;
impl OptimizerRule for PredicatePushdown {
    fn name(&self) -> &'static str { "predicate_pushdown" }
    fn rewrite(&self, _plan: &LogicalPlan) -> Result<Option<LogicalPlan>> { Ok(None) }
}
