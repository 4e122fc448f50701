#!/usr/bin/env bash
# THE main command: installs dependencies, builds goodputctl, and replays the
# example fleet (examples/fleet.jsonl) offline, printing the goodput table
# (SG x RG x PG = MPG per job, fleet and segment). Run as root on Debian 12:
#
#   scripts/demo.sh
#
# Later this will also start the live pipeline (goodputd + goodput-agent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FLEET=${FLEET:-examples/fleet.jsonl}

bash scripts/build.sh goodputctl

CTL=build/cli/goodputctl
if [[ ! -x "$CTL" ]]; then
  echo "demo: $CTL was not built" >&2
  exit 1
fi
if [[ ! -f "$FLEET" ]]; then
  echo "demo: $FLEET not found" >&2
  exit 1
fi

printf '\n$ %s replay %s\n' "$CTL" "$FLEET"
"$CTL" replay "$FLEET"
