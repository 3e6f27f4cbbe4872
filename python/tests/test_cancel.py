"""Ctrl-C stops a running query and the next query still runs."""

import _thread
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import sloth
from sloth import col


def long_query() -> sloth.LazyFrame:
    """Counting 10M distinct keys in 200 batches: many seconds of work,
    checked for cancellation between batches."""
    n = 50_000
    batches = [pa.record_batch({"k": np.arange(i * n, (i + 1) * n)}) for i in range(200)]
    frame = sloth.from_arrow(pa.Table.from_batches(batches))
    return frame.group_by((col("k") % 7).alias("g")).agg(col("k").n_unique().alias("n"))


def test_keyboard_interrupt_cancels_the_query_soon():
    query = long_query()
    timer = threading.Timer(0.3, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            query.collect()
    finally:
        timer.cancel()
    stopped_after = time.monotonic() - started
    assert stopped_after < 0.3 + 2.0, f"took {stopped_after:.2f} s"
    # The next query still runs.
    assert sloth.from_arrow(pa.table({"a": [1, 2]})).collect().height == 2
