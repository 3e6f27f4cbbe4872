//! TODO
use crate::error::Result;
use crate::plan::LogicalPlan;
use super::OptimizerRule;
pub struct SimplifyExpressions;
impl OptimizerRule for SimplifyExpressions {
    fn name(&self) -> &'static str { "simplify_expressions" }
    fn rewrite(&self, _plan: &LogicalPlan) -> Result<Option<LogicalPlan>> { Ok(None) }
}
