#!/bin/sh
echo "remote_coverage_tools is stubbed out (offline build): coverage is unavailable" >&2
exit 1
