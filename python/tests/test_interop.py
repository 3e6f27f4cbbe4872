"""Results to and from pyarrow, pandas and Polars, every type sloth supports."""

import datetime
import decimal

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import sloth
from sloth import col


@pytest.fixture()
def typed() -> pa.Table:
    """One column of each type, nulls in every column."""
    return pa.table(
        {
            "i8": pa.array([1, None, -3], pa.int8()),
            "i16": pa.array([None, 300, -3], pa.int16()),
            "i32": pa.array([70000, -1, None], pa.int32()),
            "i64": pa.array([2**40, None, -(2**40)], pa.int64()),
            "u32": pa.array([0, 4_000_000_000, None], pa.uint32()),
            "f32": pa.array([1.5, None, -0.25], pa.float32()),
            "f64": pa.array([None, 2.5, 1e300], pa.float64()),
            "b": pa.array([True, False, None]),
            "s": pa.array(["a", None, "ünïcode"]),
            "d": pa.array([datetime.date(2020, 2, 29), None, datetime.date(1969, 12, 31)]),
            "ts": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5, 6), None, datetime.datetime(1900, 1, 1)], pa.timestamp("us")),
            "dec": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-99999.99")], pa.decimal128(12, 2)),
        }
    )


def test_arrow_round_trip_keeps_types_and_values(typed):
    back = sloth.from_arrow(typed).collect().to_arrow()
    assert back.schema == typed.schema
    assert back.equals(typed)


def test_fixed_width_columns_are_not_copied(typed):
    back = sloth.from_arrow(typed).collect().to_arrow()
    for name in ("i64", "f64", "d"):
        before = typed.column(name).chunk(0).buffers()[1]
        after = back.column(name).chunk(0).buffers()[1]
        assert before.address == after.address, name


def test_an_empty_frame_keeps_its_schema(typed):
    empty = sloth.from_arrow(typed).filter(col("i64") > 2**50).collect()
    assert len(empty) == 0
    assert empty.to_arrow().schema == typed.schema
    assert list(empty.to_pandas().columns) == typed.column_names


def test_chunked_input_gives_every_row():
    chunked = pa.concat_tables([pa.table({"x": list(range(i * 10, i * 10 + 10))}) for i in range(5)])
    assert chunked.column("x").num_chunks == 5
    out = sloth.from_arrow(chunked).select(col("x").sum().alias("s")).collect()
    assert out.to_dict() == {"s": [sum(range(50))]}


def test_pandas_round_trip(typed):
    # Dates arrive as datetime64 (as from Polars), not Python date objects.
    pdf = typed.to_pandas(date_as_object=False)
    back = sloth.from_arrow(typed).collect().to_pandas()
    pd.testing.assert_frame_equal(back, pdf)
    again = sloth.from_pandas(back).collect().to_pandas()
    pd.testing.assert_frame_equal(again, pdf)
    objects = sloth.from_arrow(typed).collect().to_pandas(date_as_object=True)
    assert objects["d"][0] == datetime.date(2020, 2, 29)


def test_polars_round_trip(typed):
    pldf = pl.from_arrow(typed)
    back = sloth.from_polars(pldf).collect().to_polars()
    assert back.schema == pldf.schema
    assert back.equals(pldf)


def test_polars_strings_are_queried_like_any_string():
    pldf = pl.DataFrame({"k": ["a", "b", "a", None], "v": [1, 2, 3, 4]})
    out = sloth.from_polars(pldf).group_by("k").agg(col("v").sum().alias("v")).sort("k").collect()
    assert out.to_polars().to_dicts() == [
        {"k": None, "v": 4},
        {"k": "a", "v": 4},
        {"k": "b", "v": 2},
    ]


def test_any_arrow_stream_is_accepted():
    table = pa.table({"x": [1, 2, 3]})
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    assert sloth.from_arrow(reader).collect().height == 3
    assert sloth.from_arrow(table.to_batches()[0]).collect().height == 3
    # The result speaks the same protocol back.
    assert pa.table(sloth.from_arrow(table).collect()).equals(table)
    assert pl.DataFrame(sloth.from_arrow(table).collect()).height == 3


def test_non_arrow_input_is_a_type_error():
    with pytest.raises(TypeError, match="expected Arrow data"):
        sloth.from_arrow([1, 2, 3])
