//! db-benchmark questions on data sloth generates, checked against a naive
//! row-at-a-time implementation written with std collections only.

use crate::common;

use std::collections::{BTreeMap, HashMap, HashSet};

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::{Float64Type, Int64Type};
use sloth::datagen::{h2o_groupby, h2o_join};
use sloth::expr::{SortKey, WindowFunc};
use sloth::prelude::*;

const N: usize = 20_000;
const K: usize = 10;

struct Row {
    id1: String,
    id2: String,
    id3: String,
    id4: i64,
    id6: i64,
    v1: i64,
    v2: i64,
    v3: f64,
}

fn to_rows(batches: &[RecordBatch]) -> Vec<Row> {
    let mut out = Vec::new();
    for b in batches {
        let s = |i: usize| b.column(i).as_string::<i32>().clone();
        let n = |i: usize| b.column(i).as_primitive::<Int64Type>().clone();
        let (id1, id2, id3, id4, id6, v1, v2) = (s(0), s(1), s(2), n(3), n(5), n(6), n(7));
        let v3 = b.column(8).as_primitive::<Float64Type>().clone();
        for r in 0..b.num_rows() {
            out.push(Row {
                id1: id1.value(r).into(),
                id2: id2.value(r).into(),
                id3: id3.value(r).into(),
                id4: id4.value(r),
                id6: id6.value(r),
                v1: v1.value(r),
                v2: v2.value(r),
                v3: v3.value(r),
            });
        }
    }
    out
}

fn data() -> (LazyFrame, Vec<Row>) {
    let batches = h2o_groupby(N, K).unwrap();
    let rows = to_rows(&batches);
    // Small batches: many morsels, so per-thread partial aggregates are merged.
    let small: Vec<RecordBatch> = batches
        .iter()
        .flat_map(|b| common::split(b, 1000))
        .collect();
    (LazyFrame::from_batches(small).unwrap(), rows)
}

/// Result rows keyed by their first `keys` columns, values as f64.
fn keyed(lf: &LazyFrame, keys: usize) -> BTreeMap<Vec<String>, Vec<f64>> {
    common::rows(lf)
        .into_iter()
        .map(|r| {
            let cols: Vec<&str> = r.split('|').collect();
            (
                cols[..keys].iter().map(|s| s.to_string()).collect(),
                cols[keys..].iter().map(|v| v.parse().unwrap()).collect(),
            )
        })
        .collect()
}

fn close(a: &BTreeMap<Vec<String>, Vec<f64>>, b: &BTreeMap<Vec<String>, Vec<f64>>) {
    assert_eq!(a.len(), b.len(), "group counts differ");
    for (k, va) in a {
        let vb = b.get(k).unwrap_or_else(|| panic!("group {k:?} missing"));
        for (x, y) in va.iter().zip(vb) {
            assert!(
                (x - y).abs() <= 1e-9 * (1.0 + x.abs().max(y.abs())),
                "group {k:?}: {va:?} vs {vb:?}"
            );
        }
    }
}

