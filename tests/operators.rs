//! Every operator family on a small table with nulls, in several batches.
//! Expected values are worked out by hand from `common::people()`.

use crate::common::*;
use arrow::datatypes::DataType;
use sloth::expr::{ScalarValue, date};
use sloth::prelude::*;

fn p() -> LazyFrame {
    frame(people())
}

#[test]
fn filter_with_three_valued_logic() {
    // x > 15 is null for row 3 (x null) and so drops it.
    let r = rows(
        &p().filter(col("x").gt(lit(15)))
            .select([col("k"), col("x")]),
    );
    assert_eq!(r, vec!["b|20", "null|40", "b|50", "c|60"]);
    // b OR x > 45: row 3 (b null, x null) is null -> dropped; row 5 (false OR true) kept.
    let r = rows(
        &p().filter(col("b").or(col("x").gt(lit(45))))
            .select([col("x")]),
    );
    assert_eq!(r, vec!["10", "40", "50", "60"]);
    // NOT b keeps only false rows.
    let r = rows(&p().filter(col("b").not()).select([col("x")]));
    assert_eq!(r, vec!["20", "50"]);
}

#[test]
fn filter_on_every_type() {
    assert_eq!(
        rows(&p().filter(col("k").eq(lit("a"))).select([col("x")])),
        vec!["10", "null"]
    );
    assert_eq!(
        rows(&p().filter(col("f").lt_eq(lit(1.5))).select([col("x")])),
        vec!["10", "60"]
    );
    assert_eq!(
        rows(
            &p().filter(col("d").gt_eq(lit(date("1971-01-01"))))
                .select([col("x")])
        ),
        vec!["50", "60"]
    );
    // Decimal compared with an integer: exact.
    assert_eq!(
        rows(&p().filter(col("m").gt(lit(20))).select([col("x")])),
        vec!["20", "60"]
    );
    assert_eq!(
        rows(&p().filter(col("g").is_null()).select([col("x")])),
        vec!["50"]
    );
    assert_eq!(
        rows(
            &p().filter(col("k").is_not_null().and(col("g").eq(lit(2))))
                .select([col("x")])
        ),
        vec!["20"]
    );
}

#[test]
fn empty_input_and_filter_to_nothing() {
    let r = rows(&p().filter(col("x").gt(lit(1000))));
    assert!(r.is_empty());
    let agg = rows(
        &p().filter(col("x").gt(lit(1000)))
            .agg([count_star(), col("x").sum().alias("s")]),
    );
    assert_eq!(agg, vec!["0|null"]);
    let grouped = rows(
        &p().filter(col("x").gt(lit(1000)))
            .group_by([col("k")])
            .agg([count_star()]),
    );
    assert!(grouped.is_empty());
}

#[test]
fn arithmetic_and_decimals_are_exact() {
    let lf = p().select([
        (col("m") * lit(3)).alias("m3"),
        (col("x") + col("g")).alias("xg"),
        (col("f") / lit(2.0)).alias("half"),
    ]);
    assert_eq!(column_type(&lf, "m3"), DataType::Decimal128(30, 2));
    assert_eq!(
        rows(&lf),
        vec![
            "31.50|11|0.75",
            "60.75|22|null",
            "-9.00|null|1.25",
            "0.03|42|2.0",
            "null|null|2.5",
            "2999.97|63|-0.5"
        ]
    );
    // Arrow's decimal rules: p1 + p2 + 1 digits for a product.
    // Decimal subtraction of a literal keeps exactness: 1 - m.
    let lf = p().select([(lit(1) - col("m")).alias("r")]).limit(2);
    assert_eq!(rows(&lf), vec!["-9.50", "-19.25"]);
}

#[test]
fn select_of_aggregates_only_gives_one_row_as_agg_does() {
    let select = p().select([col("x").sum().alias("s"), col("k").n_unique().alias("n")]);
    let agg = p().agg([col("x").sum().alias("s"), col("k").n_unique().alias("n")]);
    assert_eq!(rows(&select), rows(&agg));
    assert_eq!(rows(&select).len(), 1);
}

