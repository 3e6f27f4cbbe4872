//! Join reordering: a tree of inner equi-joins is rebuilt in the order
//! that keeps the estimated intermediate results smallest.
//!
//! The rule takes a maximal region of inner joins (no join filter, keys
//! that are plain columns, inputs with distinct column names), lists its
//! inputs and the key equalities between them, and finds the left-deep
//! order without cross products whose joins produce the fewest rows in
//! total, by dynamic programming over sets of inputs
//! ([`crate::plan::cardinality`] gives the estimates). The new tree is
//! used only when its estimated cost, the sum of its intermediate row
//! counts, is below 90% of the written order's; a projection restores the
//! original column order.
//!
//! ```text
//! before: Join Inner on [o_custkey = c_custkey]       after: Project [l_*, o_*, c_*]
//!           Join Inner on [l_orderkey = o_orderkey]          Join Inner on [o_orderkey = l_orderkey]
//!             Scan lineitem (6M rows)                          Join Inner on [c_custkey = o_custkey]
//!             Scan orders (1.5M rows)                            Scan customer filters=[c_mktsegment = ..]
//!           Scan customer filters=[c_mktsegment = ..]            Scan orders
//!                                                              Scan lineitem
//! ```
//! Equalities that share a column imply more: `c_nationkey = s_nationkey`
//! and `s_nationkey = n_nationkey` let customer join nation directly, so TPC-H
//! Q5 starts from the one filtered region (5 → 1 nation → 30K customers)
//! instead of joining all 150K customers with a year of orders first. Each
//! join takes one equality per such class.
//!
//! The hash-build side of each join is picked at run time from the actual
//! input sizes (the smaller one), so only the order is decided here.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::{ApplyOrder, OptimizerRule};
use crate::error::Result;
use crate::expr::{Expr, col};
use crate::plan::cardinality::{Estimate, distinct_bound, estimate, join_rows};
use crate::plan::{Join, JoinType, LogicalPlan, Transformed};

/// See the module documentation.
pub struct JoinReorder;

/// A rewrite must promise at least this much less work to be taken.
const MIN_GAIN: f64 = 0.9;

impl OptimizerRule for JoinReorder {
    fn name(&self) -> &'static str {
        "join_reorder"
    }
    fn apply_order(&self) -> ApplyOrder {
        ApplyOrder::WholePlan
    }
    fn rewrite(&self, plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        let reordered = reorder(&plan)?;
        Ok(Transformed::compared(&plan, reordered))
    }
}

fn is_region_join(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::Join(Join { how: JoinType::Inner, filter: None, left_on, right_on, .. })
        if !left_on.is_empty()
            && left_on.iter().chain(right_on).all(|k| matches!(k, Expr::Column(_))))
}

