#!/usr/bin/env bash
# Benchmarks that need the real binaries as separate processes (see
# BENCHMARKS.md). Not a test; run by hand:
#
#   bench/run_process_benches.sh BUILD_DIR agent [JOBS STEPS]
#       goodputd (separate process, fresh data dir) <- goodput-agent <- JSON
#       Lines written by `ingest_bench agent` into the agent's socket; prints
#       events/s until every event is acknowledged by goodputd.
#   bench/run_process_benches.sh BUILD_DIR rss [JOBS STEPS]
#       goodputd's VmRSS before and after `ingest_bench stream` of
#       Fleet(JOBS, STEPS) (default 10000 x 20: 10k running jobs).
#
# Stops only the processes it started, by PID; removes its temp dirs.
set -euo pipefail
build=${1:?BUILD_DIR}
mode=${2:?agent|rss}
jobs=${3:-}
steps=${4:-}
work=$(mktemp -d /tmp/goodput-procbench-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

"$build/server/goodputd" --data_dir="$work/data" \
  --grpc_address=127.0.0.1:0 > "$work/goodputd.log" 2>&1 &
gd=$!
pids+=("$gd")
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$work/goodputd.log")
  [[ -n "$port" ]] && break
  sleep 0.05
done
[[ -n "$port" ]] || { echo "goodputd did not start:"; cat "$work/goodputd.log"; exit 1; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
echo "goodputd pid $gd on port $port; VmRSS $(rss "$gd") KiB"

case "$mode" in
  agent)
    mport=$(( 20000 + RANDOM % 20000 ))
    "$build/agent/goodput-agent" --server="127.0.0.1:$port" \
      --socket="$work/agent.sock" --spool_dir="$work/spool" \
      --metrics_address="127.0.0.1:$mport" > "$work/agent.log" 2>&1 &
    pids+=("$!")
    for _ in $(seq 1 200); do [[ -S "$work/agent.sock" ]] && break; sleep 0.05; done
    sleep 0.2
    "$build/bench/ingest_bench" agent --socket="$work/agent.sock" \
      --metrics="127.0.0.1:$mport" --jobs="${jobs:-1000}" --steps="${steps:-1000}"
    echo "goodputd VmRSS $(rss "$gd") KiB; agent VmRSS $(rss "${pids[1]}") KiB"
    ;;
  rss)
    before=$(rss "$gd")
    "$build/bench/ingest_bench" stream --target="127.0.0.1:$port" \
      --jobs="${jobs:-10000}" --steps="${steps:-20}"
    sleep 0.5
    after=$(rss "$gd")
    echo "goodputd VmRSS before ${before} KiB, after ${after} KiB:" \
      "+$(( after - before )) KiB for ${jobs:-10000} jobs" \
      "= $(( (after - before) * 1024 / ${jobs:-10000} )) B/job"
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
