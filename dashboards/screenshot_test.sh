#!/bin/bash
# Test of screenshot.sh against a real Prometheus on loopback whose rules
# record constant series under the names the screenshot queries (the real
# exporter is not needed). Checks that the PNG is written and that a query
# without data fails with a message. SCREENSHOT_KEEP=FILE keeps the PNG.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
promtool_dir=$(dirname "$(command -v "${PROMETHEUS:-prometheus}")")
work=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && { wait "$pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/rules.yml" <<'RULES'
groups:
  - name: fake_goodput
    rules:
      - {record: 'fleet:goodput_mpg:ratio_rate5m', expr: 'vector(0.42)'}
      - {record: 'fleet:goodput_sg:ratio_rate5m', expr: 'vector(0.9)'}
      - {record: 'fleet:goodput_rg:ratio_rate5m', expr: 'vector(0.7)'}
      - {record: 'fleet:goodput_pg:ratio_rate5m', expr: 'vector(0.66)'}
      - {record: 'fleet:goodput_chip_seconds:rate5m', expr: 'label_replace(vector(12), "category", "lost", "", "")'}
      - {record: 'fleet:goodput_chip_seconds:rate5m', expr: 'label_replace(vector(30), "category", "queued", "", "")'}
RULES
cat >"$work/prometheus.yml" <<'CONFIG'
global: {evaluation_interval: 1s}
rule_files: [rules.yml]
CONFIG
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port"
"$promtool_dir/prometheus" --config.file="$work/prometheus.yml" \
  --storage.tsdb.path="$work/data" --web.listen-address="127.0.0.1:$port" \
  >"$work/prometheus.log" 2>&1 &
pid=$!

# Wait (up to 60 s) until the rules have produced both series.
ready() {
  curl -fsS "$url/api/v1/query?query=count(%7B__name__%3D~%22fleet%3A.*%22%7D)" 2>/dev/null |
    grep -q '"value":\[[0-9.]*,"6"\]'
}
for _ in $(seq 600); do
  ready && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/prometheus.log"; exit 1; }
  sleep 0.1  # poll interval of the wait for the condition above
done
ready || { echo "FAIL: Prometheus did not record the rules"; cat "$work/prometheus.log"; exit 1; }

"$here/screenshot.sh" "$url" "$work/out.png"
magic=$(head -c 8 "$work/out.png" | od -An -tx1 | tr -d ' \n')
size=$(stat -c %s "$work/out.png")
[[ $magic == 89504e470d0a1a0a ]] || { echo "FAIL: out.png is not a PNG"; exit 1; }
((size > 20000)) || { echo "FAIL: out.png is only $size bytes"; exit 1; }

if MPG_EXPR=goodput_no_such_metric "$here/screenshot.sh" "$url" "$work/none.png" 2>"$work/err"; then
  echo "FAIL: screenshot.sh succeeded without data"; exit 1
fi
grep -q 'no data for goodput_no_such_metric' "$work/err" || { cat "$work/err"; exit 1; }
[[ ! -e $work/none.png ]] || { echo "FAIL: wrote a screenshot without data"; exit 1; }
[[ -n ${SCREENSHOT_KEEP:-} ]] && cp "$work/out.png" "$SCREENSHOT_KEEP"
echo "PASS: screenshot $size bytes; a query without data fails"
