"""sloth from Python: TPC-H through the `sloth` package against pandas in the
same process, the binding's overhead against the command line, and the cost
of handing results to pandas and Polars.

    pip install ./python pandas polars duckdb
    python benches/compare/python_package.py --data data/tpch-sf1

Every figure is the median of --runs hot runs in this process. The TPC-H
answers of sloth and pandas are compared cell by cell (floats to 1e-6).
"""
import argparse
import json
import math
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import pyarrow as pa

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))


def median_time(work, runs):
    """Median wall time of `runs` calls of `work` after one warm-up call;
    returns (seconds, the warm-up's result)."""
    result = work()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def rss_mb():
    """This process's resident memory now, in MB."""
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def same_cell(a, b):
    if a == b or (a is None and b is None):
        return True
    if hasattr(a, "isoformat") or hasattr(b, "isoformat"):
        return str(a)[:10] == str(b)[:10]
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-6)
    except (TypeError, ValueError):
        return str(a).strip() == str(b).strip()


def same_answer(ours: pa.Table, theirs: pa.Table) -> str:
    if ours.num_rows != theirs.num_rows:
        return f"rows {ours.num_rows} vs {theirs.num_rows}"
    a = [list(r.values()) for r in ours.to_pylist()]
    b = [list(r.values()) for r in theirs.to_pylist()]
    key = lambda row: [str(c) for c in row]
    for x, y in zip(sorted(a, key=key), sorted(b, key=key)):
        if len(x) != len(y) or not all(same_cell(p, q) for p, q in zip(x, y)):
            return "MISMATCH"
    return "ok"


def tpch(data, runs, cli):
    import pandas_tpch
    import sloth

    queries = {q.stem: q.read_text() for q in sorted((ROOT / "queries/tpch").glob("q*.sql"))}
    start = time.perf_counter()
    frames = pandas_tpch.load(data)
    pandas_load = time.perf_counter() - start
    cli_times = {}
    if cli:
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run(
                [cli, "bench", "--data", str(data), "--runs", str(runs), "--json", out.name, str(ROOT / "queries/tpch")],
                check=True,
                capture_output=True,
            )
            cli_times = parse_bench_json(json.loads(pathlib.Path(out.name).read_text()))
    print(f"TPC-H {data.name}: median of {runs} hot runs, seconds (pandas loaded the tables in {pandas_load:.1f} s)")
    print(f"{'query':6} {'sloth (Python)':>15} {'sloth CLI':>10} {'pandas':>8}  answers")
    totals = [0.0, 0.0, 0.0]
    for name, text in queries.items():
        # Planned once, as `sloth bench` plans each file once: the timed
        # part is the run and the hand-over of the result to pyarrow.
        planned = sloth.sql(text, data=data)
        ours, answer = median_time(lambda: planned.collect().to_arrow(), runs)
        theirs, pd_answer = median_time(lambda: pandas_tpch.QUERIES[name](frames), runs)
        check = same_answer(answer, pa.Table.from_pandas(pd_answer.reset_index(drop=True), preserve_index=False))
        on_cli = cli_times.get(name, float("nan"))
        totals = [totals[0] + ours, totals[1] + on_cli, totals[2] + theirs]
        print(f"{name:6} {ours:15.3f} {on_cli:10.3f} {theirs:8.3f}  {check}")
    print(f"{'total':6} {totals[0]:15.3f} {totals[1]:10.3f} {totals[2]:8.3f}")
    print(f"pandas / sloth: {totals[2] / totals[0]:.1f}x; Python package / CLI: {totals[0] / totals[1]:.3f}")


def parse_bench_json(report):
    """{query: median seconds} from `sloth bench --json`."""
    return {row["query"]: float(row["median_s"]) for row in report}


def wide_table(rows):
    """`rows` rows, 10 columns: ints, floats, strings, dates."""
    import numpy as np

    rng = np.random.default_rng(42)
    columns = {}
    for i in range(4):
        columns[f"i{i}"] = rng.integers(0, 1_000_000, rows)
    for i in range(4):
        columns[f"f{i}"] = rng.random(rows)
    columns["s"] = pa.array(rng.integers(0, 1000, rows).astype(str))
    columns["d"] = pa.array(rng.integers(0, 20_000, rows).astype("int32")).cast(pa.date32())
    return pa.table(columns)


def conversions(rows, runs):
    import duckdb
    import polars as pl
    import sloth

    table = wide_table(rows)
    print(f"\nHanding over a {rows:,}-row, 10-column result (median of {runs}, seconds; RSS growth of the first call):")
    result = sloth.from_arrow(table).collect()
    polars_frame = pl.from_arrow(table)
    con = duckdb.connect()
    con.register("t", table)
    cases = [
        ("sloth .to_pandas()", result.to_pandas),
        ("Polars .to_pandas()", polars_frame.to_pandas),
        ("DuckDB .df() (runs the query too)", lambda: con.sql("select * from t").df()),
        ("sloth .to_arrow()", result.to_arrow),
        ("sloth .to_polars()", result.to_polars),
        ("sloth.from_polars(..).collect()", lambda: sloth.from_polars(polars_frame).collect()),
        ("sloth.from_arrow(..).collect()", lambda: sloth.from_arrow(table).collect()),
    ]
    for label, work in cases:
        before = rss_mb()
        kept = work()
        grown = rss_mb() - before
        del kept
        seconds, _ = median_time(work, runs)
        print(f"  {label:36} {seconds:8.3f}   +{grown:,.0f} MB")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT / "data/tpch-sf1"), help="TPC-H Parquet directory")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cli", default=str(ROOT / "target/release/sloth"), help="the sloth binary ('' to skip)")
    ap.add_argument("--rows", type=int, default=10_000_000, help="rows of the hand-over table")
    args = ap.parse_args()
    cli = args.cli if args.cli and pathlib.Path(args.cli).exists() else None
    tpch(pathlib.Path(args.data), args.runs, cli)
    conversions(args.rows, args.runs)


if __name__ == "__main__":
    main()