#[test]
fn with_columns_replaces_and_appends() {
    let lf = p()
        .with_columns([
            (col("x") * lit(2)).alias("x"),
            col("g").cast(DataType::Float64).alias("gf"),
        ])
        .limit(1);
    let s = lf.schema().unwrap();
    assert_eq!(s.fields().len(), 8);
    assert_eq!(rows(&lf.select([col("x"), col("gf")])), vec!["20|1.0"]);
}

/// Window aggregates and lag/lead built with the API equal their SQL.
#[test]
fn window_aggregates_and_lag_from_the_api_equal_sql() {
    use sloth::expr::SortKey;
    let by_x = || {
        vec![SortKey {
            expr: col("x"),
            descending: false,
            nulls_last: true,
        }]
    };
    let lf = p().select([
        col("k"),
        col("x"),
        col("x")
            .sum()
            .over_window(vec![col("k")], vec![])
            .unwrap()
            .alias("total"),
        col("x")
            .sum()
            .over_window(vec![col("k")], by_x())
            .unwrap()
            .alias("running"),
        count_star().over_window(vec![], vec![]).unwrap().alias("n"),
        col("x").lag(1, vec![col("k")], by_x()).alias("prev"),
    ]);
    let mut ctx = sloth::sql::SqlContext::new();
    ctx.register("p", p());
    let want = ctx
        .sql("select k, x, sum(x) over (partition by k) total, sum(x) over (partition by k order by x nulls last) running, count(*) over () n, lag(x) over (partition by k order by x nulls last) prev from p")
        .unwrap();
    assert_eq!(sorted_rows(&lf), sorted_rows(&want));
    assert!(col("x").over_window(vec![], vec![]).is_err());
    assert!(col("x").first().over_window(vec![], vec![]).is_err());
}

#[test]
fn select_and_with_columns_compute_windows_inside_larger_expressions() {
    use sloth::expr::{SortKey, WindowFunc};
    let rank = || {
        Expr::over(
            WindowFunc::RowNumber,
            vec![col("k")],
            vec![SortKey {
                expr: col("x"),
                descending: false,
                nulls_last: true,
            }],
        )
    };
    let sql = || {
        let mut ctx = sloth::sql::SqlContext::new();
        ctx.register("p", p());
        ctx
    };
    let want = sql()
        .sql("select k, x, row_number() over (partition by k order by x nulls last) * 10 + 1 as r from p")
        .unwrap();
    let selected = p().select([col("k"), col("x"), (rank() * lit(10) + lit(1)).alias("r")]);
    assert_eq!(sorted_rows(&selected), sorted_rows(&want));
    let added = p()
        .with_columns([(rank() * lit(10) + lit(1)).alias("r")])
        .select([col("k"), col("x"), col("r")]);
    assert_eq!(sorted_rows(&added), sorted_rows(&want));
    // Un-aliased, a window keeps its own name, as in with_columns before.
    let named = p().select([rank()]).schema().unwrap();
    assert!(
        named.field(0).name().starts_with("row_number()"),
        "{named:?}"
    );
}

#[test]
fn when_then_otherwise_and_is_in_between() {
    let lf = p().select([
        when(col("x").lt(lit(30)))
            .then(lit("low"))
            .when(col("x").lt(lit(55)))
            .then(lit("mid"))
            .otherwise(lit("high"))
            .alias("band"),
        col("g").is_in([lit(1), lit(3)]).alias("in13"),
        col("x").between(lit(20), lit(50)).alias("btw"),
    ]);
    assert_eq!(
        rows(&lf),
        vec![
            "low|true|false",
            "low|false|true",
            "high|true|null",
            "mid|false|true",
            "mid|null|true",
            "high|true|false"
        ]
    );
}

#[test]
fn string_and_date_functions() {
    let lf = p().filter(col("k").is_not_null()).select([
        col("k").to_uppercase().alias("u"),
        col("d").year().alias("y"),
        col("d").month().alias("mo"),
        col("d").day().alias("dd"),
    ]);
    assert_eq!(
        rows(&lf),
        vec![
            "A|1970|1|1",
            "B|1970|2|1",
            "A|1970|3|1",
            "B|1971|1|1",
            "C|1997|5|19"
        ]
    );
    // date + interval
    let iv = ScalarValue::Interval {
        months: 1,
        days: 2,
        nanos: 0,
    };
    let lf = p().select([(col("d") + lit(iv)).alias("d2")]).limit(2);
    assert_eq!(rows(&lf), vec!["1970-02-03", "1970-03-03"]);
}

