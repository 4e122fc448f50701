#!/usr/bin/env bash
# THE test command (CI runs it through .ci/run). Run as root on Debian 12:
#
#   scripts/test.sh
#
# Stages, in order; the first failing one stops the run with a non-zero exit:
#   1. setup        scripts/setup.sh (installs only missing packages)
#   2. bazel build  every Bazel target but the tests (libraries, binaries,
#                   test helpers, generated code; fastbuild, clang)
#   3. bazel test   builds and runs the unit tests of the pure and storage
#                   packages (BAZEL_TESTS); the whole suite runs under ASan in
#                   stage 8, and .ci/nightly runs `bazel test //...`.
#                   BAZEL_TESTS=//... runs all of it here too.
#   4. asan build   CMake+Ninja, clang++ -O0, -DGOODPUT_SANITIZE=ON
#                   (ASan+UBSan), build-asan/: every target but bench/ (the
#                   benchmarks are built by Bazel and run by .ci/nightly).
#                   The sanitizer builds (4, 5, 7) compile with one
#                   precompiled header (cmake/pch.h, GOODPUT_PCH): about 45%
#                   less compile time; PCH=OFF turns it off.
#   5. fuzz build   clang++ libFuzzer targets (*_fuzzer), build-fuzz/
#   6. fuzz run     each fuzzer for FUZZ_SECONDS (default 15) over its corpus
#   7. tsan         CMake+Ninja, clang++ -O0, -DGOODPUT_TSAN=ON (ThreadSanitizer),
#                   build-tsan/: builds only the tsan_tests target (the
#                   concurrent code's tests over in-memory fakes,
#                   cmake/tsan.cmake) and runs ctest -L tsan
#   8. asan ctest   every test (ctest) in build-asan/: LAST, so the output ends
#                   with ctest's "N% tests passed, ..." summary.
# There is no separate Release test build: the whole suite runs once, under
# ASan+UBSan. The Release build in build/ is scripts/build.sh's (the demo's).
# Why clang -O0: on this 2-core machine it compiles the suite about 3x faster
# than g++ -O1 (CI's 20-minute budget), and ASan+UBSan find the same bugs.
#
# Fuzzer convention (stages 6-7). In any directory's CMakeLists.txt:
#     if(GOODPUT_FUZZ)
#       add_executable(foo_fuzzer foo_fuzzer.cc)   # defines LLVMFuzzerTestOneInput
#       target_link_libraries(foo_fuzzer PRIVATE ...)
#     endif()
# and optionally seeds in <dir>/testdata/corpus/foo_fuzzer/ (one input per
# file) and a dictionary <dir>/testdata/foo_fuzzer.dict (or the only *.dict in
# that testdata/). Nothing else: this script configures build-fuzz/ with
# clang++, -DGOODPUT_FUZZ=ON, -DGOODPUT_SANITIZE=ON and cmake/fuzz.cmake
# (compiles everything with -fsanitize=fuzzer-no-link, links *_fuzzer targets
# with -fsanitize=fuzzer so libFuzzer supplies main), and builds only the
# *_fuzzer targets. The checked-in corpus is read, never written: new inputs
# go to build-fuzz/corpus/<name>/ and crashes to build-fuzz/artifacts/.
# By hand:
#     cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
#       -DGOODPUT_FUZZ=ON -DGOODPUT_SANITIZE=ON \
#       -DCMAKE_PROJECT_INCLUDE=$PWD/cmake/fuzz.cmake
#     cmake --build build-fuzz --target foo_fuzzer
#     build-fuzz/codec/foo_fuzzer -max_total_time=60 codec/testdata/corpus/foo_fuzzer
#
# Environment knobs (for developers; CI uses the defaults):
#   JOBS=2  FUZZ_SECONDS=15  BAZEL_TESTS='//core/... ...'  PCH=ON
#   SKIP_BAZEL=1  SKIP_ASAN=1  SKIP_TSAN=1  SKIP_FUZZ=1
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

JOBS=${JOBS:-2}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
export HOME=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CTEST_OUTPUT_ON_FAILURE=1
BAZEL_FLAGS=(--config=ci)
read -r -a BAZEL_TESTS <<<"${BAZEL_TESTS:-//core/... //codec/... //util/... //storage/... //cluster/...}"
# The sanitizer builds' compiler (CXX=g++ works too, about 3x slower).
SAN_CXX=${SAN_CXX:-clang++}
# One precompiled header for the sanitizer builds (cmake/pch.cmake).
PCH=${PCH:-ON}

