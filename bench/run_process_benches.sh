#!/usr/bin/env bash
# Benchmarks that need the real binaries as separate processes (see
# BENCHMARKS.md). Not a test; run by hand:
#
#   bench/run_process_benches.sh BUILD_DIR agent [JOBS STEPS]
#       goodputd (separate process, fresh data dir) <- goodput-agent <- JSON
#       Lines written by `ingest_bench agent` into the agent's socket; prints
#       events/s until every event is acknowledged by goodputd.
#   bench/run_process_benches.sh BUILD_DIR agent-sink [JOBS STEPS]
#       The same, but the agent uplinks to a bare sink (`ingest_bench sink`,
#       a separate process that acknowledges every batch at once): the agent
#       alone (its real spool on disk, its fsyncs). Prints lines/s into the
#       agent and acknowledged events/s out of it, and the agent's CPU time.
#   bench/run_process_benches.sh BUILD_DIR rss [JOBS STEPS]
#       goodputd's VmRSS before and after `ingest_bench stream` of
#       Fleet(JOBS, STEPS) (default 10000 x 20: 10k running jobs).
#
# INGEST_BENCH=PATH runs that ingest_bench (the load and the sink) instead of
# BUILD_DIR's: e.g. an older agent build without the sink mode. TMPDIR
# chooses where the spool and the data dir go (default /tmp). AGENT_PREFIX
# is put before the agent's command line (e.g. "strace -f -c -o FILE" or
# "valgrind --tool=callgrind"); the CPU figure is then the wrapper's.
# Stops only the processes it started, by PID; removes its temp dirs.
set -euo pipefail
build=${1:?BUILD_DIR}
mode=${2:?agent|agent-sink|rss}
jobs=${3:-}
steps=${4:-}
bench=${INGEST_BENCH:-$build/bench/ingest_bench}
work=$(mktemp -d "${TMPDIR:-/tmp}/goodput-procbench-XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

if [[ "$mode" == agent-sink ]]; then
  "$bench" sink > "$work/server.log" 2>&1 &
else
  "$build/server/goodputd" --data_dir="$work/data" \
    --grpc_address=127.0.0.1:0 > "$work/server.log" 2>&1 &
fi
gd=$!
pids+=("$gd")
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$work/server.log")
  [[ -n "$port" ]] && break
  sleep 0.05
done
[[ -n "$port" ]] || { echo "server did not start:"; cat "$work/server.log"; exit 1; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
# user+system CPU seconds of process $1 so far.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
echo "server ($mode) pid $gd on port $port; VmRSS $(rss "$gd") KiB"

case "$mode" in
  agent|agent-sink)
    mport=$(( 20000 + RANDOM % 20000 ))
    ${AGENT_PREFIX:-} "$build/agent/goodput-agent" --server="127.0.0.1:$port" \
      --socket="$work/agent.sock" --spool_dir="$work/spool" \
      --metrics_address="127.0.0.1:$mport" > "$work/agent.log" 2>&1 &
    pids+=("$!")
    for _ in $(seq 1 600); do [[ -S "$work/agent.sock" ]] && break; sleep 0.05; done
    sleep 0.2
    agent_pid=${pids[1]}
    cpu0=$(cpu "$agent_pid")
    "$bench" agent --socket="$work/agent.sock" \
      --metrics="127.0.0.1:$mport" --jobs="${jobs:-1000}" --steps="${steps:-1000}"
    echo "agent CPU $(awk -v a="$(cpu "$agent_pid")" -v b="$cpu0" 'BEGIN{printf "%.2f", a - b}') s during the load;" \
      "server VmRSS $(rss "$gd") KiB; agent VmRSS $(rss "$agent_pid") KiB"
    ;;
  rss)
    before=$(rss "$gd")
    "$bench" stream --target="127.0.0.1:$port" \
      --jobs="${jobs:-10000}" --steps="${steps:-20}"
    sleep 0.5
    after=$(rss "$gd")
    echo "goodputd VmRSS before ${before} KiB, after ${after} KiB:" \
      "+$(( after - before )) KiB for ${jobs:-10000} jobs" \
      "= $(( (after - before) * 1024 / ${jobs:-10000} )) B/job"
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
