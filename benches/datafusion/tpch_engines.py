"""TPC-H on sloth's engine and on DataFusion (sloth's optimized plan handed
over), and on DataFusion with sloth's optimizer off (the plan as written:
DataFusion then orders the joins itself), in one run: `sloth bench` with
each engine, median of --runs hot runs per query in one process; every
answer checked against sloth's native one.

With --ballista (a build with `--features ballista`) the same plans also
run on Ballista: its in-process cluster (`--engine ballista`), and a
cluster of one `sloth scheduler` and two `sloth executor` processes on
127.0.0.1 that scripts/ballista-cluster.sh starts and stops.

    cargo build --release --features datafusion   # or ballista
    python3 benches/datafusion/tpch_engines.py --data data/tpch-sf1 [--ballista]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benches" / "compare"))
from compare import check  # noqa: E402

CONFIGS = {
    "sloth": [],
    "datafusion": ["--engine", "datafusion"],
    "datafusion, sloth's optimizer off": ["--engine", "datafusion", "--no-optimize"],
}
BALLISTA = {
    "ballista, in-process": ["--engine", "ballista"],
    "ballista, 2 executor processes": ["--engine", "ballista", "--scheduler", "df://127.0.0.1:50050"],
}
CLUSTER = ROOT / "scripts" / "ballista-cluster.sh"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--runs", default="3")
    ap.add_argument("--sloth", default=str(ROOT / "target" / "release" / "sloth"))
    ap.add_argument("--ballista", action="store_true",
                    help="also run on Ballista, in-process and on a loopback cluster")
    args = ap.parse_args()
    configs = dict(CONFIGS, **(BALLISTA if args.ballista else {}))
    if args.ballista:
        env = dict(os.environ, SLOTH_BIN=args.sloth)
        subprocess.run(["bash", str(CLUSTER), "start"], check=True, env=env)
    try:
        timings = run_all(args, configs)
    finally:
        if args.ballista:
            subprocess.run(["bash", str(CLUSTER), "stop"], check=False)
    report(timings)


def run_all(args, configs):
    out = pathlib.Path(tempfile.mkdtemp(prefix="tpch-engines-"))
    timings = {}
    for name, flags in configs.items():
        d = out / "".join(c if c.isalnum() else "_" for c in name)
        d.mkdir()
        cmd = [args.sloth, "bench", *flags, "--data", args.data, "--runs", args.runs,
               "--json", str(d / "t.json"), "--results", str(d), str(ROOT / "queries" / "tpch")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: {r.stderr.strip().splitlines()[-1]}", file=sys.stderr)
            continue
        timings[name] = ({q["query"]: q["median_s"] for q in json.loads((d / "t.json").read_text())}, d)
    return timings


def report(timings):
    native_dir = timings["sloth"][1]
    names = list(timings)
    print("| query | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    totals = {n: 0.0 for n in names}
    for q in sorted(timings["sloth"][0]):
        ordered = "order by" in (ROOT / "queries" / "tpch" / f"{q}.sql").read_text().lower()
        cells = []
        for n in names:
            t, d = timings[n]
            if q not in t:
                cells.append("failed")
                continue
            totals[n] += t[q]
            verdict = "" if n == "sloth" else " " + check(native_dir, d, q, ordered)
            cells.append(f"{t[q]:.3f}{verdict}")
        print(f"| {q} | " + " | ".join(cells) + " |")
    print("| total | " + " | ".join(f"{totals[n]:.2f}" for n in names) + " |")


if __name__ == "__main__":
    main()