T_START=$EPOCHREALTIME
TIMES=()

banner() { printf '\n======== %s ========\n' "$*"; }

elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

print_times() {
  banner "stage times"
  local line
  for line in "${TIMES[@]}"; do echo "$line"; done
  printf '%-22s %8ss\n' "total so far" "$(elapsed "$T_START")"
}

# run_stage NAME CMD...: runs CMD in a subshell with `set -e`, times it, and
# stops the whole run if it fails.
run_stage() {
  local name=$1
  shift
  banner "$name"
  local t0=$EPOCHREALTIME rc=0
  set +e
  (
    set -e
    "$@"
  )
  rc=$?
  set -e
  local dt
  dt=$(elapsed "$t0")
  TIMES+=("$(printf '%-22s %8ss%s' "$name" "$dt" "$( ((rc == 0)) || echo "  FAILED (exit $rc)")")")
  if ((rc != 0)); then
    echo "test.sh: stage '$name' FAILED (exit $rc) after ${dt}s" >&2
    print_times
    exit "$rc"
  fi
  echo "-- $name: ok, ${dt}s"
}

skip_stage() {
  banner "$1"
  echo "skipped: $2"
  TIMES+=("$(printf '%-22s %9s  (%s)' "$1" "skipped" "$2")")
}

BAZEL_USED=0
cleanup() {
  if ((BAZEL_USED)); then bazel shutdown >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# ---------------------------------------------------------------- stages

stage_setup() { bash scripts/setup.sh; }

# Every target but the tests: their sources are compiled (and run) in the
# ASan build; compiling them twice would not fit CI's 20 minutes on 2 cores.
stage_bazel_build() {
  local targets
  targets=$(bazel query --config=ci 'kind(".*", //...) except kind("test", //...)')
  bazel build "${BAZEL_FLAGS[@]}" -- $targets
}

stage_bazel_test() {
  local rc=0
  bazel test "${BAZEL_FLAGS[@]}" --test_output=errors "${BAZEL_TESTS[@]}" || rc=$?
  # 4 = build fine but no test targets in the workspace: not an error here.
  if ((rc == 4)); then
    echo "bazel: no test targets found"
    rc=0
  fi
  bazel shutdown
  return "$rc"
}

cmake_configure() { # DIR ARGS...
  local dir=$1
  shift
  cmake -S "$ROOT" -B "$dir" -G Ninja "$@"
}

stage_asan_build() {
  cmake_configure build-asan -DCMAKE_CXX_COMPILER="$SAN_CXX" \
    -DGOODPUT_SANITIZE=ON -DGOODPUT_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O0 -gline-tables-only" -DGOODPUT_PCH="$PCH" \
    -DGOODPUT_REQUIRE_NATS=ON
  cmake --build build-asan --parallel "$JOBS"
}

# One more test than cores: many tests wait on child processes and sockets.
stage_asan_ctest() {
  ctest --test-dir build-asan --output-on-failure --parallel "$((JOBS + 1))"
}

stage_tsan() {
  cmake_configure build-tsan -DCMAKE_CXX_COMPILER="$SAN_CXX" -DGOODPUT_TSAN=ON \
    -DGOODPUT_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O0 -gline-tables-only" -DGOODPUT_PCH="$PCH"
  cmake --build build-tsan --parallel "$JOBS" --target tsan_tests
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} \
    ctest --test-dir build-tsan -L tsan --output-on-failure --parallel "$JOBS"
}

# Lists the CMake targets named *_fuzzer in build-fuzz/.
fuzz_targets() {
  ninja -C build-fuzz -t targets all |
    sed -n -e '/^cmake_/d' -e 's/^\([A-Za-z0-9_.+-]*_fuzzer\): phony$/\1/p' |
    sort -u
}

has_fuzzers() {
  find . \( -name node_modules -o -name .git \) -prune -o -path './build*' -prune -o \
    -path './bazel-*' -prune -o -name CMakeLists.txt -print0 |
    xargs -0 -r grep -lE '[A-Za-z0-9_}]_fuzzer\b' \
      >/dev/null 2>&1
}

