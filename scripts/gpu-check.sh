#!/usr/bin/env bash
# One-call GPU check for a machine with an NVIDIA GPU (see issue 7):
# builds, runs the GPU tests (device vs CPU), then the size sweep.
#   bash scripts/gpu-check.sh            # sweep 1e5 ... 1e9 rows
#   MAX_ROWS=100000000 bash scripts/gpu-check.sh   # a shorter sweep
# Output also goes to $OUT/gpu-check.txt when $OUT is set.
set -uo pipefail
cd "$(dirname "$0")/.."
MAX_ROWS=${MAX_ROWS:-1000000000}
LOG=${OUT:-/tmp}/gpu-check.txt
exec > >(tee "$LOG") 2>&1

echo "== machine"; date; nproc; free -g | head -2
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -3

# cudarc (cuda-12080 bindings) opens libnvrtc.so or libnvrtc.so.12; a
# CUDA 13 toolkit may only ship libnvrtc.so.13: offer it under the plain name.
if ! ldconfig -p | grep -q 'libnvrtc.so '; then
  lib=$(ldconfig -p | awk '/libnvrtc.so/ {print $NF; exit}')
  [ -z "$lib" ] && lib=$(ls /usr/local/cuda*/lib64/libnvrtc.so* 2>/dev/null | head -1)
  if [ -n "$lib" ]; then
    mkdir -p /tmp/sloth-nvrtc && ln -sf "$lib" /tmp/sloth-nvrtc/libnvrtc.so
    export LD_LIBRARY_PATH=/tmp/sloth-nvrtc:$(dirname "$lib"):${LD_LIBRARY_PATH:-}
    echo "using NVRTC at $lib"
  fi
fi

echo "== build"; time cargo build --release --features cuda 2>&1 | tail -2
echo "== GPU tests (device results vs CPU results, and the kernels' NVRTC/ptxas compile)"
cargo test --release --features cuda --test integration gpu:: -- --nocapture 2>&1 | grep -E "^test |skipped|result|panicked|assert"
echo "== where a group-by runs (EXPLAIN's estimate, then EXPLAIN ANALYZE, forced and auto)"
./target/release/sloth gen h2o-groupby --rows 10000000 --out /tmp/g.parquet >/dev/null
Q1="select id4, sum(v1), avg(v3), max(v2) from x group by id4"
Q2="select id4, id5, sum(v3), count(*) from x group by id4, id5"
./target/release/sloth explain --device auto --table x=/tmp/g.parquet -c "$Q1" | sed -n '/Device placement/,$p'
for q in "$Q1" "$Q2"; do
  for d in gpu auto cpu; do
    ./target/release/sloth explain --analyze --device $d --table x=/tmp/g.parquet -c "$q" | grep HashAggregate
  done
done
echo "== a device failure (injected) falls back to the CPU with the same rows"
Q3="select id4, id5, sum(v1), count(*) from x group by id4, id5 order by 1, 2"
diff <(./target/release/sloth sql --device cpu --table x=/tmp/g.parquet -c "$Q3") \
     <(SLOTH_GPU_FAULT="injected by gpu-check" ./target/release/sloth sql --device gpu --table x=/tmp/g.parquet -c "$Q3") \
  && echo "same rows"
SLOTH_GPU_FAULT="injected by gpu-check" ./target/release/sloth explain --analyze --device gpu \
  --table x=/tmp/g.parquet -c "$Q3" | grep HashAggregate
echo "== sweep (group-by sum, Int64 key; low and high cardinality)"
./target/release/sloth gpu-sweep --max-rows "$MAX_ROWS"