#[test]
fn group_by_all_aggregates_with_null_keys() {
    let lf = p()
        .group_by([col("k")])
        .agg([
            count_star().alias("n"),
            col("x").count().alias("cx"),
            col("x").sum().alias("sx"),
            col("x").min().alias("mn"),
            col("x").max().alias("mx"),
            col("f").mean().alias("avg_f"),
            col("m").sum().alias("sm"),
            col("x").first().alias("fx"),
            col("x").last().alias("lx"),
            col("g").n_unique().alias("ng"),
        ])
        .sort(vec![col("k")], vec![false], true);
    assert_eq!(
        rows(&lf),
        vec![
            "a|2|1|10|10|10|2.0|7.50|10|null|1",
            "b|2|2|70|20|50|5.0|20.25|20|50|2",
            "c|1|1|60|60|60|-1.0|999.99|60|60|1",
            "null|1|1|40|40|40|4.0|0.01|40|40|1",
        ]
    );
    assert_eq!(column_type(&lf, "sm"), DataType::Decimal128(38, 2));
}

#[test]
fn statistics_aggregates() {
    // x over all rows: 10, 20, 40, 50, 60 (one null).
    let lf = p().agg([
        col("x").std().alias("sd"),
        col("x").var().alias("var"),
        col("x").median().alias("med"),
        col("x").quantile(0.25).alias("q1"),
        corr(col("x"), col("f")).alias("r"),
        col("k").min().alias("kmin"),
        col("k").max().alias("kmax"),
        col("d").max().alias("dmax"),
    ]);
    let r = rows(&lf);
    // mean 36, squared deviations 676+256+16+196+576 = 1720, /4 = 430.
    let cols: Vec<&str> = r[0].split('|').collect();
    assert!((cols[0].parse::<f64>().unwrap() - 430f64.sqrt()).abs() < 1e-9);
    assert_eq!(cols[1], "430.0");
    assert_eq!(cols[2], "40.0");
    assert_eq!(cols[3], "20.0");
    // pairs with both present: (10,1.5), (40,4.0), (50,5.0), (60,-1.0)
    let (xs, fs) = ([10.0, 40.0, 50.0, 60.0], [1.5, 4.0, 5.0, -1.0]);
    let (mx, mf) = (xs.iter().sum::<f64>() / 4.0, fs.iter().sum::<f64>() / 4.0);
    let cov: f64 = xs.iter().zip(&fs).map(|(x, f)| (x - mx) * (f - mf)).sum();
    let vx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let vf: f64 = fs.iter().map(|f| (f - mf).powi(2)).sum();
    assert!((cols[4].parse::<f64>().unwrap() - cov / (vx * vf).sqrt()).abs() < 1e-12);
    assert_eq!(&cols[5..], ["a", "c", "1997-05-19"]);
}

#[test]
fn aggregate_expressions_combine_aggregates() {
    let lf = p()
        .group_by([col("g")])
        .agg([
            (col("x").max() - col("x").min()).alias("range"),
            (col("x").sum() * lit(2)).alias("dbl"),
        ])
        .sort(vec![col("g")], vec![false], false);
    assert_eq!(
        rows(&lf),
        vec!["null|0|100", "1|0|20", "2|20|120", "3|0|120"]
    );
}

#[test]
fn sort_multiple_keys_desc_and_nulls() {
    let lf = p()
        .sort(vec![col("k"), col("x")], vec![true, false], true)
        .select([col("k"), col("x")]);
    assert_eq!(
        rows(&lf),
        vec!["c|60", "b|20", "b|50", "a|10", "a|null", "null|40"]
    );
    let lf = p()
        .sort(vec![col("x")], vec![false], false)
        .select([col("x")]);
    assert_eq!(rows(&lf), vec!["null", "10", "20", "40", "50", "60"]);
}

