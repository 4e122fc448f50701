#!/usr/bin/env bash
# Installs goodput's dependencies from Debian 12 packages.
# Idempotent: installs only what is missing, and runs `apt-get update` only
# then. Run as root (or with sudo).
#   scripts/setup.sh        everything: builds, tests, fuzzers, dashboards
#   scripts/setup.sh demo   only what building and running the demo needs
#                           (scripts/demo.sh, the README's main command)
set -euo pipefail

# THE lists of Debian packages the project needs. Add new ones here: to
# DEMO_PACKAGES only if building goodputd, goodput-agent, goodputctl and
# goodput-sim (or running them) needs it.
DEMO_PACKAGES=(
  g++ cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev librocksdb-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev         # CMake configures every target
  nlohmann-json3-dev libsimdjson-dev
  libre2-dev libyaml-cpp-dev        # logs/: log profiles (goodputctl, agent, run)
  libjemalloc2                      # goodputd's allocator
)
TEST_PACKAGES=(
  git
  clang libclang-rt-14-dev          # libFuzzer + sanitizers for clang
  bazel-bootstrap                   # Bazel 4.2.3, offline (see WORKSPACE)
  python3                           # use /usr/bin/python3 for any Python
  python3-venv python3-setuptools python3-wheel  # pip install clients/python
  openssl                           # tests make TLS certificates at run time
  python3-torch                     # examples/pytorch, tests/pytorch_job_test
  libbenchmark-dev                  # bench/
  python3-numpy python3-scipy python3-requests python3-urllib3  # bench/peer_replay.py
  # Dashboards: promtool + Prometheus, headless Chromium, node + npm (tsc)
  prometheus chromium nodejs
  rocksdb-tools                     # ldb: .ci/soak counts stored events
  nats-server libnats-dev           # cluster/: cluster mode on NATS JetStream
)
case "${1:-all}" in
  demo) PACKAGES=("${DEMO_PACKAGES[@]}") ;;
  all) PACKAGES=("${DEMO_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  *)
    echo "usage: scripts/setup.sh [all|demo]" >&2
    exit 2
    ;;
esac

# One dpkg-query for all: "name status" for each package dpkg knows.
declare -A have=()
while read -r name status; do
  [[ "$status" == installed ]] && have[$name]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PACKAGES[@]}" \
  2>/dev/null || true)
missing=()
for pkg in "${PACKAGES[@]}"; do
  [[ -n "${have[$pkg]:-}" ]] || missing+=("$pkg")
done

SUDO=()
if ((EUID != 0)); then
  SUDO=(sudo)
fi
updated=0
# apt_install PKG...: apt-get update once per run, then install.
apt_install() {
  if ((EUID != 0)) && ! command -v sudo >/dev/null 2>&1; then
    echo "setup: not root and no sudo; run as root: scripts/setup.sh" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ((updated == 0)); then
    "${SUDO[@]}" apt-get update -qq
    updated=1
  fi
  "${SUDO[@]}" apt-get install -y -qq "$@" </dev/null
}

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
else
  echo "setup: installing ${#missing[@]} missing package(s): ${missing[*]}"
  apt_install "${missing[@]}"
fi

# npm (the dashboards' tsc check): NodeSource's nodejs ships it, Debian's
# nodejs does not, and Debian's `npm` package conflicts with NodeSource's
# nodejs. So install `npm` only when the command is missing after nodejs.
if [[ "${1:-all}" == all ]] && ! command -v npm >/dev/null 2>&1; then
  echo "setup: nodejs came without npm; installing Debian's npm"
  apt_install npm
fi
echo "setup: done"
