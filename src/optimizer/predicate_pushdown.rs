//! Predicate pushdown: move filters as close to the data as possible.
//!
//! A filter's conjuncts are pushed, one by one, through:
//! - projections (column references replaced by the projected expressions),
//! - sorts and unions (into every input, renamed by position),
//! - aggregations, for conjuncts on plain grouping columns only,
//! - joins, into the side that owns all the conjunct's columns, but never
//!   into the null-producing side of an outer join; a cross join with an
//!   equality between its sides becomes an inner equi-join; a conjunct on
//!   one join key alone is copied onto the other side's key (`a = b` and
//!   `a < 3` imply `b < 3`) wherever that cannot drop a row the join keeps,
//! - and finally into scans, which apply them while reading (and use them
//!   to skip Parquet row groups, and pages where the file has a page index).
//!
//! Filters never move past a slice/limit or a distinct: that would change
//! which rows those keep.
//!
//! ```text
//! before: Filter (a > 1)               after: Project [a, (b * 2) AS c]
//!           Project [a, (b * 2) AS c]           Scan t filters=[(a > 1)]
//!             Scan t
//! ```
//!
//! What reaches a scan is folded: a Hive partition's key is a constant of
//! its file's scan, so `year = 2024` becomes `2023 = 2024`, then `false`,
//! and that file is not read.
//!
//! ```text
//! before: Filter (year = 2024)               after: Union
//!           Union                                     Project [id, 2023 AS year]
//!             Project [id, 2023 AS year]                Scan a.csv filters=[false]
//!               Scan a.csv                            Project [id, 2024 AS year]
//!             Project [id, 2024 AS year]                Scan b.csv
//!               Scan b.csv
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::simplify_expressions::fold;
use super::{ApplyOrder, OptimizerRule};
use crate::error::Result;
use crate::expr::{Expr, Operator, ScalarValue, col};
use crate::plan::{
    Aggregate, Filter, Join, JoinType, LogicalPlan, Project, Scan, Sort, Transformed, Union,
    join_schema,
};

/// See the module documentation.
pub struct PredicatePushdown;

impl OptimizerRule for PredicatePushdown {
    fn name(&self) -> &'static str {
        "predicate_pushdown"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::WholePlan
    }
    // The walk carries the predicates from above down and rebuilds the
    // plan as it goes, so whether it moved any is told by comparing.
    fn rewrite(&self, plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        let pushed = push(&plan, vec![])?;
        Ok(Transformed::compared(&plan, pushed))
    }
}

fn names(plan: &LogicalPlan) -> Result<Vec<String>> {
    Ok(plan
        .schema()?
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect())
}

/// Drops repeated conjuncts. Implied predicates (see
/// [`implied_by_branches`]) are derived again on every pass while their
/// source stays above the join; this keeps the plan at a fixed point.
/// `preds` without repeats, in order. Candidates are bucketed by their
/// text and compared exactly within a bucket, so a generated WHERE with
/// thousands of conjuncts costs linear time, not quadratic.
fn dedup(preds: Vec<Expr>) -> Vec<Expr> {
    let mut seen: HashMap<String, Vec<usize>> = HashMap::new();
    let mut out: Vec<Expr> = Vec::with_capacity(preds.len());
    for p in preds {
        let same_text = seen.entry(p.to_string()).or_default();
        if !same_text.iter().any(|&i| out[i] == p) {
            same_text.push(out.len());
            out.push(p);
        }
    }
    out
}

/// Predicates folded ([`fold`]) and deduplicated, without those that keep
/// every row (folded to `true`); `[false]` alone when one keeps none
/// (folded to `false` or null: a Hive partition that a predicate on its
/// key rules out), so a scan reads nothing. A predicate derived again on a
/// later pass meets its folded form and the plan stays put.
fn kept(filters: Vec<Expr>) -> Vec<Expr> {
    let filters = dedup(filters.into_iter().map(fold).collect());
    let literal = |f: &Expr, keeps: bool| match f {
        Expr::Literal(ScalarValue::Boolean(Some(b))) => *b == keeps,
        Expr::Literal(v) => v.is_null() && !keeps,
        _ => false,
    };
    if filters.iter().any(|f| literal(f, false)) {
        return vec![Expr::Literal(ScalarValue::Boolean(Some(false)))];
    }
    filters.into_iter().filter(|f| !literal(f, true)).collect()
}

fn wrap(plan: LogicalPlan, preds: Vec<Expr>) -> LogicalPlan {
    match Expr::conjunction(kept(preds)) {
        Some(p) => LogicalPlan::filter(Arc::new(plan), p),
        None => plan,
    }
}

