#!/usr/bin/env bash
# One command for the peer comparison: builds sloth (release), makes a Python
# virtual environment from the pinned requirements, generates the data with
# `sloth gen` if it is missing, and runs every engine on the same files.
#
#   bash benches/compare/run.sh            # TPC-H SF 1, db-benchmark group-by and join at 1e7
#   SF=0.1 ROWS=1000000 K=100 RUNS=3 bash benches/compare/run.sh
#   FRESH=1 bash benches/compare/run.sh    # each query's first run in a fresh process
set -euo pipefail
cd "$(dirname "$0")/../.."
SF=${SF:-1}
ROWS=${ROWS:-10000000}
# K, the groups per id column (not GROUPS: bash sets that to the user's group ids).
K=${K:-100}
RUNS=${RUNS:-3}
OUT=${OUT:-benches/compare/results}
cargo build --release --quiet
VENV=benches/compare/.venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet -r benches/compare/requirements.txt
fi
TPCH=data/tpch-sf$SF
H2O=data/h2o-$ROWS-$K
H2OJ=data/h2o-join-$ROWS
[ -f "$TPCH/lineitem.parquet" ] || target/release/sloth gen tpch --scale "$SF" --out "$TPCH"
[ -f "$H2O/x.parquet" ] || target/release/sloth gen h2o-groupby --rows "$ROWS" --groups "$K" --out "$H2O/x.parquet"
[ -f "$H2OJ/x.parquet" ] || target/release/sloth gen h2o-join --rows "$ROWS" --out "$H2OJ"
"$VENV/bin/python" benches/compare/compare.py --sloth target/release/sloth --tpch "$TPCH" --h2o "$H2O" --h2o-join "$H2OJ" --runs "$RUNS" --out "$OUT" ${FRESH:+--fresh}
