"""The 22 TPC-H queries in idiomatic, vectorized pandas (validation
parameters, as in queries/tpch). Tables come from `load`, with decimals as
float64 and dates as datetime64; each query returns the columns of the SQL
version in its order, so results compare cell by cell with DuckDB's."""
import pandas as pd

TS = pd.Timestamp


def load(data):
    """Reads every table; returns {name: DataFrame}."""
    frames = {}
    for f in sorted(data.glob("*.parquet")):
        df = pd.read_parquet(f)
        for c in df.columns:
            s = df[c]
            if s.dtype == object and len(s) and s.iloc[0].__class__.__name__ == "Decimal":
                df[c] = s.astype("float64")
            elif str(s.dtype).startswith("decimal"):
                df[c] = s.astype("float64")
            elif s.dtype == object and len(s) and s.iloc[0].__class__.__name__ == "date":
                df[c] = pd.to_datetime(s)
            elif str(s.dtype).startswith("date32"):
                df[c] = pd.to_datetime(s.astype(str))
        frames[f.stem] = df
    return frames


def _date(s):
    return s.dt.date


def q01(t):
    l = t["lineitem"]
    l = l[l.l_shipdate <= TS("1998-09-02")]
    disc = l.l_extendedprice * (1 - l.l_discount)
    g = l.assign(disc=disc, charge=disc * (1 + l.l_tax)).groupby(["l_returnflag", "l_linestatus"], as_index=False)
    r = g.agg(
        sum_qty=("l_quantity", "sum"), sum_base_price=("l_extendedprice", "sum"), sum_disc_price=("disc", "sum"),
        sum_charge=("charge", "sum"), avg_qty=("l_quantity", "mean"), avg_price=("l_extendedprice", "mean"),
        avg_disc=("l_discount", "mean"), count_order=("l_quantity", "size"),
    )
    return r.sort_values(["l_returnflag", "l_linestatus"])


def _europe_suppliers(t, region):
    n = t["nation"].merge(t["region"][t["region"].r_name == region], left_on="n_regionkey", right_on="r_regionkey")
    return t["supplier"].merge(n, left_on="s_nationkey", right_on="n_nationkey")


def q02(t):
    p = t["part"]
    p = p[(p.p_size == 15) & p.p_type.str.endswith("BRASS")]
    ps = t["partsupp"].merge(_europe_suppliers(t, "EUROPE"), left_on="ps_suppkey", right_on="s_suppkey")
    best = ps.groupby("ps_partkey", as_index=False).ps_supplycost.min()
    j = p.merge(ps, left_on="p_partkey", right_on="ps_partkey").merge(best, on=["ps_partkey", "ps_supplycost"])
    j = j.sort_values(["s_acctbal", "n_name", "s_name", "p_partkey"], ascending=[False, True, True, True]).head(100)
    return j[["s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment"]]


def q03(t):
    c, o, l = t["customer"], t["orders"], t["lineitem"]
    d = TS("1995-03-15")
    c = c[c.c_mktsegment == "BUILDING"][["c_custkey"]]
    o = o[o.o_orderdate < d][["o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"]]
    l = l[l.l_shipdate > d][["l_orderkey", "l_extendedprice", "l_discount"]]
    j = c.merge(o, left_on="c_custkey", right_on="o_custkey").merge(l, left_on="o_orderkey", right_on="l_orderkey")
    j["revenue"] = j.l_extendedprice * (1 - j.l_discount)
    r = j.groupby(["l_orderkey", "o_orderdate", "o_shippriority"], as_index=False).revenue.sum()
    r = r.sort_values(["revenue", "o_orderdate"], ascending=[False, True]).head(10)
    r["o_orderdate"] = _date(r.o_orderdate)
    return r[["l_orderkey", "revenue", "o_orderdate", "o_shippriority"]]


def q04(t):
    o, l = t["orders"], t["lineitem"]
    o = o[(o.o_orderdate >= TS("1993-07-01")) & (o.o_orderdate < TS("1993-10-01"))]
    late = l.loc[l.l_commitdate < l.l_receiptdate, "l_orderkey"].unique()
    o = o[o.o_orderkey.isin(late)]
    r = o.groupby("o_orderpriority", as_index=False).size().rename(columns={"size": "order_count"})
    return r.sort_values("o_orderpriority")


def q05(t):
    s = _europe_suppliers(t, "ASIA")
    o = t["orders"]
    o = o[(o.o_orderdate >= TS("1994-01-01")) & (o.o_orderdate < TS("1995-01-01"))]
    j = (t["customer"].merge(o, left_on="c_custkey", right_on="o_custkey")
         .merge(t["lineitem"], left_on="o_orderkey", right_on="l_orderkey")
         .merge(s, left_on=["l_suppkey", "c_nationkey"], right_on=["s_suppkey", "s_nationkey"]))
    j["revenue"] = j.l_extendedprice * (1 - j.l_discount)
    return j.groupby("n_name", as_index=False).revenue.sum().sort_values("revenue", ascending=False)


