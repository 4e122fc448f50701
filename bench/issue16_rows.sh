#!/usr/bin/env bash
# Issue 16's four rows, one after another, on one Release build (BENCHMARKS.md
# section 20). Not a test; run by hand on a quiet machine:
#
#   bench/issue16_rows.sh BUILD_DIR PEER_GIT FLEET_JSONL
#
# BUILD_DIR: a Release build with ingest_bench, goodputctl, goodputd and
# goodput-agent. PEER_GIT: the git directory of ml-goodput-measurement
# (`fetch github:AI-Hypercomputer/ml-goodput-measurement`). FLEET_JSONL: the
# 10M-event fleet (`$B/bench/replay_bench gen-fleet FILE 10000 1000`).
# Prints each row's time and load average before it.
set -euo pipefail
B=${1:?BUILD_DIR}
peer=${2:?PEER_GIT}
fleet=${3:?FLEET_JSONL}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() {
  echo
  echo "=== $* ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))"
}
say "durable ingest, 1 agent"
"$B/bench/ingest_bench" throughput --reps=3 2>&1 | tail -8
say "durable ingest, 8 agents"
"$B/bench/ingest_bench" throughput --reps=3 --agents=8 2>&1 | tail -8
say "agent alone into a bare sink"
bench/run_process_benches.sh "$B" agent-sink 2>&1 | tail -8
say "goodputd <- goodput-agent"
bench/run_process_benches.sh "$B" agent 2>&1 | tail -8
say "replay of the 100k-step job vs the peer"
/usr/bin/python3 bench/peer_replay.py --goodputctl="$B/cli/goodputctl" \
  --peer_git="$peer" --runs=5 2>&1 | tail -12
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for i in 1 2 3; do
  say "replay of the 10M-event fleet on one core, run $i"
  /usr/bin/time -v taskset -c 1 "$B/cli/goodputctl" replay "$fleet" --json \
    > "$out/report.json" 2> "$out/time"
  grep -E 'Elapsed|User time|System time|Maximum resident' "$out/time"
  md5sum < "$out/report.json"
done