#[test]
fn limit_slice_unique_rename_drop() {
    assert_eq!(
        rows(&p().select([col("x")]).slice(2, Some(2))),
        vec!["null", "40"]
    );
    assert_eq!(rows(&p().select([col("x")]).slice(5, None)), vec!["60"]);
    assert_eq!(rows(&p().select([col("x")]).limit(0)).len(), 0);
    let top = p()
        .sort(vec![col("x")], vec![true], true)
        .limit(2)
        .select([col("x")]);
    assert_eq!(rows(&top), vec!["60", "50"]);
    assert_eq!(
        sorted_rows(&p().select([col("k")]).unique()),
        vec!["a", "b", "c", "null"]
    );
    let renamed = p().rename([("x", "xx")]).drop(["f", "d", "m", "b"]);
    let names: Vec<String> = renamed
        .schema()
        .unwrap()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, vec!["k", "g", "xx"]);
}

fn left() -> LazyFrame {
    let b = arrow::record_batch::RecordBatch::try_from_iter(vec![
        (
            "id",
            std::sync::Arc::new(arrow::array::Int64Array::from(vec![
                Some(1),
                Some(2),
                Some(2),
                None,
                Some(4),
            ])) as _,
        ),
        (
            "lv",
            std::sync::Arc::new(arrow::array::StringArray::from(vec![
                "l1", "l2a", "l2b", "lnull", "l4",
            ])) as _,
        ),
    ])
    .unwrap();
    frame(b)
}

fn right() -> LazyFrame {
    let b = arrow::record_batch::RecordBatch::try_from_iter(vec![
        (
            "id",
            std::sync::Arc::new(arrow::array::Int32Array::from(vec![
                Some(2),
                Some(3),
                None,
                Some(2),
                Some(1),
            ])) as _,
        ),
        (
            "rv",
            std::sync::Arc::new(arrow::array::StringArray::from(vec![
                "r2a", "r3", "rnull", "r2b", "r1",
            ])) as _,
        ),
    ])
    .unwrap();
    frame(b)
}

fn join(how: JoinType) -> Vec<String> {
    sorted_rows(&left().join(&right(), [col("id")], [col("id")], how))
}

#[test]
fn joins_of_every_kind_with_null_keys() {
    // Null keys never match. Key types differ (Int64 vs Int32) and are coerced.
    assert_eq!(
        join(JoinType::Inner),
        vec![
            "1|l1|r1",
            "2|l2a|r2a",
            "2|l2a|r2b",
            "2|l2b|r2a",
            "2|l2b|r2b"
        ]
    );
    assert_eq!(
        join(JoinType::Left),
        vec![
            "1|l1|r1",
            "2|l2a|r2a",
            "2|l2a|r2b",
            "2|l2b|r2a",
            "2|l2b|r2b",
            "4|l4|null",
            "null|lnull|null"
        ]
    );
    assert_eq!(
        join(JoinType::Right),
        vec![
            "1|l1|r1",
            "2|l2a|r2a",
            "2|l2a|r2b",
            "2|l2b|r2a",
            "2|l2b|r2b",
            "3|null|r3",
            "null|null|rnull"
        ]
    );
    assert_eq!(
        join(JoinType::Full),
        vec![
            "1|l1|1|r1",
            "2|l2a|2|r2a",
            "2|l2a|2|r2b",
            "2|l2b|2|r2a",
            "2|l2b|2|r2b",
            "4|l4|null|null",
            "null|lnull|null|null",
            "null|null|3|r3",
            "null|null|null|rnull",
        ]
    );
    assert_eq!(join(JoinType::Semi), vec!["1|l1", "2|l2a", "2|l2b"]);
    assert_eq!(join(JoinType::Anti), vec!["4|l4", "null|lnull"]);
}

#[test]
fn joins_give_the_same_rows_whichever_side_is_built() {
    // Swapping inputs swaps which side the hash table is built on (the smaller).
    let small = left().filter(col("id").eq(lit(2)));
    for how in EQUI_JOINS {
        let a = sorted_rows(&small.join(&right(), [col("id")], [col("id")], how));
        let b = sorted_rows(
            &small
                .join(
                    &right().union(&[right(), right()]),
                    [col("id")],
                    [col("id")],
                    how,
                )
                .unique(),
        );
        assert_eq!(a, b, "{how:?}");
    }
}

