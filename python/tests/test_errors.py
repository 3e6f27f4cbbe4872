"""Errors become Python exceptions with the command line's message."""

import pyarrow as pa
import pytest

import sloth
from sloth import col
from sloth.exceptions import (
    ColumnNotFoundError,
    SlothFileNotFoundError,
    SqlSyntaxError,
    TableNotFoundError,
)


def test_a_sql_syntax_error_names_the_position():
    with pytest.raises(SqlSyntaxError, match=r"Line: 1, Column: \d+") as err:
        sloth.sql("select * fromm t", tables={"t": pa.table({"a": [1]})})
    assert isinstance(err.value, ValueError)
    assert isinstance(err.value, sloth.SlothError)


def test_a_missing_file_is_file_not_found():
    with pytest.raises(FileNotFoundError, match="cannot open"):
        sloth.scan_parquet("/no/such/file.parquet")
    with pytest.raises(SlothFileNotFoundError):
        sloth.sql("select 1", data="/no/such/dir")


def test_an_unknown_column_suggests_the_near_miss():
    frame = sloth.from_arrow(pa.table({"units": [1], "price": [2.0]}))
    with pytest.raises(ColumnNotFoundError, match="did you mean 'units'") as err:
        frame.select(col("unit")).collect()
    assert isinstance(err.value, LookupError)


def test_an_unknown_table_lists_the_registered_ones():
    with pytest.raises(TableNotFoundError, match="registered tables: t"):
        sloth.sql("select * from u", tables={"t": pa.table({"a": [1]})})


def test_a_type_error_in_a_query():
    frame = sloth.from_arrow(pa.table({"s": ["x"], "n": [1]}))
    with pytest.raises(sloth.SlothError, match="type mismatch"):
        frame.select(col("s") - col("n")).collect()


def test_bad_arguments():
    frame = sloth.from_arrow(pa.table({"a": [1]}))
    with pytest.raises(sloth.SlothError, match="unknown join kind"):
        frame.join(frame, on="a", how="sideways")
    with pytest.raises(ValueError, match="needs keys"):
        frame.join(frame)
    with pytest.raises(ValueError, match="separator must be one"):
        sloth.scan_csv("x.csv", separator=";;")
    with pytest.raises(sloth.SlothError, match="not a type name"):
        col("a").cast("no such type")