fn only_uses(e: &Expr, cols: &HashSet<&str>) -> bool {
    e.columns().iter().all(|c| cols.contains(c.as_str()))
}

/// Replaces column references by the given expressions.
fn substitute(e: &Expr, lookup: &dyn Fn(&str) -> Option<Expr>) -> Expr {
    e.clone().transform(&mut |n| match n {
        Expr::Column(c) => lookup(&c).unwrap_or(Expr::Column(c)),
        other => other,
    })
}

/// Pushes `preds` (conjuncts over `plan`'s output) into `plan`.
fn push(plan: &LogicalPlan, mut preds: Vec<Expr>) -> Result<LogicalPlan> {
    Ok(match plan {
        LogicalPlan::Filter(Filter {
            input, predicate, ..
        }) => {
            preds.extend(predicate.clone().split_conjunction());
            push(input, dedup(preds))?
        }
        LogicalPlan::Scan(scan) => {
            let mut scan: Scan = scan.clone();
            scan.filters.extend(preds);
            scan.filters = kept(std::mem::take(&mut scan.filters));
            LogicalPlan::Scan(scan)
        }
        LogicalPlan::Project(Project { input, exprs, .. }) => {
            // Rewrite each conjunct in terms of the projection's input.
            let lookup = |name: &str| -> Option<Expr> {
                exprs
                    .iter()
                    .find(|e| e.output_name() == name)
                    .map(|e| e.unalias().clone())
            };
            let below: Vec<Expr> = preds.iter().map(|p| substitute(p, &lookup)).collect();
            LogicalPlan::project(Arc::new(push(input, below)?), exprs.clone())
        }
        LogicalPlan::Sort(Sort { input, by, .. }) => {
            LogicalPlan::sort(Arc::new(push(input, preds)?), by.clone())
        }
        LogicalPlan::Union(Union { inputs, .. }) => {
            let out = names(plan)?;
            let mut new_inputs = Vec::new();
            for i in inputs {
                let theirs = names(i)?;
                let lookup = |n: &str| {
                    out.iter()
                        .position(|o| o == n)
                        .map(|p| col(theirs[p].as_str()))
                };
                let mine: Vec<Expr> = preds.iter().map(|p| substitute(p, &lookup)).collect();
                new_inputs.push(Arc::new(push(i, mine)?));
            }
            LogicalPlan::union(new_inputs)
        }
        LogicalPlan::Aggregate(Aggregate {
            input, keys, aggs, ..
        }) => {
            // Conjuncts over grouping columns that are plain input columns.
            let plain: Vec<(String, String)> = keys
                .iter()
                .filter_map(|k| match k.unalias() {
                    Expr::Column(c) => Some((k.output_name(), c.clone())),
                    _ => None,
                })
                .collect();
            let key_names: HashSet<&str> = plain.iter().map(|(o, _)| o.as_str()).collect();
            let (down, up): (Vec<Expr>, Vec<Expr>) = preds
                .into_iter()
                .partition(|p| only_uses(p, &key_names) && !p.columns().is_empty());
            let lookup = |n: &str| {
                plain
                    .iter()
                    .find(|(o, _)| o == n)
                    .map(|(_, c)| col(c.as_str()))
            };
            let down = down.iter().map(|p| substitute(p, &lookup)).collect();
            let agg =
                LogicalPlan::aggregate(Arc::new(push(input, down)?), keys.clone(), aggs.clone());
            wrap(agg, up)
        }
        LogicalPlan::Join(join) => push_join(join, preds)?,
        // Slice, Distinct: a barrier. Optimize below with nothing pushed.
        other => {
            let inputs = other
                .inputs()
                .into_iter()
                .map(|i| push(i, vec![]).map(Arc::new))
                .collect::<Result<Vec<_>>>()?;
            wrap(other.with_inputs(inputs), preds)
        }
    })
}

