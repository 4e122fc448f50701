#!/bin/sh
# Runs one check command as a Bazel sh_test (cwd: the runfiles tree, where
# dashboards/... and docs/metrics.md are the declared data files).
exec "$@"
