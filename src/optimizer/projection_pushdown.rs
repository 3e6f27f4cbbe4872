//! TODO
use crate::error::Result;
use crate::plan::LogicalPlan;
use super::OptimizerRule;
pub struct ProjectionPushdown;
impl OptimizerRule for ProjectionPushdown {
    fn name(&self) -> &'static str { "projection_pushdown" }
    fn rewrite(&self, _plan: &LogicalPlan) -> Result<Option<LogicalPlan>> { Ok(None) }
}
