#!/bin/bash
# Makes docs/img/fleet.png: the demo setup (goodputd, a goodput-agent, the
# example fleet played live by scripts/demo_feed.py) with a real Prometheus
# scraping both every second and loading dashboards/rules/, then
# dashboards/screenshot.sh (fleet MPG, SG, RG, PG and the stacked badput
# breakdown). Needs the binaries in build/ (scripts/build.sh goodputd
# goodput-agent), prometheus and chromium.
#
#   docs/img/fleet_png.sh [OUT.png]     # default docs/img/fleet.png
# Env: SPEED=40 (the example's 2 hours in 3 minutes), RANGE=3m.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(realpath -m "${1:-docs/img/fleet.png}")
speed=${SPEED:-40}
work=$(mktemp -d /tmp/goodput_png_XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && { wait "$p" 2>/dev/null || true; }; done
  rm -rf "$work"
}
trap cleanup EXIT

# wait_log FILE REGEX: prints the first group of REGEX once FILE has it.
wait_log() {
  for _ in $(seq 300); do
    if v=$(sed -nE "s/.*$2.*/\1/p" "$1" | head -1) && [[ -n $v ]]; then
      echo "$v"; return 0
    fi
    sleep 0.1  # poll interval of the wait for the log line
  done
  echo "fleet_png: no '$2' in $1" >&2; cat "$1" >&2; exit 1
}

stall=$(awk -v s="$speed" 'BEGIN { printf "%dms", 600000 / s }')
build/server/goodputd --data_dir="$work/data" --grpc_address=127.0.0.1:0 \
  --metrics_address=127.0.0.1:0 --stall_after="$stall" >"$work/goodputd.log" 2>&1 &
pids+=($!)
grpc=$(wait_log "$work/goodputd.log" 'listening on port ([0-9]+)')
metrics=$(wait_log "$work/goodputd.log" 'metrics on port ([0-9]+)')
build/agent/goodput-agent --server="127.0.0.1:$grpc" --socket="$work/agent.sock" \
  --spool_dir="$work/spool" --metrics_address=127.0.0.1:0 --batch_delay=100ms \
  >"$work/agent.log" 2>&1 &
pids+=($!)
agent=$(wait_log "$work/agent.log" 'metrics port ([0-9]+)')

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rules=$PWD/dashboards/rules
cat >"$work/prometheus.yml" <<CONFIG
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ['$rules/recording_fleet.yml', '$rules/recording_segments.yml']
scrape_configs:
  - job_name: goodputd
    static_configs: [{targets: ['127.0.0.1:$metrics']}]
  - job_name: goodput-agent
    static_configs: [{targets: ['127.0.0.1:$agent']}]
CONFIG
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$port" >"$work/prometheus.log" 2>&1 &
pids+=($!)
wait_log "$work/prometheus.log" '(Server is ready)' >/dev/null

echo "fleet_png: playing examples/fleet.jsonl at ${speed}x"
/usr/bin/python3 scripts/demo_feed.py --socket="$work/agent.sock" \
  --speed="$speed" examples/fleet.jsonl
# Wait until Prometheus has scraped every event as accepted.
events=$(grep -c . examples/fleet.jsonl)
query="$(/usr/bin/python3 -c 'import urllib.parse as u; print(u.quote("sum(goodput_ingest_events_total)"))')"
for _ in $(seq 300); do
  curl -fsS "127.0.0.1:$port/api/v1/query?query=$query" | grep -q "\"$events\"\]" && break
  sleep 0.1  # poll interval of the wait for the last scrape
done
RANGE=${RANGE:-3m} WINDOW_SIZE=${WINDOW_SIZE:-1400,1900} \
  dashboards/screenshot.sh "http://127.0.0.1:$port" "$out"
