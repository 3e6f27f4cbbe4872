//! TPC-H questions 1, 3, 5, 6 and 10 with the LazyFrame API (SQL twins in
//! `queries/tpch/`). Joins are written in the order a person would; the
//! optimizer reorders them and pushes the filters down as it does for SQL.

use super::table;
use crate::error::Result;
use crate::expr::{Expr, col, count_star, date, lit, number};
use crate::frame::LazyFrame;
use crate::plan::JoinType::Inner;
use crate::sql::SqlContext;

/// `from <= column < to` over dates (`YYYY-MM-DD`).
fn dates(column: &str, from: &str, to: &str) -> Expr {
    col(column)
        .gt_eq(lit(date(from)))
        .and(col(column).lt(lit(date(to))))
}

/// `l_extendedprice * (1 - l_discount)`.
fn disc_price() -> Expr {
    col("l_extendedprice") * (lit(1) - col("l_discount"))
}

/// Pricing summary report.
pub fn q01(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "lineitem")?
        // date '1998-12-01' - interval '90' day
        .filter(col("l_shipdate").lt_eq(lit(date("1998-09-02"))))
        .group_by([col("l_returnflag"), col("l_linestatus")])
        .agg([
            col("l_quantity").sum().alias("sum_qty"),
            col("l_extendedprice").sum().alias("sum_base_price"),
            disc_price().sum().alias("sum_disc_price"),
            (disc_price() * (lit(1) + col("l_tax")))
                .sum()
                .alias("sum_charge"),
            col("l_quantity").mean().alias("avg_qty"),
            col("l_extendedprice").mean().alias("avg_price"),
            col("l_discount").mean().alias("avg_disc"),
            count_star().alias("count_order"),
        ])
        .sort(
            vec![col("l_returnflag"), col("l_linestatus")],
            vec![false],
            false,
        ))
}

/// Shipping priority: the 10 unshipped orders of highest value.
pub fn q03(ctx: &SqlContext) -> Result<LazyFrame> {
    let cutoff = || lit(date("1995-03-15"));
    let customer = table(ctx, "customer")?.filter(col("c_mktsegment").eq(lit("BUILDING")));
    let orders = table(ctx, "orders")?.filter(col("o_orderdate").lt(cutoff()));
    let lineitem = table(ctx, "lineitem")?.filter(col("l_shipdate").gt(cutoff()));
    Ok(lineitem
        .join(&orders, [col("l_orderkey")], [col("o_orderkey")], Inner)
        .join(&customer, [col("o_custkey")], [col("c_custkey")], Inner)
        .group_by([col("l_orderkey"), col("o_orderdate"), col("o_shippriority")])
        .agg([disc_price().sum().alias("revenue")])
        .select([
            col("l_orderkey"),
            col("revenue"),
            col("o_orderdate"),
            col("o_shippriority"),
        ])
        .sort(
            vec![col("revenue"), col("o_orderdate")],
            vec![true, false],
            false,
        )
        .limit(10))
}

/// Local supplier volume: revenue per Asian nation in 1994 from suppliers
/// and customers of the same nation.
pub fn q05(ctx: &SqlContext) -> Result<LazyFrame> {
    let region = table(ctx, "region")?.filter(col("r_name").eq(lit("ASIA")));
    let orders = table(ctx, "orders")?.filter(dates("o_orderdate", "1994-01-01", "1995-01-01"));
    Ok(table(ctx, "lineitem")?
        .join(&orders, [col("l_orderkey")], [col("o_orderkey")], Inner)
        .join(
            &table(ctx, "customer")?,
            [col("o_custkey")],
            [col("c_custkey")],
            Inner,
        )
        .join(
            &table(ctx, "supplier")?,
            [col("l_suppkey"), col("c_nationkey")],
            [col("s_suppkey"), col("s_nationkey")],
            Inner,
        )
        .join(
            &table(ctx, "nation")?,
            [col("c_nationkey")],
            [col("n_nationkey")],
            Inner,
        )
        .join(&region, [col("n_regionkey")], [col("r_regionkey")], Inner)
        .group_by([col("n_name")])
        .agg([disc_price().sum().alias("revenue")])
        .sort(vec![col("revenue")], vec![true], false))
}

/// Forecasting revenue change: one year's small-quantity discounted lines.
pub fn q06(ctx: &SqlContext) -> Result<LazyFrame> {
    Ok(table(ctx, "lineitem")?
        .filter(
            dates("l_shipdate", "1994-01-01", "1995-01-01")
                .and(col("l_discount").between(lit(number("0.05")?), lit(number("0.07")?)))
                .and(col("l_quantity").lt(lit(24))),
        )
        .agg([(col("l_extendedprice") * col("l_discount"))
            .sum()
            .alias("revenue")]))
}

/// Returned item reporting: the 20 customers who returned the most in a quarter.
pub fn q10(ctx: &SqlContext) -> Result<LazyFrame> {
    let orders = table(ctx, "orders")?.filter(dates("o_orderdate", "1993-10-01", "1994-01-01"));
    let lineitem = table(ctx, "lineitem")?.filter(col("l_returnflag").eq(lit("R")));
    Ok(table(ctx, "customer")?
        .join(&orders, [col("c_custkey")], [col("o_custkey")], Inner)
        .join(&lineitem, [col("o_orderkey")], [col("l_orderkey")], Inner)
        .join(
            &table(ctx, "nation")?,
            [col("c_nationkey")],
            [col("n_nationkey")],
            Inner,
        )
        .group_by(
            [
                "c_custkey",
                "c_name",
                "c_acctbal",
                "c_phone",
                "n_name",
                "c_address",
                "c_comment",
            ]
            .map(col),
        )
        .agg([disc_price().sum().alias("revenue")])
        .select(
            [
                "c_custkey",
                "c_name",
                "revenue",
                "c_acctbal",
                "n_name",
                "c_address",
                "c_phone",
                "c_comment",
            ]
            .map(col),
        )
        .sort(vec![col("revenue")], vec![true], false)
        .limit(20))
}
