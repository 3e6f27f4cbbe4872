//! db-benchmark (h2o.ai) group-by q1–q10 and join q1–q5 with the LazyFrame
//! API (SQL twins in `queries/h2o/`). Tables: `x` for group-by; `x`,
//! `small`, `medium`, `big` for joins.

use super::table;
use crate::error::Result;
use crate::expr::{Expr, SortKey, WindowFunc, col, corr, count_star, lit};
use crate::frame::LazyFrame;
use crate::plan::JoinType;
use crate::sql::SqlContext;

fn cols<const N: usize>(names: [&str; N]) -> [Expr; N] {
    names.map(col)
}

/// `sum(v1)` by `id1` (100 string groups).
pub fn groupby_q01(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "x")?
        .group_by([col("id1")])
        .agg([col("v1").sum().alias("v1")]))
}

/// `sum(v1)` by `id1, id2` (10K string groups).
pub fn groupby_q02(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "x")?
        .group_by(cols(["id1", "id2"]))
        .agg([col("v1").sum().alias("v1")]))
}

/// `sum(v1), mean(v3)` by `id3` (100K string groups).
pub fn groupby_q03(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "x")?
        .group_by([col("id3")])
        .agg([col("v1").sum().alias("v1"), col("v3").mean().alias("v3")]))
}

/// `mean(v1), mean(v2), mean(v3)` by `id4` (100 int groups).
pub fn groupby_q04(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "x")?
        .group_by([col("id4")])
        .agg(["v1", "v2", "v3"].map(|v| col(v).mean().alias(v))))
}

/// `sum(v1), sum(v2), sum(v3)` by `id6` (100K int groups).
pub fn groupby_q05(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "x")?
        .group_by([col("id6")])
        .agg(["v1", "v2", "v3"].map(|v| col(v).sum().alias(v))))
}

/// `median(v3), std(v3)` by `id4, id5` (10K int groups).
pub fn groupby_q06(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "x")?.group_by(cols(["id4", "id5"])).agg([
        col("v3").median().alias("median_v3"),
        col("v3").std().alias("sd_v3"),
    ]))
}

/// `max(v1) - min(v2)` by `id3` (100K string groups).
pub fn groupby_q07(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "x")?
        .group_by([col("id3")])
        .agg([(col("v1").max() - col("v2").min()).alias("range_v1_v2")]))
}

/// The two largest `v3` per `id6` (top-k per group by a window).
pub fn groupby_q08(ctx: &SqlContext) -> Result<LazyFrame> {
    let order = vec![SortKey {
        expr: col("v3"),
        descending: true,
        nulls_last: false,
    }];
    Ok(table(ctx, "x")?
        .filter(col("v3").is_not_null())
        .select([
            col("id6"),
            col("v3"),
            Expr::over(WindowFunc::RowNumber, vec![col("id6")], order).alias("order_v3"),
        ])
        .filter(col("order_v3").lt_eq(lit(2)))
        .select([col("id6"), col("v3").alias("largest2_v3")]))
}

/// `corr(v1, v2)²` by `id2, id4` (10K groups).
pub fn groupby_q09(ctx: &SqlContext) -> Result<LazyFrame> {
    let r = || corr(col("v1"), col("v2"));
    Ok(table(ctx, "x")?
        .group_by(cols(["id2", "id4"]))
        .agg([(r() * r()).alias("r2")]))
}

/// `sum(v3), count(*)` by all six ids (about 10M groups).
pub fn groupby_q10(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "x")?
        .group_by(cols(["id1", "id2", "id3", "id4", "id5", "id6"]))
        .agg([col("v3").sum().alias("v3"), count_star().alias("count")]))
}

/// `x` joined with `right` on `key` (kept once), then `x`'s columns, the
/// right side's `renamed` columns as `<side>_<name>`, and `v2`.
fn join_x(
    ctx: &SqlContext,
    right: &str,
    key: &str,
    renamed: &[&str],
    how: JoinType,
) -> Result<LazyFrame> {
    let x = table(ctx, "x")?;
    let x_columns = x.schema()?;
    let joined = x.join(&table(ctx, right)?, [col(key)], [col(key)], how);
    // Right columns whose names `x` has come out with the suffix `_right`.
    let mut out: Vec<Expr> = x_columns.fields().iter().map(|f| col(f.name())).collect();
    out.extend(renamed.iter().map(|&c| {
        let source = if x_columns.index_of(c).is_ok() {
            format!("{c}_right")
        } else {
            c.to_string()
        };
        col(source).alias(format!("{right}_{c}"))
    }));
    out.push(col("v2"));
    Ok(joined.select(out))
}

/// Inner join with `small` (90 rows) on `id1`.
pub fn join_q01(ctx: &SqlContext) -> Result<LazyFrame> {
    join_x(ctx, "small", "id1", &["id4"], JoinType::Inner)
}

/// Inner join with `medium` (90K rows) on `id2`.
pub fn join_q02(ctx: &SqlContext) -> Result<LazyFrame> {
    join_x(
        ctx,
        "medium",
        "id2",
        &["id1", "id4", "id5"],
        JoinType::Inner,
    )
}

/// Left join with `medium` on `id2`.
pub fn join_q03(ctx: &SqlContext) -> Result<LazyFrame> {
    join_x(ctx, "medium", "id2", &["id1", "id4", "id5"], JoinType::Left)
}

/// Inner join with `medium` on the factor `id5`.
pub fn join_q04(ctx: &SqlContext) -> Result<LazyFrame> {
    join_x(
        ctx,
        "medium",
        "id5",
        &["id1", "id2", "id4"],
        JoinType::Inner,
    )
}

/// Inner join with `big` (as many rows as `x`) on `id3`.
pub fn join_q05(ctx: &SqlContext) -> Result<LazyFrame> {
    join_x(
        ctx,
        "big",
        "id3",
        &["id1", "id2", "id4", "id5", "id6"],
        JoinType::Inner,
    )
}
