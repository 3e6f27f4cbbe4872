"""The LazyFrame and expression API, checked against pandas on the same data."""

import datetime

import pandas as pd
import pyarrow as pa
import pytest

import sloth
from sloth import col, lit, when


@pytest.fixture()
def sales() -> pa.Table:
    return pa.table(
        {
            "city": ["Oslo", "Lima", "Oslo", "Kyiv", "Lima", None],
            "units": [3, 5, 2, 7, None, 1],
            "price": [2.5, 1.0, 4.0, 0.5, 3.0, 9.0],
            "day": [datetime.date(2024, 1, d) for d in (1, 2, 3, 4, 5, 6)],
        }
    )


@pytest.fixture()
def frame(sales) -> sloth.LazyFrame:
    return sloth.from_arrow(sales)


def rows(df: sloth.DataFrame) -> list[dict]:
    return df.to_arrow().to_pylist()


def test_filter_select_and_arithmetic(frame, sales):
    out = (
        frame.filter(col("units") > 2, col("city") != "Kyiv")
        .select("city", (col("units") * col("price")).alias("revenue"))
        .sort("revenue", descending=True)
        .collect()
    )
    pdf = sales.to_pandas()
    expected = pdf[(pdf.units > 2) & (pdf.city != "Kyiv")].assign(revenue=lambda d: d.units * d.price)
    expected = expected.sort_values("revenue", ascending=False)[["city", "revenue"]]
    assert out.columns == ["city", "revenue"]
    assert rows(out) == expected.to_dict("records")


def test_group_by_agg_matches_pandas(frame, sales):
    out = (
        frame.group_by("city")
        .agg(
            col("units").sum().alias("units"),
            col("price").mean().alias("mean_price"),
            sloth.count().alias("n"),
        )
        .sort("city", nulls_last=True)
        .collect()
        .to_pandas()
    )
    pdf = sales.to_pandas()
    expected = (
        pdf.groupby("city", dropna=False)
        .agg(units=("units", "sum"), mean_price=("price", "mean"), n=("price", "size"))
        .reset_index()
        .sort_values("city", na_position="last")
        .reset_index(drop=True)
    )
    assert list(out["city"].fillna("<null>")) == list(expected["city"].fillna("<null>"))
    assert list(out["units"]) == list(expected["units"].astype("int64"))
    assert list(out["mean_price"]) == pytest.approx(list(expected["mean_price"]))
    assert list(out["n"]) == list(expected["n"])


def test_with_columns_when_then_otherwise_and_literals(frame):
    out = (
        frame.with_columns(
            when(col("units") >= 5).then(lit("big")).when(col("units") >= 2).then("mid").otherwise("small").alias("size"),
            (col("price") + 1).alias("price"),
            (10 - col("units")).alias("left"),
        )
        .sort("day")
        .collect()
    )
    got = rows(out)
    assert [r["size"] for r in got] == ["mid", "big", "mid", "big", "small", "small"]
    assert [r["price"] for r in got] == [3.5, 2.0, 5.0, 1.5, 4.0, 10.0]
    assert [r["left"] for r in got] == [7, 5, 8, 3, None, 9]
    assert out.columns == ["city", "units", "price", "day", "size", "left"]


def test_predicates_is_in_between_is_null_and_negation(frame):
    def cities(expr):
        out = frame.filter(expr).sort("day").select("city").collect()
        return [r["city"] for r in rows(out)]

    assert cities(col("city").is_in(["Oslo", "Kyiv"])) == ["Oslo", "Oslo", "Kyiv"]
    assert cities(~col("city").is_in(["Oslo", "Kyiv"])) == ["Lima", "Lima"]
    assert cities(col("units").is_between(2, 5)) == ["Oslo", "Lima", "Oslo"]
    assert cities(col("units").is_null()) == ["Lima"]
    assert cities(col("city").is_null()) == [None]
    assert cities((col("units") == 1) | (col("units") == 7)) == ["Kyiv", None]
    assert cities(col("day") >= datetime.date(2024, 1, 5)) == ["Lima", None]


def test_join_kinds(frame):
    capitals = sloth.from_arrow(pa.table({"city": ["Oslo", "Lima", "Rome"], "country": ["NO", "PE", "IT"]}))
    inner = frame.join(capitals, on="city").sort("day").collect()
    assert [r["country"] for r in rows(inner)] == ["NO", "PE", "NO", "PE"]
    assert inner.columns == ["city", "units", "price", "day", "country"]
    left = frame.join(capitals, on="city", how="left").sort("day").collect()
    assert [r["country"] for r in rows(left)] == ["NO", "PE", "NO", None, "PE", None]
    anti = frame.join(capitals, on="city", how="anti").sort("day").collect()
    assert [r["city"] for r in rows(anti)] == ["Kyiv", None]
    keyed = capitals.rename({"city": "town"})
    renamed = frame.join(keyed, left_on="city", right_on="town").collect()
    assert renamed.height == 4
    cross = frame.join(capitals, how="cross").collect()
    assert cross.height == 18


