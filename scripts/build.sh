#!/usr/bin/env bash
# Installs dependencies (scripts/setup.sh), then configures and builds goodput
# with CMake + Ninja into build/ (RelWithDebInfo, 2 parallel jobs).
# Usage: scripts/build.sh [TARGET...]     (no target: build everything)
# Environment: BUILD_DIR (default build), BUILD_TYPE (default Release),
#              JOBS (default 2), SKIP_SETUP=1 to skip the package check,
#              SETUP=demo to install only what the demo needs (setup.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-Release}
JOBS=${JOBS:-2}

[[ "${SKIP_SETUP:-0}" == 1 ]] || bash scripts/setup.sh "${SETUP:-all}"

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
fi
targets=()
(($# == 0)) || targets=(--target "$@")
cmake --build "$BUILD_DIR" --parallel "$JOBS" "${targets[@]}"