fn push_join(join: &Join, preds: Vec<Expr>) -> Result<LogicalPlan> {
    let Join {
        left,
        right,
        how,
        filter,
        ..
    } = join;
    let how = *how;
    let (ls, rs) = (left.schema()?, right.schema()?);
    let out = join_schema(&ls, &rs, how);
    let n_left = ls.fields().len();
    let left_names: HashSet<&str> = out.fields()[..n_left]
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    let right_out: Vec<&str> = out.fields()[n_left..]
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    let right_names: HashSet<&str> = right_out.iter().copied().collect();
    // Output name of a right column → its name inside the right input.
    let to_right = |n: &str| {
        right_out
            .iter()
            .position(|o| *o == n)
            .map(|i| col(rs.field(i).name().as_str()))
    };
    let (push_left, push_right) = match how {
        JoinType::Inner | JoinType::Cross => (true, true),
        JoinType::Left | JoinType::Semi | JoinType::Anti => (true, false),
        JoinType::Right => (false, true),
        JoinType::Full => (false, false),
    };
    let mut to_l = Vec::new();
    let mut to_r = Vec::new();
    let mut keep = Vec::new();
    let (mut left_on, mut right_on) = (join.left_on.clone(), join.right_on.clone());
    let mut how = how;
    for p in preds {
        let cols = p.columns();
        if push_left && !cols.is_empty() && only_uses(&p, &left_names) {
            to_l.push(p);
        } else if push_right && !cols.is_empty() && only_uses(&p, &right_names) {
            to_r.push(substitute(&p, &to_right));
        } else if matches!(how, JoinType::Cross | JoinType::Inner) {
            // `l = r` across the sides becomes a join key.
            match &p {
                Expr::Binary {
                    left: a,
                    op: Operator::Eq,
                    right: b,
                } if only_uses(a, &left_names)
                    && only_uses(b, &right_names)
                    && !a.columns().is_empty()
                    && !b.columns().is_empty() =>
                {
                    left_on.push(a.as_ref().clone());
                    right_on.push(substitute(b, &to_right));
                    how = JoinType::Inner;
                }
                Expr::Binary {
                    left: a,
                    op: Operator::Eq,
                    right: b,
                } if only_uses(b, &left_names)
                    && only_uses(a, &right_names)
                    && !a.columns().is_empty()
                    && !b.columns().is_empty() =>
                {
                    left_on.push(b.as_ref().clone());
                    right_on.push(substitute(a, &to_right));
                    how = JoinType::Inner;
                }
                _ => keep.push(p),
            }
        } else {
            keep.push(p);
        }
    }
    // A disjunction over both sides stays above the join, but each side can
    // still be filtered by what every branch demands of it.
    for p in &keep {
        if push_left && let Some(implied) = implied_by_branches(p, &left_names) {
            to_l.push(implied);
        }
        if push_right && let Some(implied) = implied_by_branches(p, &right_names) {
            to_r.push(substitute(&implied, &to_right));
        }
    }
    // Key equivalence: with `a = b` a conjunct on `a` alone also holds for
    // every `b` that can still match, so it filters the other side too.
    let (to_l_more, to_r_more) = (
        transfer(
            &to_l,
            &left_on,
            &right_on,
            matches!(
                how,
                JoinType::Inner | JoinType::Left | JoinType::Semi | JoinType::Anti
            ),
        ),
        transfer(
            &to_r,
            &right_on,
            &left_on,
            matches!(how, JoinType::Inner | JoinType::Right),
        ),
    );
    to_r.extend(to_l_more);
    to_l.extend(to_r_more);
    let join = LogicalPlan::Join(Join::new(
        Arc::new(push(left, to_l)?),
        Arc::new(push(right, to_r)?),
        left_on,
        right_on,
        how,
        filter.clone(),
    ));
    Ok(wrap(join, keep))
}

/// What `(a1 AND b1) OR (a2 AND b2)` implies about one side alone:
/// `a1 OR a2` when `a1` and `a2` are the branches' conjuncts on that side.
/// `None` unless every branch constrains the side (a branch that does not
/// lets any row of it through) and `p` is a disjunction.
fn implied_by_branches(p: &Expr, side: &HashSet<&str>) -> Option<Expr> {
    let branches = p.clone().split_disjunction();
    if branches.len() < 2 {
        return None;
    }
    let per_branch = branches
        .into_iter()
        .map(|b| {
            Expr::conjunction(
                b.split_conjunction()
                    .into_iter()
                    .filter(|c| !c.columns().is_empty() && only_uses(c, side)),
            )
        })
        .collect::<Option<Vec<_>>>()?;
    Expr::disjunction(per_branch)
}