#[test]
fn string_and_multi_column_join_keys() {
    let l = p().select([col("k"), col("g"), col("x")]);
    let r = p().select([col("k").alias("k2"), col("g").alias("g2"), col("f")]);
    let lf = l
        .join(
            &r,
            [col("k"), col("g")],
            [col("k2"), col("g2")],
            JoinType::Inner,
        )
        .select([col("x"), col("f")]);
    // (a,1) matches rows 0 and 2 on both sides: 4 pairs; (b,2) 1; (c,3) 1; nulls never.
    assert_eq!(
        sorted_rows(&lf),
        vec![
            "10|1.5", "10|2.5", "20|null", "60|-1.0", "null|1.5", "null|2.5"
        ]
    );
}

#[test]
fn union_and_cross_join() {
    let u = p().select([col("g")]).union(&[p().select([col("x")])]);
    assert_eq!(column_type(&u, "g"), DataType::Int64);
    assert_eq!(rows(&u).len(), 12);
    let c = p().select([col("k")]).limit(2).join(
        &p().select([col("g")]).limit(3),
        [],
        [],
        JoinType::Cross,
    );
    assert_eq!(rows(&c).len(), 6);
}

#[test]
fn errors_are_clear_not_panics() {
    let e = p().select([col("nope")]).collect().unwrap_err().to_string();
    assert!(
        e.contains("'nope'") && e.contains("k, g, x, f, d, m, b"),
        "{e}"
    );
    let e = p()
        .filter(col("k") + lit(1))
        .collect()
        .unwrap_err()
        .to_string();
    assert!(e.contains("Utf8") && e.contains("Int64"), "{e}");
    let e = p().filter(col("x")).collect().unwrap_err().to_string();
    assert!(e.contains("Boolean"), "{e}");
    let e = LazyFrame::scan_parquet("/no/such/file.parquet")
        .unwrap_err()
        .to_string();
    assert!(e.contains("/no/such/file.parquet"), "{e}");
    // Aggregates beside a plain column: no row to pair them with.
    let e = p()
        .select([col("x").sum(), col("k")])
        .collect()
        .unwrap_err()
        .to_string();
    assert!(e.contains("aggregat"), "{e}");
    let e = p()
        .select([col("x"), col("x")])
        .collect()
        .unwrap_err()
        .to_string();
    assert!(e.contains("duplicate"), "{e}");
}

/// 10,000 rows in 64-row batches: `k` cycles through 7 groups; every 10th row
/// has `x` near `i64::MAX` (so `x * 4` overflows there), the others `x = i`.
fn mostly_small() -> LazyFrame {
    use arrow::array::{Int64Array, RecordBatch};
    use std::sync::Arc;
    let n = 10_000i64;
    let batch = RecordBatch::try_from_iter(vec![
        (
            "k",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i % 7))) as _,
        ),
        (
            "x",
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| if i % 10 == 9 { i64::MAX - i } else { i }),
            )) as _,
        ),
    ])
    .unwrap();
    LazyFrame::from_batches_with_schema(batch.schema(), split(&batch, 64)).unwrap()
}

#[test]
fn aggregation_over_a_filter_keeping_most_rows_skips_the_rest() {
    // The filter keeps 90% of each batch: the aggregation gets whole batches
    // and the kept rows' indices, and must see the kept rows only, even
    // though its argument `x * 4` overflows on the rejected ones.
    let lf = mostly_small()
        .filter(col("x").lt(lit(1_000_000i64)))
        .group_by([col("k")])
        .agg([
            count_star().alias("n"),
            (col("x") * lit(4i64)).sum().alias("s4"),
            col("x").max().alias("mx"),
        ])
        .sort(vec![col("k")], vec![false], false);
    let mut expected = Vec::new();
    for k in 0..7i64 {
        let kept: Vec<i64> = (0..10_000i64)
            .filter(|i| i % 10 != 9 && i % 7 == k)
            .collect();
        let s4: i64 = kept.iter().map(|x| x * 4).sum();
        let mx = kept.iter().max().unwrap();
        expected.push(format!("{k}|{}|{s4}|{mx}", kept.len()));
    }
    assert_eq!(rows(&lf), expected);
    // Without keys, and with a selection that is not a prefix.
    let total = mostly_small()
        .filter(col("x").lt(lit(1_000_000i64)))
        .agg([count_star().alias("n"), col("x").min().alias("mn")]);
    assert_eq!(rows(&total), vec!["9000|0"]);
}

