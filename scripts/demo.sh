#!/usr/bin/env bash
# THE main command: sets up a fresh Debian 12 machine (as root), builds, and
# runs the live service on loopback: goodputd (RocksDB under ./demo-data),
# one goodput-agent, and the example fleet (examples/fleet.jsonl) played
# live into the agent's socket at DEMO_SPEED x (default 60: its 2 hours in
# 2 minutes). The live report refreshes every 2 s; Ctrl-C stops everything.
#
#   scripts/demo.sh                 # live demo
#   DEMO_SPEED=600 scripts/demo.sh  # faster
#   DEMO_DATA=/tmp/x scripts/demo.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SPEED=${DEMO_SPEED:-60}
DATA=${DEMO_DATA:-$PWD/demo-data}
FLEET=${FLEET:-examples/fleet.jsonl}
PORT=${DEMO_PORT:-7700}

bash scripts/build.sh goodputd goodput-agent goodputctl

B=build
rm -rf "$DATA"
mkdir -p "$DATA"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "demo: stopped; data left in $DATA"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# In-flight step time scales with the replay speed (600 s at 1x).
STALL=$(awk -v s="$SPEED" 'BEGIN { printf "%dms", 600000 / s }')
"$B/server/goodputd" --data_dir="$DATA/goodputd" \
  --grpc_address="127.0.0.1:$PORT" --stall_after="$STALL" \
  >"$DATA/goodputd.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  grep -q "listening on port" "$DATA/goodputd.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "listening on port" "$DATA/goodputd.log" || {
  cat "$DATA/goodputd.log"; echo "demo: goodputd did not start" >&2; exit 1; }

"$B/agent/goodput-agent" --server="127.0.0.1:$PORT" \
  --socket="$DATA/agent.sock" --spool_dir="$DATA/spool" \
  --metrics_address=127.0.0.1:7702 --batch_delay=100ms \
  >"$DATA/agent.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [[ -S "$DATA/agent.sock" ]] && break; sleep 0.1; done

/usr/bin/python3 scripts/demo_feed.py --socket="$DATA/agent.sock" \
  --speed="$SPEED" "$FLEET" 2>>"$DATA/feed.log" &
FEED=$!

show() {
  printf '\033[H\033[2J'
  echo "goodput live demo: $FLEET at ${SPEED}x into goodput-agent -> goodputd"
  echo "(server 127.0.0.1:$PORT, agent metrics http://127.0.0.1:7702/metrics,"
  echo " data $DATA; Ctrl-C to stop)"
  echo
  "$B/cli/goodputctl" --server="127.0.0.1:$PORT" report || true
}
while kill -0 "$FEED" 2>/dev/null; do
  show
  sleep 2
done
sleep 1  # the agent's last batch (batch_delay 100 ms)
show
echo
echo "demo: the whole log was played. The same report offline:"
echo "  $B/cli/goodputctl replay $FLEET"
