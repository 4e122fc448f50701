#!/usr/bin/env bash
# Times the README's main command on a fresh Debian 12: from the start of
# scripts/demo.sh to the first `FLEET` line of `goodputctl top`, in a podman
# container whose root is a fresh `mmdebstrap --variant=important` bookworm
# (plus git and ca-certificates) holding a clone of this repository.
# Needs root, mmdebstrap, podman and the Debian mirror. BENCHMARKS.md 11.
#   bench/first_view.sh [ROOT]     (default /tmp/fresh-root, rebuilt)
set -euo pipefail
ROOT=${1:-/tmp/fresh-root}
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rm -rf "$ROOT"
mmdebstrap --quiet --variant=important --include=ca-certificates,git \
  bookworm "$ROOT" - </etc/apt/sources.list.d/debian.sources
git clone -q "$SRC" "$ROOT/src"
podman --runtime=runc --cgroup-manager=cgroupfs run --rm --network host \
  --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --rootfs "$ROOT" \
  bash -c 'cd /src && start=$(date +%s)
    (timeout 1200 scripts/demo.sh 2>&1 | tee /tmp/demo.out |
      { grep -m1 "FLEET" >/dev/null
        echo "first view after $(( $(date +%s) - start )) s"; }) || true'
