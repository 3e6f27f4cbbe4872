"""TPC-H under a memory limit: every query in a fresh process of its own,
sloth with `--memory-limit`, DuckDB with `SET memory_limit`, Polars with
its streaming engine (it has no limit to set), and sloth without a limit;
wall time and peak RSS from /usr/bin/time; every answer checked against
DuckDB's (the checker of benches/compare/compare.py).

    python3 benches/memory/tpch_limit.py --data data/tpch-sf10 --limit 4GB
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benches" / "compare"))
from compare import check  # noqa: E402

DUCKDB = """
import duckdb, pathlib, sys
data, limit, query, out = sys.argv[1:5]
con = duckdb.connect()
con.execute(f"SET memory_limit = '{limit}'")
for f in sorted(pathlib.Path(data).glob('*.parquet')):
    con.execute(f"create view {f.stem} as select * from read_parquet('{f}')")
con.sql(open(query).read()).write_csv(out)
"""

POLARS = """
import polars as pl, pathlib, sys
data, limit, query, out = sys.argv[1:5]
tables = {f.stem: pl.scan_parquet(f) for f in pathlib.Path(data).glob('*.parquet')}
ctx = pl.SQLContext(tables)
ctx.execute(open(query).read()).collect(engine='streaming').write_csv(out)
"""


def timed(cmd):
    """Runs `cmd`; returns (seconds, peak RSS in MB) or the error's last line."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, capture_output=True, text=True)
    last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        return None, (lines[-2] if len(lines) > 1 else last)[:80]
    secs, kb = last.split()
    return float(secs), int(kb) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--limit", default="4GB")
    ap.add_argument("--sloth", default=str(ROOT / "target" / "release" / "sloth"))
    ap.add_argument("--queries", default=str(ROOT / "queries" / "tpch"))
    ap.add_argument("--engines", default="sloth,duckdb,polars,sloth-unlimited")
    args = ap.parse_args()
    engines = args.engines.split(",")
    out = pathlib.Path(tempfile.mkdtemp(prefix="tpch-limit-"))
    for e in engines:
        (out / e).mkdir()
    rows = []
    totals = {e: 0.0 for e in engines}
    peaks = {e: 0.0 for e in engines}
    for q in sorted(pathlib.Path(args.queries).glob("q*.sql")):
        name = q.stem
        cells = {}
        for e in engines:
            csv = out / e / f"{name}.csv"
            if e.startswith("sloth"):
                limit = ["--memory-limit", args.limit] if e == "sloth" else []
                cmd = [args.sloth, "sql", *limit, "--data", args.data, "-f", str(q), "--output", str(csv)]
            else:
                cmd = [sys.executable, "-c", DUCKDB if e == "duckdb" else POLARS, args.data, args.limit, str(q), str(csv)]
            secs, mb = timed(cmd)
            if secs is None:
                cells[e] = f"failed: {mb}"
                continue
            totals[e] += secs
            peaks[e] = max(peaks[e], mb)
            cells[e] = f"{secs:.2f} s, {mb:,.0f} MB"
        # Answers against DuckDB's, once every engine has run.
        ordered = "order by" in q.read_text().lower()
        for e in engines:
            if e != "duckdb" and not cells[e].startswith("failed"):
                cells[e] += " " + check(out / "duckdb", out / e, name, ordered)
        rows.append(f"| {name} | " + " | ".join(cells[e] for e in engines) + " |")
        print(rows[-1], flush=True)
    print()
    print("| query | " + " | ".join(engines) + " |")
    print("|---|" + "---|" * len(engines))
    print("\n".join(rows))
    print("| total, peak | " + " | ".join(f"{totals[e]:.1f} s, {peaks[e]:,.0f} MB" for e in engines) + " |")


if __name__ == "__main__":
    main()
