"""Runs SQL queries with sloth (the CLI) and DuckDB on the same files and
reports every query whose answers differ or that only one engine runs.

    python scripts/sql_diff/sql_diff.py DATA_DIR QUERIES.sql [--sloth target/release/sloth]
    python scripts/sql_diff/sql_diff.py --make-nulls DIR   # writes t, u and x.parquet
    python scripts/sql_diff/sql_diff.py --make-files DIR   # input files for files.sql
    python scripts/sql_diff/sql_diff.py DATA_DIR QUERIES.sql --shrink  # also a minimal query per failure

Both engines run in DATA_DIR, so a query may name files by paths relative
to it (`FROM 'sales/year=*/*.parquet'`). QUERIES.sql holds one query per
line (`--` lines are comments). Rows are
compared as multisets unless the query ends in a top-level ORDER BY.
Numbers compare to 6 significant digits (one unit apart in the 6th when
a value sits on a rounding tie) and booleans as true/false. Where
the engines' conventions differ (integer division, NULL order under DESC,
`substring` with a negative start) sloth follows PostgreSQL, so a
difference there is expected; the README lists them. Needs `pip install
duckdb`. Exit status 1 if any query differs.
"""
import argparse
import csv
import io
import pathlib
import re
import subprocess
import sys

import duckdb

from shrink import shrink


def make_nulls(out: pathlib.Path) -> None:
    """Two tables with about 10% nulls in every column, and null and
    duplicate join keys; and x, a table of edge values: -0.0 beside 0.0,
    NaN, infinities and the extreme BIGINTs."""
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("select setseed(0.42)")
    con.execute(f"""copy (select
      case when random() < 0.1 then null else (random()*20)::int - 5 end as a,
      case when random() < 0.1 then null else (random()*1e12)::bigint - 5e11::bigint end as b,
      case when random() < 0.1 then null else random()*100 - 50 end as c,
      case when random() < 0.1 then null else ((random()*2000)::int - 1000)::decimal(10,2) end as d,
      case when random() < 0.1 then null when random() < 0.05 then ''
           else chr(65 + (random()*5)::int) || repeat('x', (random()*20)::int) end as s,
      case when random() < 0.1 then null else date '1990-01-01' + (random()*10000)::int end as dt,
      case when random() < 0.1 then null else random() < 0.5 end as flag
      from range(20000)) to '{out / "t.parquet"}' (format parquet)""")
    con.execute(f"""copy (select
      case when random() < 0.15 then null else (random()*25)::int - 5 end as k,
      case when random() < 0.1 then null else 'v' || (random()*100)::int end as v,
      (random()*100)::int as w
      from range(300)) to '{out / "u.parquet"}' (format parquet)""")
    con.execute(f"""copy (select * from (values (1, -0.0::double), (2, 0.0::double),
      (3, 'nan'::double), (4, 'nan'::double), (5, 'inf'::double), (6, '-inf'::double),
      (7, null), (8, 1.5::double), (9, -0.0::double), (9223372036854775807, 2.5),
      (-9223372036854775808, 'nan'::double), (null, 0.0), (0, -1.5)) v(i, f))
      to '{out / "x.parquet"}' (format parquet)""")


def make_files(out: pathlib.Path) -> None:
    """Input files of every form sloth reads: a Hive-partitioned Parquet
    tree, CSV without a header and with ';' and 'NA', NDJSON, two
    Parquet files of one table, two of differing schemas, an empty CSV,
    quoted fields and day-first dates."""
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("select setseed(0.42)")
    con.execute("""create table sales as select i as id,
      2020 + (i % 4) as year,
      case when i % 7 = 0 then null else ['eu', 'us', 'a/b'][1 + i % 3] end as region,
      round(random() * 100, 2) as amt from range(5000) t(i)""")
    con.execute(f"copy sales to '{out / 'sales'}' (format parquet, partition_by (year, region), overwrite_or_ignore)")
    con.execute(f"copy (select id, region, amt from sales) to '{out / 'semi.txt'}' (header false, delimiter ';', nullstr 'NA')")
    con.execute(f"copy (select id, region, amt from sales) to '{out / 'events.ndjson'}' (format json)")
    (out / "parts").mkdir(exist_ok=True)
    con.execute(f"copy (select * from sales where id < 2500) to '{out / 'parts' / 'p1.parquet'}' (format parquet)")
    con.execute(f"copy (select * from sales where id >= 2500) to '{out / 'parts' / 'p2.parquet'}' (format parquet)")
    # Files whose schemas differ (read with union_by_name), an empty CSV,
    # quoted and escaped CSV fields, and dates in a day-first format.
    (out / "mixed").mkdir(exist_ok=True)
    con.execute(f"copy (select id, amt from sales where id < 100) to '{out / 'mixed' / 'a.parquet'}' (format parquet)")
    con.execute(f"copy (select id, region from sales where id >= 100 and id < 300) to '{out / 'mixed' / 'b.parquet'}' (format parquet)")
    (out / "empty.csv").write_text("id,name\n")
    con.execute("""create table quoted as select i as id,
      case i % 4 when 0 then 'plain' when 1 then 'a, comma' when 2 then 'say "hi"' else null end as note
      from range(40) t(i)""")
    con.execute(f"copy quoted to '{out / 'quoted.csv'}' (header true, quote '\"', escape '\"')")
    con.execute(f"copy (select id, date '2024-01-01' + (id % 60)::int as day, amt from sales where id < 500) to '{out / 'eu_dates.csv'}' (header true, dateformat '%d/%m/%Y')")


