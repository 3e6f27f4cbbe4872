"""Runs sloth, DuckDB, Polars, DataFusion and pandas on the same Parquet
files, checks every engine's answers against DuckDB's, and reports median
hot-run times, ratios to sloth, peak memory, and a bar chart per suite.

Usually started by run.sh. Each engine runs in a process of its own (so its
peak memory is its own); the engines are interleaved: for each query, every
engine does a warm-up run, then the timed rounds go round the engines (in an
order shuffled from round to round, with a short pause before each run), so
machine noise falls on all engines alike. The median of --runs timed runs is
reported. The Python engines are long-lived workers
driven over a pipe, and so is sloth (`sloth bench --serve`, one process
per suite). `sloth-lazy` is sloth running the
same questions written with its LazyFrame API (`sloth bench --api lazy`,
programs in src/queries/), for the questions that have such a version.

With --fresh, every engine instead runs every query in a process of its own
(`run_suite_fresh`): the first-run time a user at a terminal gets, and the
peak RSS of each query alone.
"""
import argparse
import json
import math
import os
import pathlib
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def h2o_sql(i, kind="groupby"):
    text = (ROOT / f"queries/h2o/{kind}-q{i:02}.sql").read_text()
    return "\n".join(l for l in text.splitlines() if not l.startswith("--"))


