"""Writes DuckDB's answers to queries/tpch/*.sql over a directory of TPC-H
Parquet files (as `sloth gen tpch` makes them), one CSV per query.

    python scripts/tpch_reference.py data/tpch-sf0.01 tests/data/tpch-sf0.01

Used to refresh the stored reference answers that tests/tpch.rs compares
against; CI does not need DuckDB.
"""
import pathlib
import sys

import duckdb

data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
con = duckdb.connect()
for f in sorted(data.glob("*.parquet")):
    con.execute(f"create view {f.stem} as select * from read_parquet('{f}')")
for q in sorted(pathlib.Path("queries/tpch").glob("q*.sql")):
    rel = con.sql(q.read_text())
    rel.write_csv(str(out / (q.stem + ".csv")))
    print(q.stem, len(rel.fetchall()), "rows")
print("duckdb", duckdb.__version__)
