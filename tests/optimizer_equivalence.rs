//! The optimizer never changes results: random plans over random data with
//! nulls, run with the optimizer on, off, and with each rule off, must give
//! the same rows (compared as sorted CSV).

use crate::common;

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, StringArray};
use arrow::record_batch::RecordBatch;
use proptest::prelude::*;
use sloth::prelude::*;

fn table(rows: &[(Option<i64>, Option<i64>, Option<u8>)], prefix: &str) -> LazyFrame {
    let a: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
    ));
    let b: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    let s: ArrayRef = Arc::new(StringArray::from(
        rows.iter()
            .map(|r| r.2.map(|v| format!("s{v}")))
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_from_iter(vec![
        (format!("{prefix}a"), a),
        (format!("{prefix}b"), b),
        (format!("{prefix}s"), s),
    ])
    .unwrap();
    LazyFrame::from_batches_with_schema(batch.schema(), common::split(&batch, 7)).unwrap()
}

#[derive(Debug, Clone)]
enum Step {
    Filter(u8, i64),
    WithColumn(i64),
    SelectSome,
    SortLimit(bool, usize),
    GroupBy,
    Join(u8),
    Union,
    Unique,
    /// Two outputs sharing a sub-expression (common_subexpr_eliminate).
    Shared(i64),
    /// Bounds on one column that may contradict (simplify_expressions).
    Range(i64, i64),
    /// A join with a third table, keyed on the last integer column
    /// (chains of joins for join_reorder).
    JoinThird(u8),
    /// A filter on the last integer column, often from a join's null side
    /// (eliminate_outer_join), or a disjunction over it and the first one
    /// (per-side predicates implied by a disjunction over a join).
    FilterLast(u8, i64),
    /// A join with the third table aggregated by its key, on that key
    /// (aggregate_semi_join).
    JoinAggregate(bool),
    /// A group-by on the first column aggregating the last integer one,
    /// often a joined side's (eager_aggregation).
    GroupByLast,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u8..6, -3i64..4).prop_map(|(k, v)| Step::Filter(k, v)),
        (-2i64..3).prop_map(Step::WithColumn),
        Just(Step::SelectSome),
        (any::<bool>(), 0usize..8).prop_map(|(d, n)| Step::SortLimit(d, n)),
        Just(Step::GroupBy),
        (0u8..6).prop_map(Step::Join),
        Just(Step::Union),
        Just(Step::Unique),
        (-2i64..3).prop_map(Step::Shared),
        (-3i64..4, -3i64..4).prop_map(|(a, b)| Step::Range(a, b)),
        (0u8..4).prop_map(Step::JoinThird),
        (0u8..4, -3i64..4).prop_map(|(k, v)| Step::FilterLast(k, v)),
        any::<bool>().prop_map(Step::JoinAggregate),
        Just(Step::GroupByLast),
    ]
}