fn naive<K: Ord + Clone, F: Fn(&Row) -> K>(rows: &[Row], key: F) -> BTreeMap<K, Vec<&Row>> {
    let mut m: BTreeMap<K, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        m.entry(key(r)).or_default().push(r);
    }
    m
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn sd(v: &[f64]) -> f64 {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

#[test]
fn groupby_q1_to_q10() {
    let (x, rows) = data();
    // q1: sum v1 by id1
    let got = keyed(&x.group_by([col("id1")]).agg([col("v1").sum()]), 1);
    let want = naive(&rows, |r| vec![r.id1.clone()])
        .into_iter()
        .map(|(k, g)| (k, vec![g.iter().map(|r| r.v1).sum::<i64>() as f64]))
        .collect();
    close(&got, &want);
    // q2: sum v1 by id1, id2
    let got = keyed(
        &x.group_by([col("id1"), col("id2")]).agg([col("v1").sum()]),
        2,
    );
    let want = naive(&rows, |r| vec![r.id1.clone(), r.id2.clone()])
        .into_iter()
        .map(|(k, g)| (k, vec![g.iter().map(|r| r.v1).sum::<i64>() as f64]))
        .collect();
    close(&got, &want);
    // q3: sum v1, mean v3 by id3
    let got = keyed(
        &x.group_by([col("id3")])
            .agg([col("v1").sum(), col("v3").mean()]),
        1,
    );
    let want = naive(&rows, |r| vec![r.id3.clone()])
        .into_iter()
        .map(|(k, g)| {
            let s = g.iter().map(|r| r.v1).sum::<i64>() as f64;
            (
                k,
                vec![s, g.iter().map(|r| r.v3).sum::<f64>() / g.len() as f64],
            )
        })
        .collect();
    close(&got, &want);
    // q4: mean v1, v2, v3 by id4
    let got = keyed(
        &x.group_by([col("id4")])
            .agg([col("v1").mean(), col("v2").mean(), col("v3").mean()]),
        1,
    );
    let want = naive(&rows, |r| vec![r.id4.to_string()])
        .into_iter()
        .map(|(k, g)| {
            let n = g.len() as f64;
            (
                k,
                vec![
                    g.iter().map(|r| r.v1 as f64).sum::<f64>() / n,
                    g.iter().map(|r| r.v2 as f64).sum::<f64>() / n,
                    g.iter().map(|r| r.v3).sum::<f64>() / n,
                ],
            )
        })
        .collect();
    close(&got, &want);
    // q5: sum v1, v2, v3 by id6
    let got = keyed(
        &x.group_by([col("id6")])
            .agg([col("v1").sum(), col("v2").sum(), col("v3").sum()]),
        1,
    );
    let want = naive(&rows, |r| vec![r.id6.to_string()])
        .into_iter()
        .map(|(k, g)| {
            (
                k,
                vec![
                    g.iter().map(|r| r.v1).sum::<i64>() as f64,
                    g.iter().map(|r| r.v2).sum::<i64>() as f64,
                    g.iter().map(|r| r.v3).sum::<f64>(),
                ],
            )
        })
        .collect();
    close(&got, &want);
    // q6: median v3, sd v3 by id4, id5 (id5 drawn like id4: use the engine's own keys)
    let got = keyed(
        &x.group_by([col("id4"), col("id2")]).agg([
            col("v3").median().alias("median_v3"),
            col("v3").std().alias("sd_v3"),
        ]),
        2,
    );
    let want = naive(&rows, |r| vec![r.id4.to_string(), r.id2.clone()])
        .into_iter()
        .map(|(k, g)| {
            let v: Vec<f64> = g.iter().map(|r| r.v3).collect();
            (
                k,
                vec![
                    median(v.clone()),
                    if v.len() > 1 { sd(&v) } else { f64::NAN },
                ],
            )
        })
        .filter(|(_, v)| !v[1].is_nan())
        .collect::<BTreeMap<_, _>>();
    let got: BTreeMap<_, _> = got
        .into_iter()
        .filter(|(k, _)| want.contains_key(k))
        .collect();
    close(&got, &want);
    // q7: max v1 - min v2 by id3
    let got = keyed(
        &x.group_by([col("id3")])
            .agg([(col("v1").max() - col("v2").min()).alias("range_v1_v2")]),
        1,
    );
    let want = naive(&rows, |r| vec![r.id3.clone()])
        .into_iter()
        .map(|(k, g)| {
            let mx = g.iter().map(|r| r.v1).max().unwrap();
            let mn = g.iter().map(|r| r.v2).min().unwrap();
            (k, vec![(mx - mn) as f64])
        })
        .collect();
    close(&got, &want);
    // q8: largest two v3 by id6 (a row_number window, then a filter)
    let order = vec![SortKey {
        expr: col("v3"),
        descending: true,
        nulls_last: true,
    }];
    let top2 = x
        .filter(col("v3").is_not_null())
        .with_columns([Expr::over(WindowFunc::RowNumber, vec![col("id6")], order).alias("rn")])
        .filter(col("rn").lt_eq(lit(2)))
        .select([col("id6"), col("rn"), col("v3")]);
    let got = keyed(&top2, 2);
    let mut want = BTreeMap::new();
    for (k, g) in naive(&rows, |r| r.id6) {
        let mut v: Vec<f64> = g.iter().map(|r| r.v3).collect();
        v.sort_by(|a, b| b.total_cmp(a));
        for (i, x) in v.iter().take(2).enumerate() {
            want.insert(vec![k.to_string(), (i + 1).to_string()], vec![*x]);
        }
    }
    close(&got, &want);
    // q9: corr(v1, v2)^2 by id2, id4
    let got = keyed(
        &x.group_by([col("id2"), col("id4")])
            .agg([(corr(col("v1"), col("v2")) * corr(col("v1"), col("v2"))).alias("r2")]),
        2,
    );
    let want: BTreeMap<_, _> = naive(&rows, |r| vec![r.id2.clone(), r.id4.to_string()])
        .into_iter()
        .map(|(k, g)| {
            let (xs, ys): (Vec<f64>, Vec<f64>) =
                g.iter().map(|r| (r.v1 as f64, r.v2 as f64)).unzip();
            let (mx, my) = (
                xs.iter().sum::<f64>() / xs.len() as f64,
                ys.iter().sum::<f64>() / ys.len() as f64,
            );
            let c: f64 = xs.iter().zip(&ys).map(|(a, b)| (a - mx) * (b - my)).sum();
            let vx: f64 = xs.iter().map(|a| (a - mx).powi(2)).sum();
            let vy: f64 = ys.iter().map(|b| (b - my).powi(2)).sum();
            (k, vec![(c / (vx * vy).sqrt()).powi(2)])
        })
        .collect();
    close(&got, &want);
    // q10: sum v3, count by all six ids
    let lf = x
        .group_by([
            col("id1"),
            col("id2"),
            col("id3"),
            col("id4"),
            col("id5"),
            col("id6"),
        ])
        .agg([col("v3").sum(), count_star()]);
    let got_rows = common::rows(&lf);
    let mut seen = HashSet::new();
    let total: i64 = got_rows
        .iter()
        .map(|r| r.rsplit('|').next().unwrap().parse::<i64>().unwrap())
        .sum();
    for r in &got_rows {
        assert!(seen.insert(r.clone()));
    }
    assert_eq!(total as usize, N);
    let distinct: HashSet<(String, String, String, i64, i64)> = rows
        .iter()
        .map(|r| (r.id1.clone(), r.id2.clone(), r.id3.clone(), r.id4, r.id6))
        .collect();
    assert!(got_rows.len() >= distinct.len());
}

#[test]
fn join_q1_to_q5() {
    let tables: HashMap<&str, Vec<RecordBatch>> = h2o_join(20_000).unwrap().into_iter().collect();
    let lf = |name: &str| LazyFrame::from_batches(tables[name].clone()).unwrap();
    let count = |b: &[RecordBatch], col: usize| -> HashMap<i64, usize> {
        let mut m = HashMap::new();
        for batch in b {
            for v in batch.column(col).as_primitive::<Int64Type>().values() {
                *m.entry(*v).or_default() += 1;
            }
        }
        m
    };
    let x_keys = |col: usize| -> Vec<i64> {
        tables["x"]
            .iter()
            .flat_map(|b| b.column(col).as_primitive::<Int64Type>().values().to_vec())
            .collect()
    };
    // Expected inner join size: sum over x rows of matches on the right.
    let expect_inner = |xcol: usize, right: &str, rcol: usize| -> usize {
        let m = count(&tables[right], rcol);
        x_keys(xcol)
            .iter()
            .map(|k| m.get(k).copied().unwrap_or(0))
            .sum()
    };
    // q1: x inner join small on id1
    let q1 = lf("x")
        .join(&lf("small"), [col("id1")], [col("id1")], JoinType::Inner)
        .collect()
        .unwrap();
    assert_eq!(q1.num_rows(), expect_inner(0, "small", 0));
    // q2: x inner join medium on id2
    let q2 = lf("x")
        .join(&lf("medium"), [col("id2")], [col("id2")], JoinType::Inner)
        .collect()
        .unwrap();
    assert_eq!(q2.num_rows(), expect_inner(1, "medium", 1));
    // q3: x left join medium on id2: unmatched x rows appear once
    let q3 = lf("x")
        .join(&lf("medium"), [col("id2")], [col("id2")], JoinType::Left)
        .collect()
        .unwrap();
    let m = count(&tables["medium"], 1);
    let expected: usize = x_keys(1)
        .iter()
        .map(|k| m.get(k).copied().unwrap_or(1))
        .sum();
    assert_eq!(q3.num_rows(), expected);
    // q4: x inner join medium on id5 (string key)
    let q4 = lf("x")
        .join(&lf("medium"), [col("id5")], [col("id5")], JoinType::Inner)
        .collect()
        .unwrap();
    assert_eq!(q4.num_rows(), expect_inner(1, "medium", 1));
    // q5: x inner join big on id3
    let q5 = lf("x")
        .join(&lf("big"), [col("id3")], [col("id3")], JoinType::Inner)
        .collect()
        .unwrap();
    assert_eq!(q5.num_rows(), expect_inner(2, "big", 2));
    // Payload check on q1: every output row's v2 belongs to its id1 in `small`.
    let small: HashMap<i64, f64> = tables["small"]
        .iter()
        .flat_map(|b| {
            let k = b.column(0).as_primitive::<Int64Type>().values().to_vec();
            let v = b.column(2).as_primitive::<Float64Type>().values().to_vec();
            k.into_iter().zip(v)
        })
        .collect();
    let ids = q1.column("id1").unwrap();
    let v2 = q1.column("v2").unwrap();
    for (k, v) in ids
        .as_primitive::<Int64Type>()
        .values()
        .iter()
        .zip(v2.as_primitive::<Float64Type>().values())
    {
        assert_eq!(small[k], *v);
    }
}

#[test]
fn a_group_by_table_of_zero_groups_is_refused() {
    let e = h2o_groupby(100, 0).unwrap_err().to_string();
    assert!(e.contains("at least 1"), "{e}");
    // One group is the smallest table: every id column has one value.
    let rows = to_rows(&h2o_groupby(100, 1).unwrap());
    assert!(
        rows.iter()
            .all(|r| r.id1 == rows[0].id1 && r.id4 == rows[0].id4)
    );
}