fn reorder(plan: &LogicalPlan) -> Result<LogicalPlan> {
    if !is_region_join(plan) {
        let inputs = plan
            .inputs()
            .into_iter()
            .map(|i| reorder(i).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        return Ok(plan.with_inputs(inputs));
    }
    let mut region = Region::default();
    region.collect(plan)?;
    // The region's inputs are optimized on their own first.
    for leaf in &mut region.leaves {
        *leaf = Arc::new(reorder(leaf)?);
    }
    let Some(owner) = region.owners()? else {
        return region.rebuild_as_written(plan);
    };
    let stats: Vec<Estimate> = region.leaves.iter().map(|l| estimate(l)).collect();
    let domain = |(a, a_col): (usize, &str), (b, b_col): (usize, &str)| {
        let bound =
            |leaf: usize, c: &str| distinct_bound(&region.leaves[leaf], c).unwrap_or(f64::INFINITY);
        // Neither key unique (`s_nationkey = c_nationkey`): the narrower
        // of the bases overstates the distinct values; ranges bound them.
        stats[a]
            .base
            .min(stats[b].base)
            .min(bound(a, a_col).max(bound(b, b_col)))
    };
    let edges: Vec<Edge> = with_implied_equalities(&region.edges, &owner)
        .into_iter()
        .map(|(a_col, b_col, class)| {
            let (a, b) = (owner[&a_col], owner[&b_col]);
            Edge {
                a,
                b,
                domain: domain((a, &a_col), (b, &b_col)),
                a_col,
                b_col,
                class,
            }
        })
        .collect();
    let written_cost = cost_as_written(plan, &stats, &edges);
    let Some((cost, order)) = best_order(region.leaves.len(), &stats, &edges) else {
        return region.rebuild_as_written(plan);
    };
    if cost >= MIN_GAIN * written_cost {
        return region.rebuild_as_written(plan);
    }
    let original: Vec<String> = plan.column_names()?;
    let tree = build(&order, &region.leaves, &edges);
    let now: Vec<String> = tree.column_names()?;
    Ok(if now == original {
        tree
    } else {
        LogicalPlan::project(
            Arc::new(tree),
            original.iter().map(|n| col(n.as_str())).collect(),
        )
    })
}

/// The inputs and key equalities of a region of inner joins.
#[derive(Default)]
struct Region {
    leaves: Vec<Arc<LogicalPlan>>,
    /// `(left column, right column)` of every key pair.
    edges: Vec<(String, String)>,
}

impl Region {
    fn collect(&mut self, plan: &LogicalPlan) -> Result<()> {
        match plan {
            LogicalPlan::Join(Join {
                left,
                right,
                left_on,
                right_on,
                ..
            }) if is_region_join(plan) => {
                for side in [left, right] {
                    if is_region_join(side) {
                        self.collect(side)?;
                    } else {
                        self.leaves.push(side.clone());
                    }
                }
                for (l, r) in left_on.iter().zip(right_on) {
                    if let (Expr::Column(l), Expr::Column(r)) = (l, r) {
                        self.edges.push((l.clone(), r.clone()));
                    }
                }
                Ok(())
            }
            _ => unreachable!("collect starts at a region join"),
        }
    }

    /// Column name → index of the input that produces it; `None` when two
    /// inputs share a name (the join would rename one, so order matters).
    fn owners(&self) -> Result<Option<HashMap<String, usize>>> {
        let mut owner = HashMap::new();
        for (i, leaf) in self.leaves.iter().enumerate() {
            for f in leaf.schema()?.fields() {
                if owner.insert(f.name().clone(), i).is_some() {
                    return Ok(None);
                }
            }
        }
        let all_known = self
            .edges
            .iter()
            .all(|(a, b)| owner.contains_key(a) && owner.contains_key(b));
        Ok(all_known.then_some(owner))
    }

    /// The written join tree over the (individually reordered) inputs.
    fn rebuild_as_written(&self, plan: &LogicalPlan) -> Result<LogicalPlan> {
        let mut next = self.leaves.iter();
        Ok(rebuild(plan, &mut next))
    }
}

fn rebuild<'a>(
    plan: &LogicalPlan,
    leaves: &mut impl Iterator<Item = &'a Arc<LogicalPlan>>,
) -> LogicalPlan {
    let LogicalPlan::Join(join) = plan else {
        unreachable!("rebuild walks region joins")
    };
    let mut side = |s: &Arc<LogicalPlan>| {
        if is_region_join(s) {
            Arc::new(rebuild(s, leaves))
        } else {
            leaves.next().expect("one leaf per input").clone()
        }
    };
    let left = side(&join.left);
    LogicalPlan::Join(join.with_inputs(left, side(&join.right)))
}

struct Edge {
    a: usize,
    b: usize,
    a_col: String,
    b_col: String,
    /// Distinct key values the two sides can share.
    domain: f64,
    /// The set of columns this equality makes equal (see
    /// [`with_implied_equalities`]): two inputs need one equality per class.
    class: usize,
}