fn apply(lf: LazyFrame, step: &Step, other: &LazyFrame, third: &LazyFrame) -> LazyFrame {
    let names: Vec<String> = lf
        .schema()
        .unwrap()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let first_int = names
        .iter()
        .find(|n| !n.ends_with('s'))
        .cloned()
        .unwrap_or_else(|| names[0].clone());
    let schema = lf.schema().unwrap();
    let last_int = schema
        .fields()
        .iter()
        .rev()
        .find(|f| f.data_type() == &arrow::datatypes::DataType::Int64)
        .map(|f| f.name().clone());
    match step {
        Step::Filter(k, v) => {
            let c = col(first_int.as_str());
            lf.filter(match k {
                0 => c.gt(lit(*v)),
                1 => c.clone().eq(lit(*v)).or(c.is_null()),
                2 => c.lt_eq(lit(*v)).and(lit(true)),
                3 => c.is_not_null().not(),
                4 => c.is_in([lit(*v), lit(v + 1)]),
                _ => lit(1).lt(lit(2)).and(c.neq(lit(*v))),
            })
        }
        Step::WithColumn(v) => {
            lf.with_columns([(col(first_int.as_str()) * lit(*v) + lit(1)).alias("w")])
        }
        Step::SelectSome => {
            let keep: Vec<Expr> = names.iter().step_by(2).map(|n| col(n.as_str())).collect();
            lf.select(keep)
        }
        Step::SortLimit(desc, n) => {
            // Sort by every column so the kept rows are fully determined.
            let by: Vec<Expr> = names.iter().map(|n| col(n.as_str())).collect();
            lf.sort(by, vec![*desc], false).limit(*n)
        }
        Step::GroupBy => lf.group_by([col(names[0].as_str())]).agg([
            count_star().alias("n"),
            col(names.last().unwrap().as_str()).max().alias("mx"),
        ]),
        Step::Join(h) => {
            let how = common::EQUI_JOINS[*h as usize];
            lf.join(other, [col(first_int.as_str())], [col("ra")], how)
        }
        Step::JoinThird(_) | Step::FilterLast(..) | Step::JoinAggregate(_) | Step::GroupByLast
            if last_int.is_none() =>
        {
            lf
        }
        Step::JoinThird(h) => {
            let last_int = last_int.expect("checked");
            let how = [
                JoinType::Inner,
                JoinType::Inner,
                JoinType::Left,
                JoinType::Semi,
            ][*h as usize];
            lf.join(third, [col(last_int.as_str())], [col("qa")], how)
        }
        Step::FilterLast(k, v) => {
            let c = col(last_int.expect("checked").as_str());
            lf.filter(match k {
                0 => c.gt(lit(*v)),
                1 => c.is_null(),
                2 => c.is_not_null().and(col(first_int.as_str()).neq(lit(*v))),
                _ => {
                    let first = col(first_int.as_str());
                    (c.clone().gt(lit(*v)).and(first.clone().lt(lit(*v))))
                        .or(c.lt_eq(lit(*v)).and(first.gt_eq(lit(*v))))
                }
            })
        }
        Step::JoinAggregate(semi) => {
            let per_key = third
                .group_by([col("qa")])
                .agg([col("qb").sum().alias("qsum"), count_star().alias("qn")]);
            let how = if *semi {
                JoinType::Semi
            } else {
                JoinType::Inner
            };
            lf.join(
                &per_key,
                [col(last_int.expect("checked").as_str())],
                [col("qa")],
                how,
            )
        }
        Step::GroupByLast => {
            let last = col(last_int.expect("checked").as_str());
            lf.group_by([col(names[0].as_str())]).agg([
                last.clone().count().alias("n"),
                count_star().alias("rows"),
                last.clone().sum().alias("s"),
                last.clone().min().alias("lo"),
                last.max().alias("hi"),
            ])
        }
        Step::Union => lf.union(std::slice::from_ref(&lf)),
        Step::Unique => lf.unique(),
        Step::Shared(v) => {
            let shared = col(first_int.as_str()) * lit(*v) + lit(1);
            lf.with_columns([shared.clone().alias("s1"), (shared * lit(2)).alias("s2")])
        }
        Step::Range(lo, hi) => {
            let c = col(first_int.as_str());
            lf.filter(c.clone().gt(lit(*lo)).and(c.lt_eq(lit(*hi))))
        }
    }
}

fn row() -> impl Strategy<Value = (Option<i64>, Option<i64>, Option<u8>)> {
    (
        proptest::option::weighted(0.85, -3i64..4),
        proptest::option::weighted(0.85, -3i64..4),
        proptest::option::weighted(0.85, 0u8..3),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]
    #[test]
    fn optimized_equals_unoptimized(
        left in proptest::collection::vec(row(), 0..25),
        right in proptest::collection::vec(row(), 0..12),
        third in proptest::collection::vec(row(), 0..10),
        steps in proptest::collection::vec(step(), 1..6),
    ) {
        let other = table(&right, "r");
        let third = table(&third, "q");
        let mut lf = table(&left, "");
        for s in &steps {
            lf = apply(lf, s, &other, &third);
        }
        let traced = sloth::optimizer::optimize_traced(lf.logical_plan(), &OptimizerOptions::default()).unwrap();
        prop_assert!(traced.converged, "no fixed point within {} passes:\n{}", sloth::optimizer::MAX_PASSES, traced.plan);
        let reference = lf.collect_unoptimized().unwrap().to_sorted_csv().unwrap();
        let optimized = lf.collect().unwrap().to_sorted_csv().unwrap();
        prop_assert_eq!(&reference, &optimized, "plan:\n{}", lf.explain(true).unwrap());
        for rule in OptimizerOptions::rule_names() {
            let one_off = lf.clone().with_optimizer(OptimizerOptions::default().disable(rule)).collect().unwrap().to_sorted_csv().unwrap();
            prop_assert_eq!(&reference, &one_off, "with {} off", rule);
        }
    }
}

/// Regressions that Polars users reported for their optimizer.
#[test]
fn filter_is_not_pushed_past_sort_head() {
    let t = table(
        &[
            (Some(3), None, None),
            (Some(1), None, None),
            (Some(2), None, None),
        ],
        "",
    );
    let lf = t
        .sort(vec![col("a")], vec![false], false)
        .limit(1)
        .filter(col("a").gt(lit(1)));
    assert!(lf.collect().unwrap().num_rows() == 0);
}

#[test]
fn filter_is_not_pushed_through_union_with_slice() {
    let t = table(&[(Some(1), None, None), (Some(2), None, None)], "");
    let lf = t
        .union(std::slice::from_ref(&t))
        .slice(1, Some(2))
        .filter(col("a").eq(lit(2)));
    assert_eq!(common::rows(&lf.select([col("a")])), vec!["2"]);
}

#[test]
fn filter_on_null_side_of_left_join_is_not_pushed() {
    let l = table(&[(Some(1), None, None), (Some(2), None, None)], "");
    let r = table(&[(Some(1), Some(5), None)], "r");
    let lf = l
        .join(&r, [col("a")], [col("ra")], JoinType::Left)
        .filter(col("rb").is_null());
    assert_eq!(common::rows(&lf.select([col("a")])), vec!["2"]);
}

