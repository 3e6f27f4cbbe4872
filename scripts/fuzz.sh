#!/usr/bin/env bash
# Fuzzes sloth with cargo-fuzz (libFuzzer) on the stable toolchain, without
# a sanitizer (`-s none`): SQL text (`sql`), and the CSV, Parquet and Arrow
# IPC readers (`csv`, `parquet`, `ipc`). A panic, or an input that sloth
# answers with an internal error, is a crash: libFuzzer stops and writes
# the input under fuzz/artifacts/TARGET/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   # default: 60 s each, all four
#   scripts/fuzz.sh --ci                    # fixed seed and run count
#
# New inputs that reach new code go to target/fuzz-corpus/TARGET (not the
# committed seeds in fuzz/corpus/TARGET, which stay as they are). Needs
# `cargo install cargo-fuzz` and a C++ compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--ci" ]; then
  shift
  # Reproducible: the same seed and number of runs every time.
  limits=(-seed=1 -runs="${FUZZ_RUNS:-20000}")
else
  limits=(-max_total_time="${1:-60}")
  [ $# -gt 0 ] && shift
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(sql csv parquet ipc)
for t in "${targets[@]}"; do
  mkdir -p "target/fuzz-corpus/$t"
  echo "fuzzing $t" >&2
  cargo fuzz run -s none "$t" "target/fuzz-corpus/$t" "fuzz/corpus/$t" -- \
    "${limits[@]}" -timeout=20 -rss_limit_mb=4096 -max_len=4096 \
    -print_final_stats=1
done
