//! Projection pushdown: read and carry only the columns the query uses.
//!
//! Walks the plan top-down with the set of column names the parent needs:
//! projections and aggregations drop outputs nobody reads, and scans get a
//! column list, so Parquet and CSV readers decode only those columns.
//!
//! ```text
//! before: Aggregate keys=[] aggs=[sum(l_quantity) AS s]
//!           Scan parquet 'lineitem.parquet'
//! after:  Aggregate keys=[] aggs=[sum(l_quantity) AS s]
//!           Scan parquet 'lineitem.parquet' columns=[l_quantity]
//! ```
//! Inputs whose column set is positional (union) or semantic (distinct) keep
//! their exact columns; join inputs keep columns whose names clash with the
//! other side, so suffixed output names do not change.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{ApplyOrder, OptimizerRule};
use crate::error::Result;
use crate::expr::{Expr, col};
use crate::plan::{
    Aggregate, Distinct, Filter, JoinType, LogicalPlan, Project, Scan, Slice, Sort, Transformed,
    Union, Window, join_schema,
};

/// See the module documentation.
pub struct ProjectionPushdown;

impl OptimizerRule for ProjectionPushdown {
    fn name(&self) -> &'static str {
        "projection_pushdown"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::WholePlan
    }
    // The walk carries the columns each parent needs down and rebuilds the
    // plan as it goes, so whether it pruned any is told by comparing.
    fn rewrite(&self, plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        let pruned = Pruner {
            join_outputs: false,
        }
        .prune(&plan, None)?;
        Ok(Transformed::compared(&plan, pruned))
    }
}

/// The walk; `join_outputs` also narrows each join's output to what its
/// parent reads (see [`super::join_output_pruning`]).
pub(super) struct Pruner {
    pub join_outputs: bool,
}

type Needed = Option<BTreeSet<String>>;

fn add_columns(set: &mut BTreeSet<String>, exprs: &[Expr]) {
    for e in exprs {
        set.extend(e.columns());
    }
}

fn wants(needed: &Needed, name: &str) -> bool {
    needed.as_ref().is_none_or(|n| n.contains(name))
}

