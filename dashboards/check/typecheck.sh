#!/bin/sh
# Type-checks dashboards/grafana/*.json against @grafana/schema with tsc:
# check_dashboards.py writes each dashboard (and each panel's options) as a
# TypeScript object literal into gen/, typed by check.ts. Installs the pinned
# packages (package-lock.json) with `npm ci` when node_modules is missing;
# after that it runs offline.
set -eu
cd "$(dirname "$0")"
if [ ! -x node_modules/.bin/tsc ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
/usr/bin/python3 ../check_dashboards.py --skip_promtool --ts_out=gen
node_modules/.bin/tsc -p .
echo "typecheck: dashboards match @grafana/schema"
