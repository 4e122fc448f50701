#!/usr/bin/env bash
# THE main command: sets up a fresh Debian 12 machine (as root), builds, and
# runs the live service on loopback: goodputd (RocksDB under ./demo-data),
# several goodput-agents (one per simulated rack), and goodput-sim playing a
# simulated fleet live into the agents at DEMO_SPEED x (default 60: one
# simulated minute per second), with `goodputctl top` refreshing every 2 s.
# The fleet is steady (DEMO_DURATION=0): jobs keep arriving and ending for as
# long as it runs. Ctrl-C stops everything cleanly.
#
#   scripts/demo.sh                      # live demo
#   DEMO_SPEED=600 scripts/demo.sh       # faster
#   DEMO_AGENTS=5 DEMO_HOSTS=256 DEMO_JOBS=200 scripts/demo.sh
#   DEMO_DATA=/tmp/x DEMO_PORT=7800 scripts/demo.sh
#   DEMO_DURATION=12h scripts/demo.sh    # a fixed window, truth in truth.json
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SPEED=${DEMO_SPEED:-60}
DATA=${DEMO_DATA:-$PWD/demo-data}
PORT=${DEMO_PORT:-7700}
AGENTS=${DEMO_AGENTS:-3}
HOSTS=${DEMO_HOSTS:-96}
JOBS=${DEMO_JOBS:-80}
DURATION=${DEMO_DURATION:-0}
SEED=${DEMO_SEED:-1}

SETUP=demo bash scripts/build.sh goodputd goodput-agent goodputctl goodput-sim

B=build
rm -rf "$DATA"
mkdir -p "$DATA"
PIDS=()
cleanup() {
  trap - EXIT INT TERM
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  echo "demo: stopped; data and logs left in $DATA"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits up to 10 s for `pattern` in `file`.
wait_for_line() {
  for _ in $(seq 100); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$1" >&2
  echo "demo: $3 did not start" >&2
  exit 1
}

# goodput-sim compresses every duration by the speed, so in-flight step
# time counts as a hang after 600 s / speed of real time.
STALL=$(awk -v s="$SPEED" 'BEGIN { printf "%dms", 600000 / s }')
METRICS="127.0.0.1:$((PORT + 1))"
"$B/server/goodputd" --data_dir="$DATA/goodputd" \
  --grpc_address="127.0.0.1:$PORT" --metrics_address="$METRICS" \
  --stall_after="$STALL" >"$DATA/goodputd.log" 2>&1 &
PIDS+=($!)
wait_for_line "$DATA/goodputd.log" "listening on port" goodputd

SOCKETS=()
AGENT_URLS=()
for i in $(seq 0 $((AGENTS - 1))); do
  port=$((PORT + 10 + i))
  "$B/agent/goodput-agent" --server="127.0.0.1:$PORT" --host="rack-$i" \
    --socket="$DATA/agent-$i.sock" --spool_dir="$DATA/spool-$i" \
    --metrics_address="127.0.0.1:$port" --batch_delay=100ms \
    >"$DATA/agent-$i.log" 2>&1 &
  PIDS+=($!)
  SOCKETS+=("$DATA/agent-$i.sock")
  AGENT_URLS+=("http://127.0.0.1:$port/metrics")
done
for s in "${SOCKETS[@]}"; do
  for _ in $(seq 100); do [[ -S "$s" ]] && break; sleep 0.1; done
  [[ -S "$s" ]] || { echo "demo: no agent socket $s" >&2; exit 1; }
done

TRUTH=()  # a steady fleet never ends, so it has no ground truth
[[ "$DURATION" == 0 ]] || TRUTH=(--truth="$DATA/truth.json")
"$B/sim/goodput-sim" --seed="$SEED" --hosts="$HOSTS" --jobs="$JOBS" \
  --duration="$DURATION" --mtbi=3h --mtbi_chips=0 --speed="$SPEED" \
  --sockets="$(IFS=,; echo "${SOCKETS[*]}")" \
  "${TRUTH[@]}" >"$DATA/sim.log" 2>&1 &
PIDS+=($!)

if [[ "$DURATION" == 0 ]]; then
  echo "goodput demo: $HOSTS simulated hosts, about $JOBS jobs at a time" \
    "(steady: jobs keep arriving and ending) at ${SPEED}x"
else
  echo "goodput demo: $HOSTS simulated hosts, $JOBS jobs, $DURATION at ${SPEED}x"
fi
echo "  goodputd 127.0.0.1:$PORT, metrics http://$METRICS/metrics"
echo "  agent metrics: ${AGENT_URLS[*]}"
echo "  logs and data in $DATA; Ctrl-C stops everything"
sleep 2  # time to read the lines above
# In the background so that the INT/TERM trap runs at once (bash defers
# traps while a foreground child runs); `wait` returns on the signal.
"$B/cli/goodputctl" --server="127.0.0.1:$PORT" top \
  --metrics_url="http://$METRICS/metrics" &
PIDS+=($!)
wait $!
