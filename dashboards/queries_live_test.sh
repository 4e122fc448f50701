#!/bin/bash
# Runs every dashboard query against a real Prometheus that scrapes
# fake_exporter.py (every docs/metrics.md family) and evaluates the recording
# rules: each query must return series with the labels its legend names, which
# catches what parsing cannot (vector matching errors, wrong label names).
# Also checks that the fake serves every family the rules and dashboards use,
# and only documented ones.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && { wait "$p" 2>/dev/null || true; }; done
  rm -rf "$work"
}
trap cleanup EXIT

/usr/bin/python3 - "$here" <<'PY'
import glob, json, sys
sys.path.insert(0, sys.argv[1])
import check_dashboards as c, fake_exporter
doc = c.documented_metrics(sys.argv[1] + "/../docs/metrics.md")
records, rules = c.rule_exprs()
exprs = [e for _, e in rules]
for path in glob.glob(sys.argv[1] + "/grafana/*.json"):
    for p in c.all_panels(json.load(open(path))):
        exprs += [t["expr"] for t in p.get("targets", [])]
used = {n for e in exprs for n in c.metric_names(e)} - records - c.PROMETHEUS_SERIES
served = set()
for name, (kind, _) in fake_exporter.FAMILIES.items():
    served |= {name + s for s in ("_bucket", "_sum", "_count")} \
        if kind == "histogram" else {name}
if not used <= served <= doc | c.EXTERNAL_SERIES:
    sys.exit("FAIL: fake_exporter.py must serve what the rules and dashboards "
             "use %s and only documented families %s" %
             (sorted(used - served), sorted(served - doc)))
PY

# wait_for FILE PATTERN: the file (a process's output) has a line matching.
wait_for() {
  for _ in $(seq 600); do
    grep -q "$2" "$1" && return 0
    sleep 0.1  # poll interval of the wait for the line
  done
  echo "FAIL: no '$2' in $1"; cat "$1"; exit 1
}

/usr/bin/python3 "$here/fake_exporter.py" --port=0 >"$work/fake.log" 2>&1 &
pids+=($!)
wait_for "$work/fake.log" 'fake_exporter: port'
fake_port=$(sed -n 's/^fake_exporter: port //p' "$work/fake.log")

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port"
cat >"$work/prometheus.yml" <<CONFIG
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files:
  - $here/rules/recording_fleet.yml
  - $here/rules/recording_segments.yml
  - $here/rules/recording_dcgm.yml
scrape_configs:
  - job_name: goodputd
    static_configs: [{targets: ['127.0.0.1:$fake_port']}]
CONFIG
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$port" >"$work/prometheus.log" 2>&1 &
pids+=($!)

# Ready when a recording group has values from two scrapes or more; the
# others start at random offsets, so the check below retries for a while.
ready() {
  curl -fsS "$url/api/v1/query?query=size:goodput_mpg:ratio_rate1h" 2>/dev/null |
    grep -q '"result":\[{'
}
for _ in $(seq 600); do
  ready && break
  sleep 0.1  # poll interval of the wait for the condition above
done
ready || { echo "FAIL: no recorded series"; cat "$work/prometheus.log"; exit 1; }

/usr/bin/python3 "$here/check_dashboards.py" --prometheus="$url" --wait_seconds=60
echo "PASS: every dashboard query returns series with its legend's labels"