/// The key equalities with the ones they imply: `c_nationkey = s_nationkey`
/// and `s_nationkey = n_nationkey` make one class of three columns, so
/// `c_nationkey = n_nationkey` joins customer to nation directly (TPC-H Q5
/// can then start from the filtered region). Returns `(a, b, class)` for
/// the written equalities first, then the implied ones. A class with two
/// columns of one input gets no implied equalities (its inputs keep the
/// written keys).
fn with_implied_equalities(
    written: &[(String, String)],
    owner: &HashMap<String, usize>,
) -> Vec<(String, String, usize)> {
    // Classes by union-find over column names.
    let mut names: Vec<&str> = Vec::new();
    fn id<'a>(c: &'a str, names: &mut Vec<&'a str>) -> usize {
        names.iter().position(|n| *n == c).unwrap_or_else(|| {
            names.push(c);
            names.len() - 1
        })
    }
    let pairs: Vec<(usize, usize)> = written
        .iter()
        .map(|(a, b)| (id(a, &mut names), id(b, &mut names)))
        .collect();
    let mut parent: Vec<usize> = (0..names.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for &(a, b) in &pairs {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra] = rb;
    }
    let class_of: Vec<usize> = (0..names.len()).map(|i| root(&mut parent, i)).collect();
    let mut out: Vec<(String, String, usize)> = written
        .iter()
        .zip(&pairs)
        .map(|((a, b), &(i, _))| (a.clone(), b.clone(), class_of[i]))
        .collect();
    for class in 0..names.len() {
        let members: Vec<usize> = (0..names.len()).filter(|&i| class_of[i] == class).collect();
        let mut leaves: Vec<usize> = members.iter().map(|&i| owner[names[i]]).collect();
        leaves.sort_unstable();
        leaves.dedup();
        if members.len() < 3 || leaves.len() < members.len() {
            continue;
        }
        for (x, &i) in members.iter().enumerate() {
            for &j in &members[x + 1..] {
                let known = pairs.iter().any(|&p| p == (i, j) || p == (j, i));
                if !known {
                    out.push((names[i].to_string(), names[j].to_string(), class));
                }
            }
        }
    }
    out
}

/// Estimated rows of joining the leaf sets `a` and `b` (bit masks).
/// `None` when no key connects them.
///
/// Key pairs between the same two inputs form one composite key, whose
/// distinct values are at most the smaller input's base rows
/// (`ps_partkey, ps_suppkey` against lineitem: 800k, not 200k · 10k);
/// keys to different inputs count as independent.
fn join_size(
    (a, rows_a): (u64, f64),
    (b, rows_b): (u64, f64),
    stats: &[Estimate],
    edges: &[Edge],
) -> Option<f64> {
    let has = |set: u64, leaf: usize| set & (1 << leaf) != 0;
    // Within one class, the connecting equality of the narrowest domain.
    let mut by_class: Vec<(usize, (usize, usize), f64)> = Vec::new();
    for e in edges {
        let pair = if has(a, e.a) && has(b, e.b) {
            (e.a, e.b)
        } else if has(a, e.b) && has(b, e.a) {
            (e.b, e.a)
        } else {
            continue;
        };
        match by_class.iter_mut().find(|(c, _, _)| *c == e.class) {
            Some(best) if e.domain < best.2 => *best = (e.class, pair, e.domain),
            Some(_) => {}
            None => by_class.push((e.class, pair, e.domain)),
        }
    }
    let mut pairs: Vec<((usize, usize), f64)> = Vec::new();
    for (_, pair, d) in by_class {
        match pairs.iter_mut().find(|(p, _)| *p == pair) {
            Some((_, dp)) => *dp *= d,
            None => pairs.push((pair, d)),
        }
    }
    if pairs.is_empty() {
        return None;
    }
    let domain: f64 = pairs
        .iter()
        .map(|((i, j), d)| d.min(stats[*i].base.min(stats[*j].base)))
        .product();
    Some(join_rows(rows_a, rows_b, domain))
}