/// 5,000 rows in 100-row batches: key `id` cycles through 0..50 with a null
/// every 13th row; `v` is the row number.
fn many_keyed() -> LazyFrame {
    use arrow::array::{Int64Array, RecordBatch};
    use std::sync::Arc;
    let n = 5_000i64;
    let batch = RecordBatch::try_from_iter(vec![
        (
            "id",
            Arc::new(Int64Array::from_iter(
                (0..n).map(|i| (i % 13 != 0).then_some(i % 50)),
            )) as _,
        ),
        ("v", Arc::new(Int64Array::from_iter_values(0..n)) as _),
    ])
    .unwrap();
    LazyFrame::from_batches_with_schema(batch.schema(), split(&batch, 100)).unwrap()
}

#[test]
fn a_large_scan_on_the_left_streams_through_a_table_built_on_the_right() {
    // The small right side is built on and the left scan streams through
    // the probe: every join kind must give what the unfused executor
    // (both sides materialized, the smaller built) gives.
    use sloth::exec::{ExecContext, execute_with};
    for how in EQUI_JOINS {
        let lf = many_keyed().join(&right(), [col("id")], [col("id")], how);
        let profile = lf.profile().unwrap();
        assert!(
            profile.contains("left (probe) side streamed"),
            "{how:?}: {profile}"
        );
        let plan = lf.physical_plan().unwrap();
        let unfused = execute_with(&plan, &ExecContext::unfused()).unwrap();
        let mut want = rows_of(&DataFrame::new(plan.schema(), unfused));
        want.sort();
        let got = sorted_rows(&lf);
        assert_eq!(got, want, "{how:?}");
        // Right keys: 2 twice, 3, null, 1; left rows with key k: 100 minus
        // the multiples of 13 among them.
        let left_rows = |k: i64| (0..5_000i64).filter(|i| i % 50 == k && i % 13 != 0).count();
        let hit = left_rows(1) + left_rows(2) + left_rows(3);
        let matched = hit + left_rows(2);
        let expected = match how {
            JoinType::Inner => matched,
            JoinType::Left => matched + 5_000 - hit,
            JoinType::Right => matched + 1,
            JoinType::Full => matched + 5_000 - hit + 1,
            JoinType::Semi => hit,
            JoinType::Anti => 5_000 - hit,
            JoinType::Cross => unreachable!(),
        };
        assert_eq!(got.len(), expected, "{how:?}");
    }
}

#[test]
fn distinct_aggregates_ordered_picks_and_math_from_the_api() {
    // g: 1, 2, 1, 2, null, 3.
    let r = rows(
        &p().agg([
            col("g").sum().alias("all"),
            col("g").sum().distinct().alias("distinct"),
            col("x").min_by(col("f")).alias("min_by"),
            col("x").max_by(col("f")).alias("max_by"),
            col("k")
                .string_agg(
                    ",",
                    Some(SortKey {
                        expr: col("x"),
                        descending: false,
                        nulls_last: true,
                    }),
                )
                .alias("ks"),
        ]),
    );
    // min_by/max_by skip (20, null) and (null, 2.5): f = -1.0 is x = 60,
    // f = 5.0 is x = 50. k by x: a(10) b(20) b(50) c(60), then a (x null).
    assert_eq!(r, vec!["9|6|60|50|a,b,b,c,a"]);
    let r = rows(&p().select([
        col("f").floor().alias("fl"),
        col("f").ceil().alias("ce"),
        col("f").sign().alias("sg"),
        col("f").math(MathFunc::Sqrt).alias("sq"),
        col("x").pow(lit(2)).alias("p"),
    ]));
    assert_eq!(r[3], "4.0|4.0|1|2.0|1600.0");
    assert_eq!(r[5], "-1.0|-1.0|-1|NaN|3600.0");
    assert_eq!(r[1], "null|null|null|null|400.0");
}

