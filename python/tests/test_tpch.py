"""TPC-H through the package gives the command line's answers."""

import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc
import pytest

import sloth

QUERIES = sorted((Path(__file__).resolve().parents[2] / "queries" / "tpch").glob("q*.sql"))


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.stem)
def test_tpch_answer_equals_the_cli(query, tpch_dir, sloth_cli, tmp_path):
    text = query.read_text()
    ours = sloth.sql(text, data=tpch_dir).collect().to_arrow()
    out = tmp_path / "cli.arrow"
    subprocess.run(
        [str(sloth_cli), "sql", "--data", str(tpch_dir), "-f", str(query), "--output", str(out), "--format", "arrow"],
        check=True,
        capture_output=True,
    )
    with pa.ipc.open_file(out) as reader:
        cli = reader.read_all()
    assert ours.num_rows > 0
    assert ours.schema == cli.schema
    assert ours.combine_chunks().equals(cli.combine_chunks())


def test_the_same_query_through_the_lazy_api(tpch_dir):
    from sloth import col

    lineitem = sloth.scan_parquet(tpch_dir / "lineitem.parquet")
    lazy = (
        lineitem.filter(col("l_shipdate") <= sloth.lit("1998-09-02").cast("date"))
        .group_by("l_returnflag", "l_linestatus")
        .agg(col("l_quantity").sum().alias("sum_qty"), sloth.count().alias("count_order"))
        .sort("l_returnflag", "l_linestatus")
        .collect()
        .to_arrow()
    )
    sql = sloth.sql(
        "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, count(*) as count_order "
        "from lineitem where l_shipdate <= date '1998-09-02' "
        "group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus",
        data=tpch_dir,
    ).collect().to_arrow()
    assert lazy.equals(sql)