# A list (array_agg) can be one long CSV field.
csv.field_size_limit(sys.maxsize)


def norm(v) -> str:
    if v is None or v == "" or v == "NULL":
        return "NULL"
    if isinstance(v, list):
        # A list as sloth's CSV writes it (and DuckDB's): [a, NULL, 3].
        return "[" + ", ".join("NULL" if x is None else str(x) for x in v) + "]"
    if isinstance(v, bool) or v in ("true", "false"):
        return str(v).lower()
    try:
        # + 0.0: -0.0 and 0.0 are one value (a group's key may be either).
        return "%.6g" % (float(v) + 0.0)
    except (TypeError, ValueError):
        return str(v)


def same_but_rounding(a: list, b: list) -> bool:
    """Whether two results are equal cell by cell but for numbers one unit
    apart in the 6th digit: a value on a rounding tie (452829.5) that the
    engines' last bits put on either side of it."""
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        if len(ra) != len(rb):
            return False
        for x, y in zip(ra, rb):
            if x == y:
                continue
            try:
                fx, fy = float(x), float(y)
            except ValueError:
                return False
            if not abs(fx - fy) <= 1e-5 * max(abs(fx), abs(fy)):
                return False
    return True


def ordered(sql: str) -> bool:
    """Whether the query ends in an ORDER BY outside any parentheses."""
    flat = sql.lower()
    while True:
        inner = re.sub(r"\([^()]*\)", "", flat)
        if inner == flat:
            break
        flat = inner
    return "order by" in flat


def compare(con, sloth: str, data: pathlib.Path, q: str) -> tuple:
    """(kind, detail): kind is "same", "differ", "sloth error" or "duckdb
    error"; detail says how."""
    try:
        duck = [[norm(v) for v in row] for row in con.sql(q).fetchall()]
    except (duckdb.Error, RuntimeError) as e:
        return "duckdb error", str(e).splitlines()[0] if str(e) else type(e).__name__
    run = subprocess.run(
        [sloth, "sql", "--data", str(data), "--format", "csv", "-c", q],
        capture_output=True,
        text=True,
        cwd=data,
    )
    if run.returncode != 0:
        return "sloth error", run.stderr.strip() or f"exit status {run.returncode}"
    mine = [[norm(v) for v in row] for row in list(csv.reader(io.StringIO(run.stdout)))[1:]]
    if not ordered(q):
        duck, mine = sorted(duck), sorted(mine)
    if duck != mine and not same_but_rounding(duck, mine):
        return "differ", f"DuckDB {duck[:4]} ({len(duck)} rows)\n  sloth  {mine[:4]} ({len(mine)} rows)"
    return "same", ""


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("data", nargs="?")
    p.add_argument("queries", nargs="?")
    p.add_argument("--sloth", default="target/release/sloth")
    p.add_argument("--make-nulls", metavar="DIR")
    p.add_argument("--make-files", metavar="DIR")
    p.add_argument("--shrink", action="store_true", help="shrink each failing query to a minimal one")
    args = p.parse_args()
    if args.make_nulls:
        make_nulls(pathlib.Path(args.make_nulls))
        return 0
    if args.make_files:
        make_files(pathlib.Path(args.make_files))
        return 0
    data = pathlib.Path(args.data).resolve()
    sloth = str(pathlib.Path(args.sloth).resolve())
    con = duckdb.connect()
    con.execute(f"set file_search_path = '{data}'")
    for f in sorted(data.glob("*.parquet")):
        con.execute(f"create view {f.stem} as select * from read_parquet('{f}')")
    queries = [
        line.strip()
        for line in pathlib.Path(args.queries).read_text().splitlines()
        if line.strip() and not line.startswith("--")
    ]
    bad = 0
    for q in queries:
        kind, detail = compare(con, sloth, data, q)
        if kind == "duckdb error":
            print(f"DuckDB error  {q}\n  {detail}")
            continue
        if kind == "same":
            continue
        bad += 1
        print(f"{kind:<13} {q}\n  {detail}")
        if args.shrink:
            first_line = detail.splitlines()[0]
            # The same failure: the same kind, and for an error the same
            # message up to its first quoted or numeric detail.
            gist = re.split(r"['\d]", first_line)[0]

            def still_fails(text: str) -> bool:
                k, d = compare(con, sloth, data, text)
                return k == kind and (kind != "sloth error" or d.startswith(gist))

            print(f"  shrunk to: {shrink(q, still_fails)}")
    print(f"{bad} of {len(queries)} queries differ or fail in sloth only")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