def test_sort_limit_slice_unique_drop_rename(frame):
    out = frame.sort("units", "price", descending=[True, False], nulls_last=True).limit(3).collect()
    assert [r["units"] for r in rows(out)] == [7, 5, 3]
    assert frame.head(2).collect().height == 2
    assert frame.sort("day").slice(4).collect().height == 2
    assert frame.select("city").unique().collect().height == 4
    assert frame.drop("price", "day").columns == ["city", "units"]
    assert frame.rename({"units": "qty"}).columns == ["city", "qty", "price", "day"]


def test_cast_and_registry_functions(frame):
    out = (
        frame.filter(col("city").is_not_null())
        .select(
            col("units").cast("double").alias("u"),
            col("price").cast(pa.int64()).alias("p"),
            sloth.call("upper", col("city")).alias("c"),
        )
        .sort("c", "u")
        .collect()
    )
    assert out.schema.field("u").type == pa.float64()
    assert out.schema.field("p").type == pa.int64()
    assert [r["c"] for r in rows(out)] == ["KYIV", "LIMA", "LIMA", "OSLO", "OSLO"]


def test_explain_profile_and_schema(frame):
    query = frame.filter(col("units") > 2).group_by("city").agg(col("price").sum())
    plan = query.explain()
    assert "Optimized plan" in plan and "Physical plan" in plan
    assert "Filter" in query.explain(optimized=False)
    assert "memory:" in query.profile()
    assert query.schema.names == ["city", "price"]


def test_settings_as_keyword_arguments(frame):
    out = frame.with_config(threads=1, optimizer=False, memory_limit="64MB").group_by("city").agg(col("units").sum()).collect()
    assert out.height == 4
    with pytest.raises(sloth.SlothError, match="invalid setting"):
        frame.with_config(no_such_setting=1)


def test_sql_over_frames_and_arrow_data(frame, sales):
    out = sloth.sql(
        "select city, sum(units) as units from s where price < 5 group by city order by city",
        tables={"s": sales},
    ).collect()
    assert rows(out) == [
        {"city": "Kyiv", "units": 7},
        {"city": "Lima", "units": 5},
        {"city": "Oslo", "units": 5},
    ]
    again = sloth.sql("select count(*) as n from f", tables={"f": frame}, threads=2).collect()
    assert rows(again) == [{"n": 6}]
    # $1, $2 read params; the same query with the values written in.
    with_params = sloth.sql(
        "select city, sum(units) as units from s where price < $1 and city <> $2 group by city order by city",
        tables={"s": sales},
        params=[5, "Lima"],
    ).collect()
    assert rows(with_params) == [{"city": "Kyiv", "units": 7}, {"city": "Oslo", "units": 5}]
    with pytest.raises(sloth.SlothError, match=r"no value for parameter \$2"):
        sloth.sql("select $1 + $2 as n", params=[1])


def test_a_collected_frame_queries_again_and_writes_files(frame, tmp_path):
    df = frame.collect()
    assert len(df) == 6 and df.shape == (6, 4) and df.width == 4
    assert df.lazy().filter(col("units") > 4).collect().height == 2
    df.write_parquet(tmp_path / "out.parquet")
    back = sloth.scan_parquet(tmp_path / "out.parquet").collect()
    # sloth's Parquet reader gives strings as views (string_view).
    assert back.schema.field("city").type == pa.string_view()
    assert back.to_arrow().to_pylist() == df.to_arrow().to_pylist()
    rows_written = frame.filter(col("units") > 2).sink_csv(str(tmp_path / "big.csv"))
    assert rows_written == 3
    assert sloth.scan_csv(tmp_path / "big.csv").collect().height == 3
    assert "shape: (6, 4)" in repr(df)


def test_an_expression_has_no_truth_value():
    with pytest.raises(TypeError, match="ambiguous"):
        bool(col("a") > 1)
    with pytest.raises(TypeError, match="cannot use a"):
        lit(object())


def test_csv_dates_in_a_given_format_read_as_dates(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text("day,at,amount\n31/12/2024,31/12/2024 23:15,5\n01/02/2025,01/02/2025 08:00,7\n")
    lf = sloth.scan_csv(path, date_format="%d/%m/%Y", timestamp_format="%d/%m/%Y %H:%M")
    rows = lf.sort("day").collect().to_arrow().to_pylist()
    assert rows[0]["day"] == datetime.date(2024, 12, 31)
    assert rows[1]["at"] == datetime.datetime(2025, 2, 1, 8, 0)
    # Without the format the same columns stay text.
    plain = sloth.scan_csv(path).collect().to_arrow()
    assert pa.types.is_string(plain.schema.field("day").type) or pa.types.is_string_view(
        plain.schema.field("day").type
    )
