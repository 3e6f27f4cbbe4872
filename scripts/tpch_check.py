"""Runs all TPC-H queries with sloth (the CLI) and DuckDB on the same Parquet
files, checks that the answers agree, and prints the times.

    python scripts/tpch_check.py data/tpch-sf1 [--sloth target/release/sloth] [--sloth-arg=--no-optimize]

Exit status 1 if any answer differs. Numbers compare with a relative
tolerance of 1e-9 (sloth's decimals are exact; DuckDB's averages are doubles).
"""
import argparse
import csv
import io
import pathlib
import subprocess
import sys
import time

import duckdb

p = argparse.ArgumentParser()
p.add_argument("data")
p.add_argument("--sloth", default="target/release/sloth")
p.add_argument("--sloth-arg", action="append", default=[])
p.add_argument("--queries", default="queries/tpch")
args = p.parse_args()

con = duckdb.connect()
for f in sorted(pathlib.Path(args.data).glob("*.parquet")):
    con.execute(f"create view {f.stem} as select * from read_parquet('{f}')")


def same(a, b):
    if a == b or (a == "" and b in ("", "NULL")):
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1.0)


failed = 0
total_sloth = total_duck = 0.0
print(f"{'query':6} {'rows':>6} {'sloth s':>9} {'duckdb s':>9}  result")
for q in sorted(pathlib.Path(args.queries).glob("q*.sql")):
    sql = q.read_text()
    t = time.perf_counter()
    duck = con.sql(sql).fetchall()
    t_duck = time.perf_counter() - t
    t = time.perf_counter()
    run = subprocess.run(
        [args.sloth, "sql", "--data", args.data, "--format", "csv", "-f", str(q), *args.sloth_arg],
        capture_output=True,
        text=True,
    )
    t_sloth = time.perf_counter() - t
    if run.returncode != 0:
        print(f"{q.stem:6} {'':>6} {'':>9} {t_duck:9.3f}  ERROR {run.stderr.strip()}")
        failed += 1
        continue
    rows = list(csv.reader(io.StringIO(run.stdout)))[1:]
    duck_rows = [["" if v is None else str(v) for v in r] for r in duck]
    ok = len(rows) == len(duck_rows) and all(
        len(a) == len(b) and all(same(x, y) for x, y in zip(a, b)) for a, b in zip(rows, duck_rows)
    )
    failed += not ok
    total_sloth += t_sloth
    total_duck += t_duck
    print(f"{q.stem:6} {len(rows):6} {t_sloth:9.3f} {t_duck:9.3f}  {'ok' if ok else 'MISMATCH'}")
print(f"{'total':6} {'':6} {total_sloth:9.3f} {total_duck:9.3f}  {failed} failed; duckdb {duckdb.__version__}")
print("(sloth times include process start and reading the files, DuckDB's run in-process on views)")
sys.exit(1 if failed else 0)