/// The cost of the tree as written (bushy trees included): the sum of its
/// joins' estimated output rows.
fn cost_as_written(plan: &LogicalPlan, stats: &[Estimate], edges: &[Edge]) -> f64 {
    // (leaf set, rows, cost) of a subtree.
    fn walk(
        plan: &LogicalPlan,
        next_leaf: &mut usize,
        stats: &[Estimate],
        edges: &[Edge],
    ) -> (u64, f64, f64) {
        if !is_region_join(plan) {
            let i = *next_leaf;
            *next_leaf += 1;
            return (1 << i, stats[i].rows, 0.0);
        }
        let LogicalPlan::Join(Join { left, right, .. }) = plan else {
            unreachable!()
        };
        let (ls, lrows, lcost) = walk(left, next_leaf, stats, edges);
        let (rs, rrows, rcost) = walk(right, next_leaf, stats, edges);
        let rows = join_size((ls, lrows), (rs, rrows), stats, edges).unwrap_or(lrows * rrows);
        (ls | rs, rows, lcost + rcost + rows)
    }
    walk(plan, &mut 0, stats, edges).2
}

/// Regions with more inputs keep their written order (the search below
/// visits up to `2^n · n` states).
const MAX_LEAVES: usize = 12;

/// The cheapest left-deep order without cross products, by dynamic
/// programming over sets of inputs; `None` when the region is too big or
/// not connected. Ties go to the order found first (inputs written first).
fn best_order(n: usize, stats: &[Estimate], edges: &[Edge]) -> Option<(f64, Vec<usize>)> {
    if n > MAX_LEAVES {
        return None;
    }
    // best[set] = (cost, rows, order)
    let mut best: Vec<Option<(f64, f64, Vec<usize>)>> = vec![None; 1 << n];
    for (i, st) in stats.iter().enumerate() {
        best[1 << i] = Some((0.0, st.rows, vec![i]));
    }
    for size in 1..n {
        for set in 0..(1u64 << n) {
            if set.count_ones() as usize != size {
                continue;
            }
            let Some((cost, rows, order)) = best[set as usize].clone() else {
                continue;
            };
            for j in (0..n).filter(|j| set & (1 << j) == 0) {
                let Some(out) = join_size((set, rows), (1 << j, stats[j].rows), stats, edges)
                else {
                    continue;
                };
                let total = cost + out;
                let slot = &mut best[(set | (1 << j)) as usize];
                if slot.as_ref().is_none_or(|(c, _, _)| total < *c) {
                    let mut order = order.clone();
                    order.push(j);
                    // The larger first input goes right: the executor can stream it.
                    if order.len() == 2 && stats[order[0]].rows > stats[order[1]].rows {
                        order.swap(0, 1);
                    }
                    *slot = Some((total, out, order));
                }
            }
        }
    }
    best[(1 << n) - 1]
        .take()
        .map(|(cost, _, order)| (cost, order))
}

