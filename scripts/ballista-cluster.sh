#!/usr/bin/env bash
# A Ballista cluster on this machine: one scheduler and two executors, each
# its own process on 127.0.0.1, for `sloth sql --engine ballista
# --scheduler df://127.0.0.1:50050`.
#
#   scripts/ballista-cluster.sh start          # sloth's scheduler and executors
#   scripts/ballista-cluster.sh start --stock  # Ballista's own binaries
#   scripts/ballista-cluster.sh status
#   scripts/ballista-cluster.sh stop
#
# By default the processes are `sloth scheduler` and `sloth executor`
# (a build with `--features ballista`): Ballista's scheduler and executor
# with sloth's scalar functions registered, which plans call. `--stock`
# installs Ballista's `ballista-scheduler` and `ballista-executor` 55.0.0
# with cargo instead (a release build of each, several minutes); those run
# every plan that calls none of sloth's functions.
#
# SLOTH_BIN picks the sloth binary (default target/release/sloth, built
# with `--features ballista` when missing).
#
# Ports: SCHEDULER_PORT (50050) and, per executor, three from EXECUTOR_PORT
# (50051) up. Logs and process ids go under target/ballista-cluster.
set -euo pipefail
cd "$(dirname "$0")/.."

state=target/ballista-cluster
scheduler_port=${SCHEDULER_PORT:-50050}
executor_port=${EXECUTOR_PORT:-50051}
executors=2
ballista_version=55.0.0

wait_for_port() { # port what
  for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$2 did not listen on 127.0.0.1:$1 within 30 s (log: $state/$2.log)" >&2
  return 1
}

start() {
  local stock=${1:-}
  if [ -e "$state/pids" ]; then
    echo "a cluster is already running (scripts/ballista-cluster.sh stop)" >&2
    exit 1
  fi
  mkdir -p "$state"
  local scheduler executor kind
  if [ "$stock" = "--stock" ]; then
    for bin in ballista-scheduler ballista-executor; do
      command -v "$bin" >/dev/null ||
        cargo install --locked --version "$ballista_version" "$bin"
    done
    scheduler=(ballista-scheduler --bind-host 127.0.0.1 --bind-port "$scheduler_port")
    executor=(ballista-executor --scheduler-host 127.0.0.1 --scheduler-port "$scheduler_port" --bind-host 127.0.0.1)
    kind=stock
  else
    local sloth=${SLOTH_BIN:-target/release/sloth}
    if [ ! -x "$sloth" ]; then
      cargo build --release --features ballista --bin sloth
    fi
    if ! "$sloth" scheduler --help >/dev/null 2>&1; then
      echo "$sloth was built without --features ballista" >&2
      exit 1
    fi
    scheduler=("$sloth" scheduler --bind "127.0.0.1:$scheduler_port")
    executor=("$sloth" executor --scheduler "df://127.0.0.1:$scheduler_port" --bind-host 127.0.0.1)
    kind=sloth
  fi
  "${scheduler[@]}" >"$state/scheduler.log" 2>&1 &
  echo $! >>"$state/pids"
  wait_for_port "$scheduler_port" scheduler
  for i in $(seq 1 "$executors"); do
    local port=$((executor_port + 3 * (i - 1)))
    local ports=(--port "$port" --grpc-port $((port + 1)))
    if [ "$kind" = stock ]; then
      ports=(--bind-port "$port" --bind-grpc-port $((port + 1)) --bind-health-port $((port + 2)))
    fi
    mkdir -p "$state/executor$i"
    "${executor[@]}" "${ports[@]}" --work-dir "$state/executor$i" \
      >"$state/executor$i.log" 2>&1 &
    echo $! >>"$state/pids"
    wait_for_port "$port" "executor$i"
  done
  echo "scheduler df://127.0.0.1:$scheduler_port, $executors executors (logs: $state)"
}

stop() {
  [ -e "$state/pids" ] || { echo "no cluster running"; return 0; }
  while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$state/pids"
  rm -f "$state/pids"
  echo "stopped"
}

status() {
  [ -e "$state/pids" ] || { echo "no cluster running"; return 0; }
  while read -r pid; do
    if kill -0 "$pid" 2>/dev/null; then echo "$pid running"; else echo "$pid gone"; fi
  done <"$state/pids"
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start [--stock] | status | stop" >&2; exit 2 ;;
esac