/// Integer sums never wrap: a sum past i64 is an error that says how to sum
/// exactly; large values that cancel out still sum exactly; grouped and
/// global sums, in several batches, alike.
#[test]
fn integer_sums_fail_on_overflow_instead_of_wrapping() {
    use arrow::array::{ArrayRef, Int64Array, RecordBatch};
    use std::sync::Arc;
    let frame = |values: Vec<i64>| {
        let batches = values
            .chunks(2)
            .map(|chunk| {
                let k: ArrayRef = Arc::new(Int64Array::from(vec![1; chunk.len()]));
                let v: ArrayRef = Arc::new(Int64Array::from(chunk.to_vec()));
                RecordBatch::try_from_iter([("k", k), ("v", v)]).unwrap()
            })
            .collect();
        LazyFrame::from_batches(batches).unwrap()
    };
    let big = 1i64 << 62;
    for values in [vec![big, big, big], vec![i64::MAX, 1]] {
        for grouped in [false, true] {
            let lf = frame(values.clone());
            let lf = if grouped {
                lf.group_by([col("k")]).agg([col("v").sum()])
            } else {
                lf.agg([col("v").sum()])
            };
            let err = lf.collect().unwrap_err().to_string();
            assert!(err.contains("sum() overflowed Int64"), "{values:?}: {err}");
        }
    }
    let cancelling = frame(vec![i64::MAX, -i64::MAX, 5, i64::MIN + 1, i64::MAX])
        .agg([col("v").sum().alias("s")])
        .collect()
        .unwrap();
    assert_eq!(cancelling.to_sorted_csv().unwrap(), "s\n5\n");
}

/// A third input for join chains: keys 0..40 step 3 with a payload.
fn third() -> LazyFrame {
    let keys: Vec<Option<i64>> = (0..40).step_by(3).map(Some).chain([None]).collect();
    let n = keys.len() as i64;
    let batch = arrow::record_batch::RecordBatch::try_from_iter(vec![
        (
            "tk",
            std::sync::Arc::new(arrow::array::Int64Array::from(keys)) as _,
        ),
        (
            "tv",
            std::sync::Arc::new(arrow::array::Int64Array::from_iter_values(0..n)) as _,
        ),
    ])
    .unwrap();
    LazyFrame::from_batches(vec![batch]).unwrap()
}

/// An aggregate over a chain of hash joins reads the large scan's morsels
/// through each join's probe instead of materializing the joins' outputs:
/// for every join kind at either level (outer joins' unmatched build rows
/// and semi/anti build rows emitted after the morsels), the groups equal
/// the unfused run's (every operator materialized), each join reports the
/// unfused run's rows and says it probed from the large side.
#[test]
fn aggregates_over_join_chains_probe_as_morsels_with_the_unfused_results() {
    for inner in EQUI_JOINS {
        for outer in EQUI_JOINS {
            let joined = many_keyed().join(&right(), [col("id")], [col("id")], inner);
            let chain = joined
                .with_columns([(col("v") % lit(40i64)).alias("vk")])
                .join(&third(), [col("vk")], [col("tk")], outer);
            let lf = chain
                .group_by([col("id")])
                .agg([count_star().alias("n"), col("v").sum().alias("s")]);
            let plan = lf.physical_plan().unwrap();
            let label = format!("{inner:?} then {outer:?}");
            let fused_joins = two_joins_fused_as_unfused(&plan, &label);
            // Both probe from the large left side, whatever the kind: rows
            // a join emits after probing follow the morsels.
            for (_, _, note) in &fused_joins {
                assert!(note.contains("probed by the left"), "{label}: {note}");
            }
        }
    }
}