/// The left-deep tree joining the leaves in `order`.
fn build(order: &[usize], leaves: &[Arc<LogicalPlan>], edges: &[Edge]) -> LogicalPlan {
    let mut joined = HashSet::from([order[0]]);
    let mut tree = leaves[order[0]].as_ref().clone();
    for &leaf in &order[1..] {
        let (mut left_on, mut right_on) = (vec![], vec![]);
        // One equality per class: the joined side's columns of a class are
        // equal already. Written equalities come first, so they are preferred.
        let mut classes = HashSet::new();
        for e in edges {
            let (l, r) = if joined.contains(&e.a) && e.b == leaf {
                (&e.a_col, &e.b_col)
            } else if joined.contains(&e.b) && e.a == leaf {
                (&e.b_col, &e.a_col)
            } else {
                continue;
            };
            if classes.insert(e.class) {
                left_on.push(col(l.as_str()));
                right_on.push(col(r.as_str()));
            }
        }
        let how = if left_on.is_empty() {
            JoinType::Cross
        } else {
            JoinType::Inner
        };
        tree = LogicalPlan::Join(Join::new(
            Arc::new(tree),
            leaves[leaf].clone(),
            left_on,
            right_on,
            how,
            None,
        ));
        joined.insert(leaf);
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::lit;
    use crate::frame::LazyFrame;
    use crate::optimizer::test_util::rewritten;
    use arrow::array::{ArrayRef, Int64Array};
    use arrow::record_batch::RecordBatch;

    /// A table of `rows` rows with Int64 columns `names` (values 0..rows).
    fn sized(names: &[&str], rows: i64) -> LazyFrame {
        let cols: Vec<(&str, ArrayRef)> = names
            .iter()
            .map(|n| {
                (
                    *n,
                    Arc::new(Int64Array::from_iter_values(0..rows)) as ArrayRef,
                )
            })
            .collect();
        LazyFrame::from_batches(vec![RecordBatch::try_from_iter(cols).unwrap()]).unwrap()
    }

    #[test]
    fn filtered_dimension_joins_first() {
        let fact = sized(&["f_id", "f_dim"], 1000);
        let mid = sized(&["m_id", "m_dim"], 100);
        let dim = sized(&["d_id", "d_name"], 10).filter(col("d_name").eq(lit(3)));
        // Written as (fact ⋈ mid) ⋈ dim: 1000 rows, then the filter's 10%.
        let lf = fact
            .join(&mid, [col("f_dim")], [col("m_id")], JoinType::Inner)
            .join(&dim, [col("m_dim")], [col("d_id")], JoinType::Inner);
        assert_eq!(
            rewritten(&JoinReorder, &lf),
            "Project [f_id, f_dim, m_id, m_dim, d_id, d_name]\n  Join Inner on [m_id = f_dim]\n    Join Inner on [d_id = m_dim]\n      Filter (d_name = 3)\n        Scan memory (10 rows)\n      Scan memory (100 rows)\n    Scan memory (1000 rows)\n"
        );
    }

    #[test]
    fn implied_equalities_let_a_filtered_input_join_early() {
        // c_nat = s_nat and s_nat = n_id imply c_nat = n_id: the filtered
        // region can reach customers through nation without supplier.
        let cust = sized(&["c_id", "c_nat"], 200);
        let sup = sized(&["s_id", "s_nat"], 2000);
        let nat = sized(&["n_id", "n_reg"], 25);
        let reg = sized(&["r_id", "r_name"], 5).filter(col("r_name").eq(lit(1)));
        let lf = cust
            .join(&sup, [col("c_nat")], [col("s_nat")], JoinType::Inner)
            .join(&nat, [col("s_nat")], [col("n_id")], JoinType::Inner)
            .join(&reg, [col("n_reg")], [col("r_id")], JoinType::Inner);
        let plan = rewritten(&JoinReorder, &lf);
        assert!(plan.contains("Join Inner on [n_id = c_nat]"), "{plan}");
        // Supplier comes last and needs one key of the class, not two.
        assert!(plan.contains("Join Inner on [c_nat = s_nat]\n"), "{plan}");
        let rows = |lf: &LazyFrame| {
            let df = lf.collect().unwrap();
            let mut r: Vec<String> = (0..df.num_rows())
                .map(|i| format!("{:?}", df.to_batch().unwrap().slice(i, 1).columns()))
                .collect();
            r.sort();
            r
        };
        let reordered = lf
            .clone()
            .with_optimizer(crate::optimizer::OptimizerOptions::default());
        assert_eq!(
            rows(&reordered),
            rows(
                &lf.clone()
                    .with_optimizer(crate::optimizer::OptimizerOptions::none())
            )
        );
    }

    #[test]
    fn good_order_is_kept() {
        let dim = sized(&["d_id"], 10).filter(col("d_id").eq(lit(3)));
        let fact = sized(&["f_id", "f_dim"], 1000);
        let lf = dim.join(&fact, [col("d_id")], [col("f_dim")], JoinType::Inner);
        assert_eq!(rewritten(&JoinReorder, &lf), lf.logical_plan().to_string());
    }
}