stage_fuzz_build() {
  cmake_configure build-fuzz -DCMAKE_CXX_COMPILER=clang++ \
    -DGOODPUT_FUZZ=ON -DGOODPUT_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
    -DCMAKE_PROJECT_INCLUDE="$ROOT/cmake/fuzz.cmake" -DGOODPUT_PCH="$PCH"
  local targets
  mapfile -t targets < <(fuzz_targets)
  if ((${#targets[@]} == 0)); then
    echo "no *_fuzzer targets configured"
    return 0
  fi
  echo "fuzzers: ${targets[*]}"
  cmake --build build-fuzz --parallel "$JOBS" --target "${targets[@]}"
}

stage_fuzz_run() {
  local targets name bin corpus dict f log failed=0
  mapfile -t targets < <(fuzz_targets)
  mkdir -p build-fuzz/artifacts
  for name in "${targets[@]}"; do
    bin=$(find build-fuzz -type f -name "$name" -perm -u+x | head -1)
    if [[ -z "$bin" ]]; then
      echo "$name: binary not found" >&2
      failed=1
      continue
    fi
    mkdir -p "build-fuzz/corpus/$name"
    local args=(-max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048
      -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$name-"
      "build-fuzz/corpus/$name")
    local seeds="" first=""
    for corpus in */testdata/corpus/"$name"; do
      if [[ -d "$corpus" ]]; then
        args+=("$corpus")
        seeds+=" $corpus"
        [[ -n "$first" ]] || first=$corpus
      fi
    done
    # Dictionary: <dir>/testdata/<name>.dict, else the only *.dict in the
    # testdata/ that holds the fuzzer's corpus.
    dict=""
    for f in */testdata/"$name".dict; do
      if [[ -f "$f" ]]; then dict=$f; fi
    done
    if [[ -z "$dict" && -n "$first" ]]; then
      local dicts
      mapfile -t dicts < <(find "${first%/corpus/*}" -maxdepth 1 -name '*.dict')
      if ((${#dicts[@]} == 1)); then dict=${dicts[0]}; fi
    fi
    if [[ -n "$dict" ]]; then args=(-dict="$dict" "${args[@]}"); fi
    log=build-fuzz/$name.log
    echo "$name: ${FUZZ_SECONDS}s, seeds:${seeds:- none}, dict: ${dict:-none}"
    if "$bin" "${args[@]}" >"$log" 2>&1; then
      echo "  $(grep -E '^Done [0-9]+ runs' "$log" | tail -1)" \
        "$(grep -E '^stat::peak_rss_mb' "$log" | tail -1)"
    else
      echo "$name FAILED; last lines of $log:" >&2
      tail -n 60 "$log" >&2
      failed=1
    fi
  done
  return "$failed"
}

# ---------------------------------------------------------------- run

echo "goodput test: $(date -u +%FT%TZ) on $(nproc) cores, JOBS=$JOBS"
run_stage "setup" stage_setup

if [[ "${SKIP_BAZEL:-0}" == 1 ]]; then
  skip_stage "bazel build" "SKIP_BAZEL=1"
else
  BAZEL_USED=1
  run_stage "bazel build" stage_bazel_build
  run_stage "bazel test" stage_bazel_test
fi

if [[ "${SKIP_ASAN:-0}" == 1 ]]; then
  skip_stage "asan build" "SKIP_ASAN=1"
else
  run_stage "asan build" stage_asan_build
fi

if [[ "${SKIP_FUZZ:-0}" == 1 ]]; then
  skip_stage "fuzz" "SKIP_FUZZ=1"
elif ! has_fuzzers; then
  skip_stage "fuzz" "no *_fuzzer targets in any CMakeLists.txt"
else
  run_stage "fuzz build" stage_fuzz_build
  run_stage "fuzz run" stage_fuzz_run
fi

if [[ "${SKIP_TSAN:-0}" == 1 ]]; then
  skip_stage "tsan" "SKIP_TSAN=1"
else
  run_stage "tsan" stage_tsan
fi

print_times
if [[ "${SKIP_ASAN:-0}" == 1 ]]; then exit 0; fi
banner "asan ctest (build-asan/)"
stage_asan_ctest
