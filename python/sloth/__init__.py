"""sloth: a lazy, Arrow-native DataFrame engine with a query optimizer.

Describe a query lazily, Polars style, or in SQL; sloth optimizes it and
runs it on all cores over Arrow columns, then hands the result to pyarrow,
pandas or Polars without copying::

    import sloth
    from sloth import col

    top = (
        sloth.scan_parquet("lineitem.parquet")
        .filter(col("l_quantity") > 45)
        .group_by("l_returnflag")
        .agg(col("l_extendedprice").sum().alias("revenue"))
        .sort("revenue", descending=True)
        .collect()
    )
    top.to_pandas()

    sloth.sql("select count(*) from nation", data="tpch/").collect()
"""

from __future__ import annotations

from typing import Any

from . import exceptions
from ._sloth import (
    DataFrame,
    Expr,
    GroupBy,
    LazyFrame,
    __version__,
    call,
    col,
    count,
    from_arrow,
    lit,
    scan_csv,
    scan_ipc,
    scan_parquet,
    sql,
    when,
)
from .exceptions import SlothError

__all__ = [
    "DataFrame",
    "Expr",
    "GroupBy",
    "LazyFrame",
    "SlothError",
    "__version__",
    "call",
    "col",
    "count",
    "exceptions",
    "from_arrow",
    "from_pandas",
    "from_polars",
    "lit",
    "scan_csv",
    "scan_ipc",
    "scan_parquet",
    "sql",
    "when",
]


def from_pandas(frame: Any) -> LazyFrame:
    """A LazyFrame over a pandas DataFrame (its index is not a column)."""
    import pyarrow as pa

    return from_arrow(pa.Table.from_pandas(frame, preserve_index=False))


def from_polars(frame: Any) -> LazyFrame:
    """A LazyFrame over a Polars DataFrame; its buffers are shared, not copied."""
    if hasattr(frame, "__arrow_c_stream__"):
        return from_arrow(frame)
    return from_arrow(frame.to_arrow())
