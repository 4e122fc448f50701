#!/usr/bin/env bash
# The Python recorder installs as a package and works installed: a venv
# (Debian's python3-venv, with the system's setuptools and wheel, offline:
# --no-index --no-build-isolation), `pip install` of a copy of
# clients/python, then the client's own unit tests run from outside the
# source tree, importing the installed `goodput`. Needs GOODPUTCTL (the
# wire-format check) like python_client_test.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp -r "$SRC" "$TMP/src"
rm -rf "$TMP/src/build" "$TMP/src"/*.egg-info
/usr/bin/python3 -m venv --system-site-packages "$TMP/venv"
"$TMP/venv/bin/pip" install --quiet --no-index --no-build-isolation \
  --no-cache-dir "$TMP/src"
mkdir "$TMP/run"
cp -r "$SRC/tests" "$TMP/run/tests"
cd "$TMP/run"
where=$("$TMP/venv/bin/python" -c 'import goodput; print(goodput.__file__)')
[[ "$where" == "$TMP/venv/"* ]] ||
  { echo "FAIL: goodput imported from $where, not the venv" >&2; exit 1; }
PYTHONDONTWRITEBYTECODE=1 "$TMP/venv/bin/python" -m unittest discover \
  -s tests -t . 2>&1 | tail -3
echo "PASS: pip-installed goodput $("$TMP/venv/bin/pip" show goodput |
  sed -n 's/^Version: //p') works from $where"