def q06(t):
    l = t["lineitem"]
    m = ((l.l_shipdate >= TS("1994-01-01")) & (l.l_shipdate < TS("1995-01-01")) & (l.l_discount >= 0.05)
         & (l.l_discount <= 0.07) & (l.l_quantity < 24))
    return pd.DataFrame({"revenue": [(l.l_extendedprice[m] * l.l_discount[m]).sum()]})


def q07(t):
    n = t["nation"][t["nation"].n_name.isin(["FRANCE", "GERMANY"])]
    s = t["supplier"].merge(n, left_on="s_nationkey", right_on="n_nationkey")[["s_suppkey", "n_name"]]
    c = t["customer"].merge(n, left_on="c_nationkey", right_on="n_nationkey")[["c_custkey", "n_name"]]
    l = t["lineitem"]
    l = l[(l.l_shipdate >= TS("1995-01-01")) & (l.l_shipdate <= TS("1996-12-31"))]
    j = (l.merge(s, left_on="l_suppkey", right_on="s_suppkey")
         .merge(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
         .merge(c, left_on="o_custkey", right_on="c_custkey", suffixes=("_s", "_c")))
    j = j[j.n_name_s != j.n_name_c]
    j = j.assign(supp_nation=j.n_name_s, cust_nation=j.n_name_c, l_year=j.l_shipdate.dt.year,
                 volume=j.l_extendedprice * (1 - j.l_discount))
    r = j.groupby(["supp_nation", "cust_nation", "l_year"], as_index=False).volume.sum()
    return r.rename(columns={"volume": "revenue"}).sort_values(["supp_nation", "cust_nation", "l_year"])


def q08(t):
    p = t["part"][t["part"].p_type == "ECONOMY ANODIZED STEEL"][["p_partkey"]]
    n1 = t["nation"].merge(t["region"][t["region"].r_name == "AMERICA"], left_on="n_regionkey", right_on="r_regionkey")
    c = t["customer"].merge(n1[["n_nationkey"]], left_on="c_nationkey", right_on="n_nationkey")[["c_custkey"]]
    o = t["orders"]
    o = o[(o.o_orderdate >= TS("1995-01-01")) & (o.o_orderdate <= TS("1996-12-31"))]
    s = t["supplier"].merge(t["nation"], left_on="s_nationkey", right_on="n_nationkey")[["s_suppkey", "n_name"]]
    j = (t["lineitem"].merge(p, left_on="l_partkey", right_on="p_partkey")
         .merge(o, left_on="l_orderkey", right_on="o_orderkey")
         .merge(c, left_on="o_custkey", right_on="c_custkey")
         .merge(s, left_on="l_suppkey", right_on="s_suppkey"))
    volume = j.l_extendedprice * (1 - j.l_discount)
    j = j.assign(o_year=j.o_orderdate.dt.year, volume=volume, brazil=volume.where(j.n_name == "BRAZIL", 0.0))
    r = j.groupby("o_year", as_index=False)[["brazil", "volume"]].sum()
    r["mkt_share"] = r.brazil / r.volume
    return r[["o_year", "mkt_share"]].sort_values("o_year")


def q09(t):
    p = t["part"][t["part"].p_name.str.contains("green", regex=False)][["p_partkey"]]
    j = (t["lineitem"].merge(p, left_on="l_partkey", right_on="p_partkey")
         .merge(t["partsupp"], left_on=["l_suppkey", "l_partkey"], right_on=["ps_suppkey", "ps_partkey"])
         .merge(t["supplier"], left_on="l_suppkey", right_on="s_suppkey")
         .merge(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
         .merge(t["nation"], left_on="s_nationkey", right_on="n_nationkey"))
    j = j.assign(nation=j.n_name, o_year=j.o_orderdate.dt.year,
                 amount=j.l_extendedprice * (1 - j.l_discount) - j.ps_supplycost * j.l_quantity)
    r = j.groupby(["nation", "o_year"], as_index=False).amount.sum().rename(columns={"amount": "sum_profit"})
    return r.sort_values(["nation", "o_year"], ascending=[True, False])


def q10(t):
    o = t["orders"]
    o = o[(o.o_orderdate >= TS("1993-10-01")) & (o.o_orderdate < TS("1994-01-01"))]
    l = t["lineitem"][t["lineitem"].l_returnflag == "R"]
    j = (t["customer"].merge(o, left_on="c_custkey", right_on="o_custkey")
         .merge(l, left_on="o_orderkey", right_on="l_orderkey")
         .merge(t["nation"], left_on="c_nationkey", right_on="n_nationkey"))
    j["revenue"] = j.l_extendedprice * (1 - j.l_discount)
    keys = ["c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment"]
    r = j.groupby(keys, as_index=False).revenue.sum().sort_values("revenue", ascending=False).head(20)
    return r[["c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment"]]


def q11(t):
    n = t["nation"][t["nation"].n_name == "GERMANY"]
    s = t["supplier"].merge(n, left_on="s_nationkey", right_on="n_nationkey")[["s_suppkey"]]
    ps = t["partsupp"].merge(s, left_on="ps_suppkey", right_on="s_suppkey")
    ps = ps.assign(value=ps.ps_supplycost * ps.ps_availqty)
    r = ps.groupby("ps_partkey", as_index=False).value.sum()
    return r[r.value > ps.value.sum() * 0.0001].sort_values("value", ascending=False)


def q12(t):
    l = t["lineitem"]
    l = l[l.l_shipmode.isin(["MAIL", "SHIP"]) & (l.l_commitdate < l.l_receiptdate) & (l.l_shipdate < l.l_commitdate)
          & (l.l_receiptdate >= TS("1994-01-01")) & (l.l_receiptdate < TS("1995-01-01"))]
    j = t["orders"].merge(l, left_on="o_orderkey", right_on="l_orderkey")
    high = j.o_orderpriority.isin(["1-URGENT", "2-HIGH"])
    j = j.assign(high_line_count=high.astype("int64"), low_line_count=(~high).astype("int64"))
    r = j.groupby("l_shipmode", as_index=False)[["high_line_count", "low_line_count"]].sum()
    return r.sort_values("l_shipmode")


def q13(t):
    o = t["orders"]
    o = o[~o.o_comment.str.contains("special.*requests", regex=True)]
    counts = o.groupby("o_custkey").size()
    c_count = t["customer"].c_custkey.map(counts).fillna(0).astype("int64")
    r = c_count.value_counts().rename_axis("c_count").reset_index(name="custdist")
    return r.sort_values(["custdist", "c_count"], ascending=[False, False])


def q14(t):
    l = t["lineitem"]
    l = l[(l.l_shipdate >= TS("1995-09-01")) & (l.l_shipdate < TS("1995-10-01"))]
    j = l.merge(t["part"], left_on="l_partkey", right_on="p_partkey")
    rev = j.l_extendedprice * (1 - j.l_discount)
    promo = rev.where(j.p_type.str.startswith("PROMO"), 0.0).sum()
    return pd.DataFrame({"promo_revenue": [100.0 * promo / rev.sum()]})


def q15(t):
    l = t["lineitem"]
    l = l[(l.l_shipdate >= TS("1996-01-01")) & (l.l_shipdate < TS("1996-04-01"))]
    rev = (l.l_extendedprice * (1 - l.l_discount)).groupby(l.l_suppkey).sum().rename("total_revenue").reset_index()
    best = rev[rev.total_revenue == rev.total_revenue.max()]
    j = t["supplier"].merge(best, left_on="s_suppkey", right_on="l_suppkey")
    return j[["s_suppkey", "s_name", "s_address", "s_phone", "total_revenue"]].sort_values("s_suppkey")


def q16(t):
    p = t["part"]
    p = p[(p.p_brand != "Brand#45") & ~p.p_type.str.startswith("MEDIUM POLISHED") & p.p_size.isin([49, 14, 23, 45, 19, 3, 36, 9])]
    bad = t["supplier"].loc[t["supplier"].s_comment.str.contains("Customer.*Complaints", regex=True), "s_suppkey"]
    ps = t["partsupp"][~t["partsupp"].ps_suppkey.isin(bad)]
    j = ps.merge(p, left_on="ps_partkey", right_on="p_partkey")
    r = j.groupby(["p_brand", "p_type", "p_size"], as_index=False).ps_suppkey.nunique()
    r = r.rename(columns={"ps_suppkey": "supplier_cnt"})
    return r.sort_values(["supplier_cnt", "p_brand", "p_type", "p_size"], ascending=[False, True, True, True])


def q17(t):
    p = t["part"]
    p = p[(p.p_brand == "Brand#23") & (p.p_container == "MED BOX")][["p_partkey"]]
    l = t["lineitem"].merge(p, left_on="l_partkey", right_on="p_partkey")
    limit = 0.2 * l.groupby("l_partkey").l_quantity.transform("mean")
    price = l.l_extendedprice[l.l_quantity < limit]
    # SQL's sum over no rows is NULL.
    return pd.DataFrame({"avg_yearly": [price.sum() / 7.0 if len(price) else None]})


def q18(t):
    l = t["lineitem"]
    qty = l.groupby("l_orderkey").l_quantity.sum()
    big = qty[qty > 300].index
    o = t["orders"][t["orders"].o_orderkey.isin(big)]
    j = (o.merge(t["customer"], left_on="o_custkey", right_on="c_custkey")
         .merge(l[l.l_orderkey.isin(big)], left_on="o_orderkey", right_on="l_orderkey"))
    keys = ["c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice"]
    r = j.groupby(keys, as_index=False).l_quantity.sum()
    r = r.sort_values(["o_totalprice", "o_orderdate"], ascending=[False, True]).head(100)
    r["o_orderdate"] = _date(r.o_orderdate)
    return r


def q19(t):
    l = t["lineitem"]
    l = l[l.l_shipmode.isin(["AIR", "AIR REG"]) & (l.l_shipinstruct == "DELIVER IN PERSON")]
    j = l.merge(t["part"], left_on="l_partkey", right_on="p_partkey")

    def case(brand, containers, lo, size):
        return ((j.p_brand == brand) & j.p_container.isin(containers) & (j.l_quantity >= lo)
                & (j.l_quantity <= lo + 10) & (j.p_size >= 1) & (j.p_size <= size))

    m = (case("Brand#12", ["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 1, 5)
         | case("Brand#23", ["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10, 10)
         | case("Brand#34", ["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 20, 15))
    return pd.DataFrame({"revenue": [(j.l_extendedprice[m] * (1 - j.l_discount[m])).sum()]})


def q20(t):
    forest = t["part"].loc[t["part"].p_name.str.startswith("forest"), "p_partkey"]
    l = t["lineitem"]
    l = l[(l.l_shipdate >= TS("1994-01-01")) & (l.l_shipdate < TS("1995-01-01"))]
    shipped = l.groupby(["l_partkey", "l_suppkey"], as_index=False).l_quantity.sum()
    ps = t["partsupp"][t["partsupp"].ps_partkey.isin(forest)]
    ps = ps.merge(shipped, left_on=["ps_partkey", "ps_suppkey"], right_on=["l_partkey", "l_suppkey"])
    keep = ps.loc[ps.ps_availqty > 0.5 * ps.l_quantity, "ps_suppkey"].unique()
    n = t["nation"][t["nation"].n_name == "CANADA"]
    s = t["supplier"].merge(n, left_on="s_nationkey", right_on="n_nationkey")
    s = s[s.s_suppkey.isin(keep)]
    return s[["s_name", "s_address"]].sort_values("s_name")


def q21(t):
    l = t["lineitem"][["l_orderkey", "l_suppkey", "l_receiptdate", "l_commitdate"]]
    late = l[l.l_receiptdate > l.l_commitdate]
    # Orders with more than one supplier, and with exactly one late supplier.
    suppliers = l.groupby("l_orderkey").l_suppkey.nunique()
    late_suppliers = late.groupby("l_orderkey").l_suppkey.nunique()
    multi = suppliers[suppliers > 1].index
    only_late = late_suppliers[late_suppliers == 1].index
    o = t["orders"]
    f = o.loc[o.o_orderstatus == "F", "o_orderkey"]
    n = t["nation"][t["nation"].n_name == "SAUDI ARABIA"]
    s = t["supplier"].merge(n, left_on="s_nationkey", right_on="n_nationkey")[["s_suppkey", "s_name"]]
    j = late[late.l_orderkey.isin(multi) & late.l_orderkey.isin(only_late) & late.l_orderkey.isin(f)]
    j = j.merge(s, left_on="l_suppkey", right_on="s_suppkey")
    r = j.groupby("s_name", as_index=False).size().rename(columns={"size": "numwait"})
    return r.sort_values(["numwait", "s_name"], ascending=[False, True]).head(100)


def q22(t):
    c = t["customer"]
    code = c.c_phone.str[:2]
    codes = ["13", "31", "23", "29", "30", "18", "17"]
    c = c.assign(cntrycode=code)[code.isin(codes)]
    avg = c.loc[c.c_acctbal > 0.0, "c_acctbal"].mean()
    c = c[(c.c_acctbal > avg) & ~c.c_custkey.isin(t["orders"].o_custkey)]
    r = c.groupby("cntrycode", as_index=False).agg(numcust=("c_acctbal", "size"), totacctbal=("c_acctbal", "sum"))
    return r.sort_values("cntrycode")


QUERIES = {f"q{i:02}": globals()[f"q{i:02}"] for i in range(1, 23)}
