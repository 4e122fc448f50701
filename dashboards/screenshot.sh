#!/bin/bash
# Screenshots Prometheus's classic graph page showing fleet MPG (with SG, RG,
# PG) and the stacked badput breakdown, with headless Chromium.
#
#   dashboards/screenshot.sh PROMETHEUS_URL [OUT.png]
#
# PROMETHEUS_URL is a running Prometheus that loads dashboards/rules/ (e.g.
# http://127.0.0.1:9090); OUT.png defaults to goodput-fleet.png. Env:
#   RANGE=30m          graph range
#   MPG_EXPR=...       first graph's query (default: the fleet ratio rules)
#   BADPUT_EXPR=...    second graph's query (stacked)
#   CHROMIUM=chromium  browser binary
#   WINDOW_SIZE=1400,1600  browser window (and PNG) width,height
# Fails with a clear message when Prometheus is unreachable or a query has
# no data yet (exporter not scraped, or the recording rules not loaded).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 || $1 == --help || $1 == -h ]]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -ge 1 && ($1 == --help || $1 == -h) ]] && exit 0
  exit 2
fi
url=${1%/}
out=$(realpath -m "${2:-goodput-fleet.png}")
range=${RANGE:-30m}
mpg=${MPG_EXPR:-'{__name__=~"fleet:goodput_(mpg|sg|rg|pg):ratio_rate5m"}'}
badput=${BADPUT_EXPR:-'fleet:goodput_chip_seconds:rate5m{category!="productive"}'}
chromium=${CHROMIUM:-chromium}

encode() { /usr/bin/python3 -c 'import sys, urllib.parse as u; print(u.quote(sys.argv[1], safe=""))' "$1"; }

# has_data EXPR: the query returns at least one series now.
has_data() {
  local body
  if ! body=$(curl -fsS --max-time 10 "$url/api/v1/query?query=$(encode "$1")"); then
    echo "screenshot: cannot query $url (is Prometheus running?)" >&2
    exit 1
  fi
  [[ $body == *'"result":[{'* ]]
}

for expr in "$mpg" "$badput"; do
  if ! has_data "$expr"; then
    echo "screenshot: no data for $expr at $url (exporter not scraped yet, or" \
      "dashboards/rules/ not loaded)" >&2
    exit 1
  fi
done

page="$url/classic/graph?g0.expr=$(encode "$mpg")&g0.tab=0&g0.range_input=$range"
page+="&g1.expr=$(encode "$badput")&g1.tab=0&g1.stacked=1&g1.range_input=$range"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$profile" \
  --window-size="${WINDOW_SIZE:-1400,1600}" --virtual-time-budget=10000 \
  --screenshot="$out" "$page" >"$profile/chromium.log" 2>&1 || {
  cat "$profile/chromium.log" >&2
  echo "screenshot: $chromium failed" >&2
  exit 1
}
[[ -s $out ]] || { echo "screenshot: $chromium wrote no $out" >&2; exit 1; }
echo "screenshot: wrote $out ($page)"