impl Pruner {
    /// Rewrites `plan` so that it computes at least the `needed` columns (all when `None`).
    pub(super) fn prune(&self, plan: &LogicalPlan, needed: Needed) -> Result<LogicalPlan> {
        Ok(match plan {
            LogicalPlan::Scan(scan) => {
                let full = scan.source.schema();
                let mut keep: BTreeSet<String> = match &needed {
                    None => return Ok(plan.clone()),
                    Some(n) => n.clone(),
                };
                add_columns(&mut keep, &scan.filters);
                let current: Vec<usize> = scan
                    .projection
                    .clone()
                    .unwrap_or_else(|| (0..full.fields().len()).collect());
                let mut projection: Vec<usize> = current
                    .iter()
                    .copied()
                    .filter(|&i| keep.contains(full.field(i).name()))
                    .collect();
                if projection.is_empty() {
                    // Nothing read, but the row count matters (count(*)): keep one column.
                    projection.push(current[0]);
                }
                LogicalPlan::Scan(Scan {
                    source: scan.source.clone(),
                    projection: Some(projection),
                    filters: scan.filters.clone(),
                })
            }
            LogicalPlan::Project(Project { input, exprs, .. }) => {
                let kept: Vec<Expr> = exprs
                    .iter()
                    .filter(|e| wants(&needed, &e.output_name()))
                    .cloned()
                    .collect();
                let kept = if kept.is_empty() {
                    exprs[..1.min(exprs.len())].to_vec()
                } else {
                    kept
                };
                let mut child = BTreeSet::new();
                add_columns(&mut child, &kept);
                LogicalPlan::project(Arc::new(self.prune(input, Some(child))?), kept)
            }
            LogicalPlan::Filter(Filter {
                input, predicate, ..
            }) => {
                let child = needed.map(|mut n| {
                    n.extend(predicate.columns());
                    n
                });
                LogicalPlan::filter(Arc::new(self.prune(input, child)?), predicate.clone())
            }
            LogicalPlan::Sort(Sort { input, by, .. }) => {
                let child = needed.map(|mut n| {
                    by.iter().for_each(|k| n.extend(k.expr.columns()));
                    n
                });
                LogicalPlan::sort(Arc::new(self.prune(input, child)?), by.clone())
            }
            LogicalPlan::Slice(Slice {
                input, offset, len, ..
            }) => LogicalPlan::slice(Arc::new(self.prune(input, needed)?), *offset, *len),
            LogicalPlan::Aggregate(Aggregate {
                input, keys, aggs, ..
            }) => {
                let mut kept: Vec<Expr> = aggs
                    .iter()
                    .filter(|a| wants(&needed, &a.output_name()))
                    .cloned()
                    .collect();
                if kept.is_empty() && keys.is_empty() && !aggs.is_empty() {
                    // A global aggregate still yields one row.
                    kept.push(aggs[0].clone());
                }
                let mut child = BTreeSet::new();
                add_columns(&mut child, keys);
                add_columns(&mut child, &kept);
                LogicalPlan::aggregate(
                    Arc::new(self.prune(input, Some(child))?),
                    keys.clone(),
                    kept,
                )
            }
            LogicalPlan::Join(join) => {
                let (left, right, how, filter) = (&join.left, &join.right, &join.how, &join.filter);
                let (ls, rs) = (left.schema()?, right.schema()?);
                // The pair layout: all left columns, then all right ones (as in
                // an inner join); outputs and the join filter are named in it.
                let out = join_schema(&ls, &rs, JoinType::Inner);
                let n_left = ls.fields().len();
                let mut lneed = BTreeSet::new();
                let mut rneed = BTreeSet::new();
                add_columns(&mut lneed, &join.left_on);
                add_columns(&mut rneed, &join.right_on);
                let filter_cols: BTreeSet<String> =
                    filter.iter().flat_map(|f| f.columns()).collect();
                for (i, f) in out.fields().iter().enumerate() {
                    let output = how.outputs_right() || i < n_left;
                    let read_by_parent = output && wants(&needed, f.name());
                    if !read_by_parent && !filter_cols.contains(f.name()) {
                        continue;
                    }
                    if i < n_left {
                        lneed.insert(ls.field(i).name().clone());
                    } else {
                        rneed.insert(rs.field(i - n_left).name().clone());
                    }
                }
                // Keep name clashes so the right side's suffixes stay the same:
                // a right `x` is named past every left `x`, `x_right`, ...
                // in turn, so all of those stay.
                if how.outputs_right() || filter.is_some() {
                    for r in rs.fields() {
                        let mut name = r.name().clone();
                        while ls.field_with_name(&name).is_ok() {
                            lneed.insert(name.clone());
                            rneed.insert(r.name().clone());
                            name.push_str(crate::plan::RIGHT_SUFFIX);
                        }
                    }
                }
                let (lneed, rneed) = if *how == JoinType::Cross && needed.is_none() {
                    (None, None)
                } else {
                    (Some(lneed), Some(rneed))
                };
                let join = LogicalPlan::Join(join.with_inputs(
                    Arc::new(self.prune(left, lneed)?),
                    Arc::new(self.prune(right, rneed)?),
                ));
                match &needed {
                    Some(needed) if self.join_outputs => {
                        super::join_output_pruning::narrow(join, needed)?
                    }
                    _ => join,
                }
            }
            LogicalPlan::Union(Union { inputs, .. }) => {
                // Positional: each input computes exactly the needed columns, in order.
                let out: Vec<String> = plan.column_names()?;
                let mut positions: Vec<usize> = (0..out.len())
                    .filter(|&i| wants(&needed, &out[i]))
                    .collect();
                if positions.is_empty() && !out.is_empty() {
                    // Nothing read, but the row count matters (count(*)): keep one column.
                    positions.push(0);
                }
                let mut new_inputs = Vec::new();
                for i in inputs {
                    let theirs: Vec<String> = i.column_names()?;
                    let pick: BTreeSet<String> =
                        positions.iter().map(|&p| theirs[p].clone()).collect();
                    let pruned = self.prune(i, Some(pick))?;
                    let wanted: Vec<&String> = positions.iter().map(|&p| &theirs[p]).collect();
                    let has: Vec<String> = pruned.column_names()?;
                    // A projection only where the pruned input is not already
                    // exactly those columns in order: one added every pass
                    // would stack up without end.
                    new_inputs.push(if has.iter().eq(wanted.iter().copied()) {
                        Arc::new(pruned)
                    } else {
                        Arc::new(LogicalPlan::project(
                            Arc::new(pruned),
                            wanted.iter().map(|n| col(n.as_str())).collect(),
                        ))
                    });
                }
                LogicalPlan::union(new_inputs)
            }
            LogicalPlan::Window(Window { input, exprs, .. }) => {
                // Window outputs are cheap to keep; the input needs what the
                // parent reads plus what the windows read.
                let child = needed.map(|mut n| {
                    add_columns(&mut n, exprs);
                    n
                });
                LogicalPlan::window(Arc::new(self.prune(input, child)?), exprs.clone())
            }
            LogicalPlan::Distinct(Distinct { input, .. }) => {
                // Distinct depends on every column it sees.
                LogicalPlan::distinct(Arc::new(self.prune(input, None)?))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::LazyFrame;
    use crate::optimizer::apply_rule;
    use crate::optimizer::test_util::{rewritten, table};

    fn t(names: &[&str]) -> LazyFrame {
        table(names)
    }

    fn optimized(lf: &LazyFrame) -> String {
        rewritten(&ProjectionPushdown, lf)
    }

    #[test]
    fn aggregate_reads_only_its_column() {
        let lf = t(&["a", "b", "c"]).agg([col("b").sum().alias("s")]);
        assert_eq!(
            lf.logical_plan().to_string(),
            "Aggregate keys=[] aggs=[sum(b) AS s]\n  Scan memory (3 rows)\n"
        );
        assert_eq!(
            optimized(&lf),
            "Aggregate keys=[] aggs=[sum(b) AS s]\n  Scan memory (3 rows) columns=[b]\n"
        );
    }

    #[test]
    fn unused_projection_outputs_are_dropped() {
        let lf = t(&["a", "b", "c"])
            .with_columns([(col("a") + col("b")).alias("ab")])
            .select([col("c")]);
        assert_eq!(
            optimized(&lf),
            "Project [c]\n  Project [c]\n    Scan memory (3 rows) columns=[c]\n"
        );
    }

    #[test]
    fn union_inputs_keep_only_what_is_read_and_are_projected_once() {
        let a = t(&["a", "b", "c"]);
        let lf = a
            .union(std::slice::from_ref(&a))
            .agg([col("b").sum().alias("s")]);
        let once = optimized(&lf);
        assert_eq!(
            once,
            "Aggregate keys=[] aggs=[sum(b) AS s]\n  Union\n    Scan memory (3 rows) columns=[b]\n    Scan memory (3 rows) columns=[b]\n"
        );
        // Idempotent: a second pass adds no projection (it used to add one
        // above each input on every pass).
        let first = apply_rule(&ProjectionPushdown, lf.logical_plan())
            .unwrap()
            .data;
        let second = apply_rule(&ProjectionPushdown, &first).unwrap().data;
        assert_eq!(second.to_string(), once);
    }

    #[test]
    fn count_star_over_a_union_keeps_one_column_per_input() {
        let a = t(&["a", "b"]);
        let lf = a
            .union(std::slice::from_ref(&a))
            .agg([crate::expr::count_star().alias("n")]);
        assert_eq!(
            optimized(&lf),
            "Aggregate keys=[] aggs=[count(*) AS n]\n  Union\n    Scan memory (3 rows) columns=[a]\n    Scan memory (3 rows) columns=[a]\n"
        );
        // It ran: "must either specify a row count or at least one column".
        assert_eq!(lf.collect().unwrap().to_sorted_csv().unwrap(), "n\n6\n");
    }

    #[test]
    fn count_star_keeps_one_column() {
        let lf = t(&["a", "b"]).agg([crate::expr::count_star().alias("n")]);
        assert_eq!(
            optimized(&lf),
            "Aggregate keys=[] aggs=[count(*) AS n]\n  Scan memory (3 rows) columns=[a]\n"
        );
    }
}