#[test]
fn filter_comparing_with_aggregate_stays_above_it() {
    let t = table(
        &[
            (Some(1), Some(1), None),
            (Some(1), Some(3), None),
            (Some(2), Some(2), None),
        ],
        "",
    );
    let lf = t
        .group_by([col("a")])
        .agg([col("b").min().alias("mn"), col("b").max().alias("mx")])
        .filter(col("mx").eq(col("mn")));
    assert_eq!(common::rows(&lf), vec!["2|2|2"]);
}

/// A chain of joins whose filtered last table should come first: the
/// reordered plan must fire and return the same rows as the written one.
#[test]
fn reordered_join_chain_returns_the_same_rows() {
    let rows: Vec<_> = (0..40)
        .map(|i| (Some(i % 7), Some(i % 5), Some((i % 3) as u8)))
        .collect();
    let lf = table(&rows, "")
        .join(
            &table(&rows[..20], "r"),
            [col("a")],
            [col("ra")],
            JoinType::Inner,
        )
        .join(
            &table(&rows[..10], "q").filter(col("qb").eq(lit(1))),
            [col("rb")],
            [col("qa")],
            JoinType::Inner,
        );
    let explained = lf.explain(true).unwrap();
    assert!(explained.contains("join_reorder"), "{explained}");
    let reference = lf.collect_unoptimized().unwrap().to_sorted_csv().unwrap();
    let optimized = lf.collect().unwrap();
    assert!(optimized.num_rows() > 0);
    assert_eq!(reference, optimized.to_sorted_csv().unwrap());
    // Column order is the written one.
    assert_eq!(
        optimized
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "s", "ra", "rb", "rs", "qa", "qb", "qs"]
    );
}

/// The semi-join rules and the implied-predicate derivation fire on shapes
/// like TPC-H Q7, Q17 and Q18
/// and keep the rows.
#[test]
fn semi_join_rules_and_implied_predicates_return_the_same_rows() {
    let rows: Vec<_> = (0..60)
        .map(|i| (Some(i % 11), Some(i % 4), Some((i % 3) as u8)))
        .collect();
    let small = table(&rows[..30], "").filter(col("b").eq(lit(1)));
    let per_key = table(&rows, "q")
        .group_by([col("qa")])
        .agg([col("qb").sum().alias("qsum")]);
    // Q17: an aggregate joined on its key with a filtered table.
    let q17 = small.join(&per_key, [col("a")], [col("qa")], JoinType::Inner);
    // Q18: an IN subquery over a join's output, keyed on one side.
    let q18 = table(&rows, "")
        .join(&table(&rows, "r"), [col("a")], [col("ra")], JoinType::Inner)
        .join(
            &table(&rows[..5], "q"),
            [col("a")],
            [col("qa")],
            JoinType::Semi,
        );
    // Q7: a disjunction over both sides of a join (each side's scan gets
    // what every branch demands of it).
    let q7 = table(&rows, "")
        .join(&table(&rows, "r"), [col("a")], [col("ra")], JoinType::Inner)
        .filter(
            (col("b").eq(lit(1)).and(col("rb").eq(lit(2))))
                .or(col("b").eq(lit(2)).and(col("rb").eq(lit(1)))),
        );
    for (lf, rule) in [
        (q17, "aggregate_semi_join"),
        (q18, "semi_join_pushdown"),
        (q7, "((rb = 2) OR (rb = 1))"),
    ] {
        let explained = lf.explain(true).unwrap();
        assert!(explained.contains(rule), "{explained}");
        let reference = lf.collect_unoptimized().unwrap().to_sorted_csv().unwrap();
        let optimized = lf.collect().unwrap();
        assert!(optimized.num_rows() > 0, "{rule}");
        assert_eq!(reference, optimized.to_sorted_csv().unwrap(), "{rule}");
    }
}

/// Found by the property test: a third join of the same table names its
/// columns past two earlier copies (`qs_right_right`); pruning the lower
/// joins' outputs must keep the names those suffixes were counted past.
#[test]
fn repeated_self_joins_keep_their_suffixed_names_when_pruned() {
    let empty: Vec<(Option<i64>, Option<i64>, Option<u8>)> = vec![];
    let rows = [(Some(1), Some(1), Some(0)), (Some(1), None, Some(1))];
    for (left, third) in [(&empty[..], &empty[..]), (&rows[..], &rows[..])] {
        let (third, other) = (table(third, "q"), table(&empty, "r"));
        let mut lf = table(left, "");
        for s in [
            Step::JoinThird(0),
            Step::JoinThird(0),
            Step::JoinThird(0),
            Step::GroupBy,
        ] {
            lf = apply(lf, &s, &other, &third);
        }
        let reference = lf.collect_unoptimized().unwrap().to_sorted_csv().unwrap();
        assert_eq!(lf.collect().unwrap().to_sorted_csv().unwrap(), reference);
    }
}
