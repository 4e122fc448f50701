#!/usr/bin/env bash
# Checks deploy/systemd's units: `systemd-analyze verify` says nothing,
# `systemd-analyze security` rates each at most 2.0 ("OK"), and the units'
# own command lines, with the example env files, start the real goodputd
# and goodput-agent (an event goes through). Skips (77) without systemd.
# Usage: units_test.sh GOODPUTD GOODPUT_AGENT GOODPUTCTL
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GOODPUTD=$(realpath "$1") AGENT=$(realpath "$2") CTL=$(realpath "$3")
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: no systemd-analyze on this machine"
  exit 77
fi
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do
    { kill -TERM "$p" && wait "$p"; } 2>/dev/null || true
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. The units as installed, with ExecStart pointing at the built binaries.
sed "s|/usr/local/bin/goodputd|$GOODPUTD|" "$HERE/goodputd.service" \
  >"$TMP/goodputd.service"
sed "s|/usr/local/bin/goodput-agent|$AGENT|" "$HERE/goodput-agent.service" \
  >"$TMP/goodput-agent.service"
for unit in goodputd goodput-agent; do
  out=$(cd "$TMP" && systemd-analyze verify "./$unit.service" 2>&1) ||
    fail "$unit.service: systemd-analyze verify failed: $out"
  [[ -z "$out" ]] || fail "$unit.service: systemd-analyze verify: $out"
  level=$(cd "$TMP" && systemd-analyze security --offline=true \
    "./$unit.service" 2>&1 | sed -n 's/.*Overall exposure level for.*: \([0-9.]*\).*/\1/p')
  [[ -n "$level" ]] || fail "$unit.service: no exposure level"
  awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }' ||
    fail "$unit.service: exposure $level > 2.0"
  echo "$unit.service: verify clean, exposure $level"
done

# 2. The ExecStart lines with the example env files, as systemd expands
# them (${NAME} and $NAME from Environment= and EnvironmentFile=).
# exec_line UNIT: the ExecStart command with continuation lines joined.
exec_line() {
  sed -n '/^ExecStart=/,/[^\\]$/p' "$1" | sed 's/^ExecStart=//; s/\\$//' |
    tr -d '\n'
}
# expand UNIT ENVFILE: the command line with the unit's Environment=
# defaults, then the env file, then the test's overrides.
expand() {
  (
    eval "$(sed -n 's/^Environment=\(.*\)$/export \1/p' "$1")"
    set -a; . "$2"; set +a
    export STATE_DIRECTORY=$TMP/state RUNTIME_DIRECTORY=$TMP/run
    export GOODPUTD_GRPC_ADDRESS=127.0.0.1:0 GOODPUTD_METRICS_ADDRESS=127.0.0.1:0
    export GOODPUT_AGENT_METRICS_ADDRESS=127.0.0.1:0
    export GOODPUT_SERVER=${SERVER:-}
    eval "echo $(exec_line "$1")"
  )
}
mkdir -p "$TMP/state" "$TMP/run"
read -r -a cmd <<<"$(expand "$TMP/goodputd.service" "$HERE/goodputd.env")"
"${cmd[@]}" >"$TMP/goodputd.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do
  grep -q "listening on port" "$TMP/goodputd.log" && break
  sleep 0.1
done
port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$TMP/goodputd.log")
[[ -n "$port" ]] || fail "goodputd did not start: $(cat "$TMP/goodputd.log")"
read -r -a cmd <<<"$(SERVER=127.0.0.1:$port expand \
  "$TMP/goodput-agent.service" "$HERE/goodput-agent.env")"
"${cmd[@]}" >"$TMP/agent.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do [[ -S "$TMP/run/agent.sock" ]] && break; sleep 0.1; done
[[ -S "$TMP/run/agent.sock" ]] || fail "agent did not start: $(cat "$TMP/agent.log")"
"$CTL" emit --socket="$TMP/run/agent.sock" job_submitted --job_id=unit-job \
  --chips=8 --accelerator=h100 >/dev/null ||
  fail "goodputctl emit to the agent's socket failed"
for _ in $(seq 300); do
  "$CTL" --server="127.0.0.1:$port" jobs 2>/dev/null | grep -q unit-job && break
  sleep 0.1
done
"$CTL" --server="127.0.0.1:$port" jobs | grep -q unit-job ||
  fail "the event did not reach goodputd"
echo "PASS: units verified; their command lines run goodputd and the agent"