# ---------------------------------------------------------------- workers
def worker(engine, suite, data, out):
    """Serves one engine for one suite: loads, then runs queries on request
    (see the loop at the end); writes results under `out`."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = pathlib.Path(data)
    queries = {}
    load_s = None
    if suite == "tpch":
        for q in sorted((ROOT / "queries/tpch").glob("q*.sql")):
            queries[q.stem] = q.read_text()
    elif suite == "h2o-join":
        queries = {f"q{i:02}": h2o_sql(i, "join") for i in range(1, 6)}
    else:
        queries = {f"q{i:02}": h2o_sql(i) for i in range(1, 11)}

    if engine == "duckdb":
        import duckdb

        con = duckdb.connect()
        for f in sorted(data.glob("*.parquet")):
            con.execute(f"create view {f.stem} as select * from read_parquet('{f}')")
        run = lambda name, sql: con.sql(sql).to_arrow_table()
    elif engine == "datafusion":
        import datafusion

        ctx = datafusion.SessionContext()
        for f in sorted(data.glob("*.parquet")):
            ctx.register_parquet(f.stem, str(f))
        run = lambda name, sql: __import__("pyarrow").Table.from_batches(ctx.sql(sql).collect())
    elif engine == "polars" and suite in ("tpch", "h2o-join"):
        import polars as pl

        ctx = pl.SQLContext({f.stem: pl.scan_parquet(f) for f in data.glob("*.parquet")})
        run = lambda name, sql: ctx.execute(sql, eager=True).to_arrow()
    elif engine == "polars":
        import polars as pl

        x = pl.scan_parquet(data / "x.parquet")
        run = lambda name, sql: POLARS_H2O[name](pl, x).collect().to_arrow()
    elif engine == "pandas":
        import pandas as pd

        t = time.perf_counter()
        if suite == "tpch":
            import pandas_tpch

            frames = pandas_tpch.load(data)
        elif suite == "h2o-join":
            frames = {f.stem: pd.read_parquet(f) for f in data.glob("*.parquet")}
        else:
            frames = pd.read_parquet(data / "x.parquet")
            for c in ["id1", "id2", "id3"]:
                frames[c] = frames[c].astype("category")
        load_s = time.perf_counter() - t
        h2o = PANDAS_JOIN if suite == "h2o-join" else PANDAS_H2O
        table = pandas_tpch.QUERIES if suite == "tpch" else {n: (lambda f: lambda x: f(pd, x))(f) for n, f in h2o.items()}

        def run(name, sql):
            if name not in table:
                raise NotImplementedError(f"no pandas version of {name}")
            import pyarrow as pa

            res = table[name](frames)
            return pa.Table.from_pandas(res.reset_index(drop=True), preserve_index=False)
    else:
        raise SystemExit(f"unknown engine {engine}")

    # Serve: one command per line on stdin, one JSON answer per line.
    #   warm NAME  -> run once, write NAME.csv   {"rows": n, "s": seconds} or {"error": ...}
    #   time NAME  -> one timed run              {"s": seconds} or {"error": ...}
    #   quit       -> {"peak_rss_mb": ...}
    print(json.dumps({"ready": True, "load_s": load_s}), flush=True)
    for line in sys.stdin:
        cmd, _, name = line.strip().partition(" ")
        if cmd == "quit":
            break
        try:
            if cmd == "warm":
                import pyarrow as pa
                import pyarrow.csv as pacsv

                t = time.perf_counter()
                result = run(name, queries[name])
                s = time.perf_counter() - t
                # The CSV writer has no string_view: write views as plain strings.
                schema = pa.schema([f.with_type(pa.string()) if f.type == pa.string_view() else f for f in result.schema])
                pacsv.write_csv(result.cast(schema), out / f"{name}.csv")
                answer = {"rows": result.num_rows, "s": s}
            else:
                t = time.perf_counter()
                run(name, queries[name])
                answer = {"s": time.perf_counter() - t}
        except Exception as e:  # an engine that cannot run a query is reported, not fatal
            answer = {"error": f"{type(e).__name__}: {e}"[:200]}
        print(json.dumps(answer), flush=True)
    print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)


POLARS_H2O = {
    "q01": lambda pl, x: x.group_by("id1").agg(pl.sum("v1")),
    "q02": lambda pl, x: x.group_by("id1", "id2").agg(pl.sum("v1")),
    "q03": lambda pl, x: x.group_by("id3").agg(pl.sum("v1"), pl.mean("v3")),
    "q04": lambda pl, x: x.group_by("id4").agg(pl.mean("v1"), pl.mean("v2"), pl.mean("v3")),
    "q05": lambda pl, x: x.group_by("id6").agg(pl.sum("v1"), pl.sum("v2"), pl.sum("v3")),
    "q06": lambda pl, x: x.group_by("id4", "id5").agg(pl.median("v3").alias("median_v3"), pl.std("v3").alias("sd_v3")),
    "q07": lambda pl, x: x.group_by("id3").agg((pl.max("v1") - pl.min("v2")).alias("range_v1_v2")),
    "q08": lambda pl, x: x.drop_nulls("v3").sort("v3", descending=True).group_by("id6").head(2).select("id6", pl.col("v3").alias("largest2_v3")),
    "q09": lambda pl, x: x.group_by("id2", "id4").agg((pl.corr("v1", "v2") ** 2).alias("r2")),
    "q10": lambda pl, x: x.group_by("id1", "id2", "id3", "id4", "id5", "id6").agg(pl.sum("v3").alias("v3"), pl.len().alias("count")),
}

PANDAS_H2O = {
    "q01": lambda pd, x: x.groupby("id1", observed=True, sort=False).agg(v1=("v1", "sum")).reset_index(),
    "q02": lambda pd, x: x.groupby(["id1", "id2"], observed=True, sort=False).agg(v1=("v1", "sum")).reset_index(),
    "q03": lambda pd, x: x.groupby("id3", observed=True, sort=False).agg(v1=("v1", "sum"), v3=("v3", "mean")).reset_index(),
    "q04": lambda pd, x: x.groupby("id4", sort=False).agg(v1=("v1", "mean"), v2=("v2", "mean"), v3=("v3", "mean")).reset_index(),
    "q05": lambda pd, x: x.groupby("id6", sort=False).agg(v1=("v1", "sum"), v2=("v2", "sum"), v3=("v3", "sum")).reset_index(),
    "q06": lambda pd, x: x.groupby(["id4", "id5"], sort=False).agg(median_v3=("v3", "median"), sd_v3=("v3", "std")).reset_index(),
    "q07": lambda pd, x: x.groupby("id3", observed=True, sort=False).agg(v1=("v1", "max"), v2=("v2", "min")).assign(range_v1_v2=lambda d: d.v1 - d.v2)[["range_v1_v2"]].reset_index(),
    "q08": lambda pd, x: x[["id6", "v3"]].dropna().sort_values("v3", ascending=False).groupby("id6", sort=False).head(2).rename(columns={"v3": "largest2_v3"}),
    "q09": lambda pd, x: x[["id2", "id4", "v1", "v2"]].groupby(["id2", "id4"], observed=True, sort=False).apply(lambda d: d["v1"].corr(d["v2"]) ** 2, include_groups=False).rename("r2").reset_index(),
    "q10": lambda pd, x: x.groupby(["id1", "id2", "id3", "id4", "id5", "id6"], observed=True, sort=False).agg(v3=("v3", "sum"), count=("v1", "size")).reset_index(),
}




def _join(t, right, key, how="inner"):
    cols = [c for c in t[right].columns if c not in (key, "v2")]
    r = t[right][[key, *cols, "v2"]].rename(columns={c: f"{right}_{c}" for c in cols})
    return t["x"].merge(r, on=key, how=how)


PANDAS_JOIN = {
    "q01": lambda pd, t: _join(t, "small", "id1"),
    "q02": lambda pd, t: _join(t, "medium", "id2"),
    "q03": lambda pd, t: _join(t, "medium", "id2", "left"),
    "q04": lambda pd, t: _join(t, "medium", "id5"),
    "q05": lambda pd, t: _join(t, "big", "id3"),
}


# ---------------------------------------------------------------- driver
def query_names(suite):
    """Query name -> SQL file, for a suite."""
    if suite == "tpch":
        return {f.stem: f for f in sorted((ROOT / "queries/tpch").glob("q*.sql"))}
    kind, n = ("join", 5) if suite == "h2o-join" else ("groupby", 10)
    return {f"q{i:02}": ROOT / f"queries/h2o/{kind}-q{i:02}.sql" for i in range(1, n + 1)}


class PipeEngine:
    """A long-lived process answering `warm NAME`, `time NAME` and `quit`
    on stdin with one JSON line each (see `worker`)."""

    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def request(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        answer = self.p.stdout.readline()
        if not answer:
            raise RuntimeError(f"{self.p.args[0]} exited")
        return json.loads(answer)

    def ask(self, cmd, name=""):
        return self.request(f"{cmd} {name}")

    def warm(self, name):
        return self.ask("warm", name)

    def time(self, name):
        return self.ask("time", name)

    def close(self):
        peak = self.ask("quit").get("peak_rss_mb", 0)
        self.p.wait()
        return peak


class PythonEngine(PipeEngine):
    """A Python worker serving one engine; it reports its loading time first."""

    def __init__(self, engine, suite, data, out):
        super().__init__([sys.executable, __file__, "--worker", engine, suite, str(data), str(out)])
        answer = self.p.stdout.readline()
        if not answer:
            raise RuntimeError("worker exited")
        self.load_s = json.loads(answer).get("load_s")


class SlothEngine(PipeEngine):
    """`sloth bench --serve`, planning the suite's files once. `api` is "sql"
    or "lazy" (the LazyFrame programs of src/queries/)."""

    def __init__(self, sloth, suite, data, out, api="sql", only=None):
        self.out = pathlib.Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.spawned = time.perf_counter()
        files = query_names(suite)
        if only is not None:
            files = {only: files[only]}
        # sloth names a query after its file's stem (groupby-q01 for q01).
        self.stem = {name: f.stem for name, f in files.items()}
        super().__init__([sloth, "bench", "--serve", "--data", str(data), "--results", str(self.out),
                          "--api", api, *map(str, files.values())])
        self.load_s = None

    def ask(self, cmd, name=""):
        a = self.request(f"{cmd} {self.stem.get(name, name)}")
        if "no LazyFrame version" in a.get("error", ""):
            return {"skipped": True}
        if "error" in a:
            a["error"] = a["error"][:200]
        return a

    def warm(self, name):
        a = self.ask("warm", name)
        written = self.out / f"{self.stem[name]}.csv"
        if written.exists() and self.stem[name] != name:
            written.replace(self.out / f"{name}.csv")
        return a


# A pause before each timed run, so that whatever the engine before leaves
# going (the kernel taking back the gigabytes pandas frees, worker threads
# winding down; the cause was not pinned down) is not timed as the next
# engine's work.
SETTLE_S = 0.1


def timed_order(engines, name, r):
    """The engines' order in round `r` of query `name`: shuffled, and
    seeded by both so that a rerun repeats it. A rotation would keep the
    cyclic order, and with it each engine's predecessor, the same in every
    round: sloth then always ran right after pandas."""
    order = list(engines)
    random.Random(f"{name}/{r}").shuffle(order)
    return order


def run_suite(suite, data, engines, runs, out, sloth):
    """Runs every engine on every query of `suite`, interleaved; returns
    per-engine reports like {"queries": {name: {"median_s", "rows"}}}."""
    live = {}
    for e in engines:
        print(f"[{suite}] starting {e} ...", flush=True)
        dest = out / suite / e
        live[e] = start_engine(e, suite, data, dest, sloth)
    reports = {e: {"engine": e, "suite": suite, "load_s": live[e].load_s, "queries": {}} for e in engines}
    for name in query_names(suite):
        print(f"[{suite}] {name}", flush=True)
        times = {e: [] for e in engines}
        for e in timed_order(engines, name, "warm"):
            a = live[e].warm(name)
            if "skipped" in a:
                reports[e]["queries"][name] = {"skipped": True}
            elif "error" in a:
                reports[e]["queries"][name] = {"error": a["error"]}
            else:
                reports[e]["queries"][name] = {"rows": a["rows"]}
        for r in range(runs):
            for e in timed_order(engines, name, r):
                if {"error", "skipped"} & reports[e]["queries"][name].keys():
                    continue
                time.sleep(SETTLE_S)
                a = live[e].time(name)
                if "error" in a:
                    reports[e]["queries"][name] = {"error": a["error"]}
                else:
                    times[e].append(a["s"])
        for e in engines:
            if times[e] and not {"error", "skipped"} & reports[e]["queries"][name].keys():
                reports[e]["queries"][name]["median_s"] = statistics.median(times[e])
    for e in engines:
        reports[e]["peak_rss_mb"] = live[e].close()
    return reports


def start_engine(e, suite, data, dest, sloth, only=None):
    if e in ("sloth", "sloth-lazy"):
        return SlothEngine(sloth, suite, data, dest, "lazy" if e == "sloth-lazy" else "sql", only)
    return PythonEngine(e, suite, data, dest)


def run_suite_fresh(suite, data, engines, runs, out, sloth):
    """Each engine runs each query once in a process of its own: the first
    run of a query in a fresh process, which is what a user at a terminal or
    a script gets. sloth's time is its whole process, from spawn to answer
    (reading the files' metadata, planning, running); a Python engine's is
    its query call (it reads metadata lazily inside it), without the
    interpreter's start and imports. Round 0 writes the answers for the
    check; peak RSS is the least over the rounds (round 0 also writes CSV)."""
    reports = {e: {"engine": e, "suite": suite, "queries": {}} for e in engines}
    for name in query_names(suite):
        print(f"[{suite} fresh] {name}", flush=True)
        times, peaks = {e: [] for e in engines}, {e: [] for e in engines}
        for r in range(runs):
            for e in timed_order(engines, name, r):
                if {"error", "skipped"} & reports[e]["queries"].get(name, {}).keys():
                    continue
                time.sleep(SETTLE_S)
                eng = start_engine(e, suite, data, out / suite / e, sloth, name)
                a = eng.warm(name) if r == 0 else eng.time(name)
                done = time.perf_counter()
                peaks[e].append(eng.close())
                if "skipped" in a or "error" in a:
                    reports[e]["queries"][name] = {k: a[k] for k in ("skipped", "error") if k in a}
                    continue
                if r == 0:
                    reports[e]["queries"][name] = {"rows": a["rows"]}
                times[e].append(done - eng.spawned if isinstance(eng, SlothEngine) else a["s"])
        for e in engines:
            q = reports[e]["queries"].get(name, {})
            if times[e] and not {"error", "skipped"} & q.keys():
                q["median_s"] = statistics.median(times[e])
                q["peak_rss_mb"] = min(peaks[e])
    for e in engines:
        qs = [q["peak_rss_mb"] for q in reports[e]["queries"].values() if "peak_rss_mb" in q]
        reports[e]["peak_rss_mb"] = max(qs, default=0)
    return reports


def read_rows(path, sort):
    import csv

    with open(path) as f:
        # A row with one NULL cell can come out as an empty line.
        rows = [r or [""] for r in list(csv.reader(f))[1:]]
    return sorted(rows) if sort else rows


def same(a, b):
    if a == b or (a in ("", "null", "NULL") and b in ("", "null", "NULL")):
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-6)


def checksum(path):
    """Row count and per-column sums of the numeric cells: for results too big to compare row by row."""
    import pyarrow.csv as pacsv
    import pyarrow.compute as pc

    t = pacsv.read_csv(path)
    sums = []
    for c in t.columns:
        if c.type in ("int64", "double") or str(c.type).startswith(("int", "double", "float")):
            sums.append(float(pc.sum(c).as_py() or 0.0))
    return t.num_rows, sums


def check(ref_dir, dir_, name, ordered):
    r, g = pathlib.Path(ref_dir) / f"{name}.csv", pathlib.Path(dir_) / f"{name}.csv"
    if not r.exists() or not g.exists():
        return "n/a"
    if r.stat().st_size > 20_000_000:
        (na, sa), (nb, sb) = checksum(r), checksum(g)
        ok = na == nb and len(sa) == len(sb) and all(math.isclose(x, y, rel_tol=1e-9) for x, y in zip(sa, sb))
        return "ok (sums)" if ok else "MISMATCH"
    a, b = read_rows(r, not ordered), read_rows(g, not ordered)
    if len(a) != len(b):
        return f"rows {len(b)} vs {len(a)}"
    for x, y in zip(a, b):
        if len(x) != len(y) or not all(same(p, q) for p, q in zip(x, y)):
            return "MISMATCH"
    return "ok"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=4, metavar=("ENGINE", "SUITE", "DATA", "OUT"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sloth", default=str(ROOT / "target/release/sloth"))
    ap.add_argument("--tpch")
    ap.add_argument("--h2o")
    ap.add_argument("--h2o-join")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--engines", default="sloth,sloth-lazy,duckdb,polars,datafusion,pandas")
    ap.add_argument("--fresh", action="store_true",
                    help="run each query's first run in a fresh process per engine (cold process, warm page "
                         "cache) instead of hot runs in one long-lived process; reports peak RSS per query")
    ap.add_argument("--keep-results", action="store_true",
                    help="keep every engine's answers (CSV) under OUT/SUITE/ENGINE after checking them; "
                         "the join suite's alone take ~23 GB")
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    out = pathlib.Path(args.out)
    all_reports = []
    for suite, data in (("tpch", args.tpch), ("h2o-groupby", args.h2o), ("h2o-join", args.h2o_join)):
        if not data:
            continue
        suite_run = run_suite_fresh if args.fresh else run_suite
        reports = suite_run(suite, data, args.engines.split(","), args.runs, out, args.sloth)
        ref = out / suite / "duckdb"
        names = list(reports["duckdb"]["queries"]) if "duckdb" in reports else []
        engines = list(reports)
        # h2o results have no defined order: compare sorted rows.
        ordered = suite == "tpch"
        mode = "first runs, each in a fresh process" if args.fresh else "hot runs"
        print(f"\n{suite}: median of {args.runs} {mode}, engines interleaved, seconds (check vs DuckDB)")
        print("query  " + "".join(f"{e:>22}" for e in engines))
        totals = {e: 0.0 for e in engines}
        complete = {e: True for e in engines}
        for n in names:
            cells = []
            for e in engines:
                q = reports[e]["queries"].get(n, {})
                if "median_s" in q:
                    totals[e] += q["median_s"]
                    verdict = "ref" if e == "duckdb" else check(ref, out / suite / e, n, ordered)
                    cells.append(f"{q['median_s']:9.4f} {verdict:>11}")
                else:
                    complete[e] = False
                    cells.append(f"{'—':>9} {'error' if 'error' in q else 'n/a':>11}")
            print(f"{n:6} " + "".join(f"{c:>22}" for c in cells))
        base = totals.get("sloth") or float("nan")
        print("total  " + "".join(f"{totals[e]:9.3f}{'' if complete[e] else '*':1} {totals[e] / base:9.2f}x " for e in engines))
        print("peak MB" + "".join(f"{reports[e].get('peak_rss_mb', 0):>22.0f}" for e in engines))
        if args.fresh:
            print(f"\n{suite}: peak RSS of each query's process, MB")
            print("query  " + "".join(f"{e:>12}" for e in engines))
            for n in names:
                print(f"{n:6} " + "".join(f"{reports[e]['queries'].get(n, {}).get('peak_rss_mb', float('nan')):>12.0f}" for e in engines))
        if "sloth-lazy" in reports and "sloth" in reports:
            both = [n for n in names if "median_s" in reports["sloth-lazy"]["queries"].get(n, {})
                    and "median_s" in reports["sloth"]["queries"].get(n, {})]
            if both:
                lz = sum(reports["sloth-lazy"]["queries"][n]["median_s"] for n in both)
                sq = sum(reports["sloth"]["queries"][n]["median_s"] for n in both)
                print(f"(sloth-lazy, the LazyFrame API, on the {len(both)} questions it has: {lz:.3f} s vs {sq:.3f} s with SQL)")
        if reports.get("pandas", {}).get("load_s") is not None:
            print(f"(pandas loads its data eagerly first: {reports['pandas']['load_s']:.2f} s, not in its query times)")
        print("(* = the engine did not run every query; its total covers those it ran; ratios are engine/sloth)")
        if not args.keep_results:
            # Answers of 10M-row joins fill a disk fast (~23 GB for the join
            # suite); once checked, only the timings are kept.
            answers = [out / suite / e for e in engines if (out / suite / e).is_dir()]
            size = sum(f.stat().st_size for d in answers for f in d.rglob("*") if f.is_file())
            for d in answers:
                shutil.rmtree(d, ignore_errors=True)
            print(f"(the engines' answers, {size / 1e9:.1f} GB, were checked and removed; --keep-results keeps them)")
        all_reports.append({"suite": suite, "runs": args.runs, "fresh": args.fresh, "reports": reports})
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=(max(8, len(names) * 0.6), 4.5))
            width = 0.8 / max(1, len(engines))
            for k, e in enumerate(engines):
                ys = [reports[e]["queries"].get(n, {}).get("median_s", 0) for n in names]
                ax.bar([i + k * width for i in range(len(names))], ys, width, label=e)
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))], names, rotation=45)
            ax.set_ylabel(f"seconds (median, {'first run, fresh process' if args.fresh else 'hot'})")
            ax.set_title(f"{suite}: {pathlib.Path(data).name}, {os.cpu_count()} cores")
            ax.legend()
            fig.tight_layout()
            fig.savefig(out / f"{suite}{'-fresh' if args.fresh else ''}.png", dpi=110)
        except ImportError:
            pass
    name = "results-fresh.json" if args.fresh else "results.json"
    (out / name).write_text(json.dumps(all_reports, indent=1))
    print(f"\nwrote {out / name} and charts in {out}")


if __name__ == "__main__":
    main()
