"""A group-by with tens of millions of distinct keys and a join of two
inputs of a hundred million rows, under a memory limit: the work that
cannot fit and must spill. Each query runs in a fresh process per
engine: sloth with `--memory-limit`, DuckDB with `SET memory_limit`, and
Polars' streaming engine (it has no limit to set); wall time and peak
RSS from /usr/bin/time; every answer is one row of checksums, compared
with DuckDB's.

    python3 benches/memory/large_keys.py --make data/large-keys
    python3 benches/memory/large_keys.py --data data/large-keys --limit 2GB

The data (DuckDB writes it): `groups.parquet`, 2 x KEYS rows whose key
`k` takes each of KEYS values twice in a scattered order, and
`left.parquet` / `right.parquet`, JOIN_ROWS rows each whose `id` is a
permutation of 0..JOIN_ROWS, so the join matches every row once.
"""
import argparse
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benches" / "memory"))
# The engines' runners, shared with the TPC-H suite.
from tpch_limit import DUCKDB, POLARS, timed  # noqa: E402

# Multipliers coprime with the key counts, so that (i * M) % n is a
# permutation of 0..n: every key occurs, in an order with no locality.
SCATTER = [2654435761, 40503]

QUERIES = {
    "group-by": "select count(*) as groups, sum(s) as total, min(s) as lo, max(s) as hi, sum(k % 7 * s) as mixed "
    "from (select k, sum(v) as s from groups group by k) t",
    "join": "select count(*) as n, sum(l.a) as a, sum(r.b) as b, sum((l.a * 3 + r.b) % 1000) as mixed "
    "from left_rows l join right_rows r on l.id = r.id",
}


def make(out: pathlib.Path, keys: int, join_rows: int) -> None:
    import duckdb

    for n in (keys, join_rows):
        for m in SCATTER:
            assert all(n % p or m % p for p in (2, 3, 5, 7, 11, 13)), "a multiplier must be coprime with the count"
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute(
        f"copy (select (i * {SCATTER[0]}) % {keys} as k, i % 1000 as v from range({2 * keys}) t(i)) "
        f"to '{out / 'groups.parquet'}' (format parquet)"
    )
    for name, m, col in (("left_rows", SCATTER[0], "a"), ("right_rows", SCATTER[1], "b")):
        con.execute(
            f"copy (select (i * {m}) % {join_rows} as id, i % 997 as {col} from range({join_rows}) t(i)) "
            f"to '{out / (name + '.parquet')}' (format parquet)"
        )


def answer(path: pathlib.Path) -> list[float]:
    lines = path.read_text().strip().splitlines()
    return [float(x) for x in lines[1].split(",")]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--make", metavar="DIR")
    ap.add_argument("--keys", type=int, default=50_000_000)
    ap.add_argument("--join-rows", type=int, default=100_000_000)
    ap.add_argument("--data")
    ap.add_argument("--limit", default="2GB")
    ap.add_argument("--sloth", default=str(ROOT / "target" / "release" / "sloth"))
    ap.add_argument("--engines", default="sloth,duckdb,polars")
    ap.add_argument("--queries", default=",".join(QUERIES))
    args = ap.parse_args()
    if args.make:
        make(pathlib.Path(args.make), args.keys, args.join_rows)
        return 0
    engines = args.engines.split(",")
    out = pathlib.Path(tempfile.mkdtemp(prefix="large-keys-"))
    bad = 0
    print(f"| query | {' | '.join(engines)} |")
    print("|---|" + "---|" * len(engines))
    for name in args.queries.split(","):
        sql = out / f"{name}.sql"
        sql.write_text(QUERIES[name])
        cells, answers = {}, {}
        for e in engines:
            csv = out / f"{name}-{e}.csv"
            if e == "sloth":
                cmd = [args.sloth, "sql", "--memory-limit", args.limit, "--data", args.data, "-f", str(sql)]
                cmd += ["--output", str(csv)]
            else:
                script = DUCKDB if e == "duckdb" else POLARS
                cmd = [sys.executable, "-c", script, args.data, args.limit, str(sql), str(csv)]
            secs, mb = timed(cmd)
            if secs is None:
                cells[e] = f"failed: {mb}"
                continue
            answers[e] = answer(csv)
            cells[e] = f"{secs:.1f} s, {mb:,.0f} MB"
        for e in engines:
            if e != "duckdb" and e in answers and "duckdb" in answers:
                same = answers[e] == answers["duckdb"]
                bad += not same
                cells[e] += " ok" if same else f" MISMATCH {answers[e]} vs {answers['duckdb']}"
        print(f"| {name} | " + " | ".join(cells[e] for e in engines) + " |", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