/// The conjuncts of `preds` that constrain a single join key column of one
/// side, rewritten onto the matching key column of the other side.
fn transfer(preds: &[Expr], from_keys: &[Expr], to_keys: &[Expr], allowed: bool) -> Vec<Expr> {
    if !allowed {
        return vec![];
    }
    preds
        .iter()
        .filter_map(|p| {
            let cols = p.columns();
            let [only] = cols.as_slice() else {
                return None;
            };
            let i = from_keys
                .iter()
                .position(|k| matches!(k, Expr::Column(c) if c == only))?;
            let Expr::Column(other) = &to_keys[i] else {
                return None;
            };
            Some(substitute(p, &|n: &str| {
                (n == only).then(|| col(other.as_str()))
            }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::lit;
    use crate::frame::LazyFrame;
    use crate::optimizer::test_util::{rewritten, table};

    fn t(names: &[&str]) -> LazyFrame {
        table(names)
    }

    fn optimized(lf: &LazyFrame) -> String {
        rewritten(&PredicatePushdown, lf)
    }

    #[test]
    fn through_projection_rewriting_aliases() {
        let lf = t(&["a", "b"])
            .select([col("a"), (col("b") * lit(2)).alias("c")])
            .filter(col("c").gt(lit(2)));
        assert_eq!(
            lf.logical_plan().to_string(),
            "Filter (c > 2)\n  Project [a, (b * 2) AS c]\n    Scan memory (3 rows)\n"
        );
        assert_eq!(
            optimized(&lf),
            "Project [a, (b * 2) AS c]\n  Scan memory (3 rows) filters=[((b * 2) > 2)]\n"
        );
    }

    #[test]
    fn never_past_a_limit() {
        let lf = t(&["a"])
            .sort(vec![col("a")], vec![false], false)
            .limit(2)
            .filter(col("a").gt(lit(1)));
        assert_eq!(
            optimized(&lf),
            "Filter (a > 1)\n  Slice offset=0 len=2\n    Sort [a ASC]\n      Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn not_into_the_null_side_of_a_left_join() {
        let lf = t(&["a", "x"])
            .join(&t(&["b", "y"]), [col("a")], [col("b")], JoinType::Left)
            .filter(col("y").gt(lit(1)).and(col("x").gt(lit(1))));
        assert_eq!(
            optimized(&lf),
            "Filter (y > 1)\n  Join Left on [a = b]\n    Scan memory (3 rows) filters=[(x > 1)]\n    Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn key_predicates_filter_both_sides() {
        let lf = t(&["a", "x"])
            .join(&t(&["b", "y"]), [col("a")], [col("b")], JoinType::Inner)
            .filter(col("a").lt(lit(3)).and(col("y").gt(lit(1))));
        assert_eq!(
            optimized(&lf),
            "Join Inner on [a = b]\n  Scan memory (3 rows) filters=[(a < 3)]\n  Scan memory (3 rows) filters=[(y > 1), (b < 3)]\n"
        );
        // Into the null side of a left join only what the kept side implies.
        let lf = t(&["a", "x"])
            .join(&t(&["b", "y"]), [col("a")], [col("b")], JoinType::Left)
            .filter(col("a").lt(lit(3)));
        assert_eq!(
            optimized(&lf),
            "Join Left on [a = b]\n  Scan memory (3 rows) filters=[(a < 3)]\n  Scan memory (3 rows) filters=[(b < 3)]\n"
        );
    }

    #[test]
    fn cross_join_with_equality_becomes_inner_join() {
        let lf = t(&["a"])
            .join(&t(&["b"]), [], [], JoinType::Cross)
            .filter(col("a").eq(col("b")));
        assert_eq!(
            optimized(&lf),
            "Join Inner on [a = b]\n  Scan memory (3 rows)\n  Scan memory (3 rows)\n"
        );
    }

    #[test]
    fn aggregate_only_for_key_predicates() {
        let lf = t(&["k", "v"])
            .group_by([col("k")])
            .agg([col("v").sum().alias("s")])
            .filter(col("k").gt(lit(1)).and(col("s").gt(lit(1))));
        assert_eq!(
            optimized(&lf),
            "Filter (s > 1)\n  Aggregate keys=[k] aggs=[sum(v) AS s]\n    Scan memory (3 rows) filters=[(k > 1)]\n"
        );
    }

    #[test]
    fn filters_reaching_a_scan_fold_and_one_that_keeps_nothing_is_all_that_stays() {
        let scan = |filters: Vec<Expr>| {
            let LogicalPlan::Scan(scan) = t(&["a"]).logical_plan().clone() else {
                unreachable!("a frame over batches is a scan")
            };
            push(&LogicalPlan::Scan(scan), filters).unwrap().to_string()
        };
        let a = col("a").gt(lit(1));
        assert_eq!(
            scan(vec![lit(2024).eq(lit(2024)), a.clone()]).trim(),
            "Scan memory (3 rows) filters=[(a > 1)]"
        );
        assert_eq!(
            scan(vec![a.clone(), lit(2023).eq(lit(2024))]).trim(),
            "Scan memory (3 rows) filters=[false]"
        );
        let null = lit(ScalarValue::Utf8(None)).eq(lit("c"));
        assert_eq!(
            scan(vec![a, null]).trim(),
            "Scan memory (3 rows) filters=[false]"
        );
    }
}