/// A scan joined to a join chain under an aggregate probes a table built
/// on the chain, fused into the aggregate, even though the chain's
/// estimate (its own scan's 5,000 rows) is above the scan's: the chain
/// runs first, and only if it comes out larger than the scan was expected
/// to be are both sides joined materialized. Either way, for every join
/// kind, the groups and each join's rows are the unfused run's.
#[test]
fn a_scan_probes_a_table_built_on_a_chain_that_came_out_small() {
    use arrow::array::{Int64Array, RecordBatch};
    use std::sync::Arc;
    let table = |name: &str, keys: Vec<i64>| {
        let values: Vec<i64> = (0..keys.len() as i64).collect();
        let b = RecordBatch::try_from_iter(vec![
            (name, Arc::new(Int64Array::from(keys)) as _),
            ("x", Arc::new(Int64Array::from(values)) as _),
        ])
        .unwrap();
        LazyFrame::from_batches(split(&b, 250)).unwrap()
    };
    let mid = table("mk", (0..1000).map(|i| i * 3 % 1400).collect());
    // One id of 50 (about 90 rows), or every id (about 4,600).
    for (ids, fused_probe) in [(vec![7], true), ((0..50).collect(), false)] {
        for how in EQUI_JOINS {
            let chain = many_keyed().join(
                &table("sid", ids.clone()),
                [col("id")],
                [col("sid")],
                JoinType::Inner,
            );
            let lf = chain
                .join(&mid, [col("v")], [col("mk")], how)
                .group_by([col("id")])
                .agg([count_star().alias("n"), col("v").sum().alias("s")]);
            let plan = lf.physical_plan().unwrap();
            let label = format!("{} ids, {how:?}", ids.len());
            let fused_joins = two_joins_fused_as_unfused(&plan, &label);
            let top = &fused_joins.iter().min_by_key(|j| j.0).unwrap().2;
            // (A semi or anti join moves below the chain's join.)
            if !matches!(how, JoinType::Semi | JoinType::Anti) {
                let probed = top.contains("probed by the right side's morsels");
                assert_eq!(probed, fused_probe, "{label}: {top}");
            }
        }
    }
}

/// A join chain written out batch by batch (`execute_into`, what a sink
/// runs) streams through its probes: no join materializes its output, and
/// the rows are the unfused run's.
#[test]
fn join_chains_stream_into_a_sink_through_their_probes() {
    use sloth::exec::{ExecContext, execute_into, execute_with};
    let lf = many_keyed()
        .join(&right(), [col("id")], [col("id")], JoinType::Inner)
        .with_columns([(col("v") % lit(40i64)).alias("vk")])
        .join(&third(), [col("vk")], [col("tk")], JoinType::Left);
    let plan = lf.physical_plan().unwrap();
    let ctx = ExecContext::default();
    let mut streamed = Vec::new();
    execute_into(&plan, &ctx, &mut |b| {
        streamed.push(b);
        Ok(())
    })
    .unwrap();
    let unfused = execute_with(&plan, &ExecContext::unfused()).unwrap();
    let mut got = rows_of(&DataFrame::new(plan.schema(), streamed));
    let mut want = rows_of(&DataFrame::new(plan.schema(), unfused));
    got.sort();
    want.sort();
    assert_eq!(got, want);
    let joins: Vec<_> = (ctx.metrics().into_iter())
        .filter(|m| m.name.starts_with("HashJoin"))
        .collect();
    assert_eq!(joins.len(), 2);
    for join in joins {
        assert!(join.extra.contains("probed by the left"), "{}", join.extra);
        assert_eq!(join.batches_out, 0, "{}", join.extra);
    }
}

/// Runs `plan` fused and unfused: the same rows, two hash joins with the
/// same ids and output rows both ways; returns the fused joins' (id, rows
/// out, note).
fn two_joins_fused_as_unfused(
    plan: &sloth::physical::PhysicalPlan,
    label: &str,
) -> Vec<(usize, usize, String)> {
    use sloth::exec::{ExecContext, execute_with};
    let fused = ExecContext::default();
    let got = execute_with(plan, &fused).unwrap_or_else(|e| panic!("{label}: {e}"));
    let unfused = ExecContext::unfused();
    let want = execute_with(plan, &unfused).unwrap();
    let mut got = rows_of(&DataFrame::new(plan.schema(), got));
    let mut want = rows_of(&DataFrame::new(plan.schema(), want));
    got.sort();
    want.sort();
    assert_eq!(got, want, "{label}");
    let joins = |ctx: &ExecContext| -> Vec<(usize, usize, String)> {
        (ctx.metrics().into_iter())
            .filter(|m| m.name.starts_with("HashJoin"))
            .map(|m| (m.id, m.rows_out, m.extra))
            .collect()
    };
    let (fused_joins, unfused_joins) = (joins(&fused), joins(&unfused));
    assert_eq!(fused_joins.len(), 2, "{label}");
    for (f, u) in fused_joins.iter().zip(&unfused_joins) {
        assert_eq!((f.0, f.1), (u.0, u.1), "{label}: {fused_joins:?}");
    }
    fused_joins
}
