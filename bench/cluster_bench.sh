#!/usr/bin/env bash
# Cluster mode benchmarks (issue 20; results in BENCHMARKS.md). Not a test.
#
#   bench/cluster_bench.sh BUILD ingest [JOBS STEPS]
#       The same `ingest_bench stream` load (JOBS x STEPS events, default
#       1000 x 100) into (a) one embedded goodputd and (b) one goodputd
#       --cluster over a 3-node nats-server cluster on loopback ports (R=3).
#       Prints each one's acked ev/s (for (b): stored in JetStream on a
#       quorum) and, for (b), the time until the instance applied every
#       event (goodput_ingest_events_total{result="accepted"}).
#
#   bench/cluster_bench.sh BUILD takeover [JOBS STEPS]
#       Two goodputd --cluster instances (PARTITIONS partitions, default 8,
#       --cluster_lease_ttl 3s, plus GOODPUTD_FLAGS, e.g.
#       --cluster_snapshot_events=100000) share the load; once both applied
#       their share, the second is killed with SIGKILL and the time until
#       the first's /metrics are current is printed: the sum of
#       goodput_job_steps_total over every job equals the two instances'
#       sum before the kill (so JOBS must be at most --max_job_series,
#       1000). Also the events the survivor applied meanwhile (from a
#       partition snapshot it imports only the tail; without one, b's whole
#       share). With PERF_DATA=FILE, the survivor is profiled (`perf record
#       -g`) from the kill until it is current.
#
#   bench/cluster_bench.sh BUILD query [JOBS STEPS]
#       Two goodputd --cluster instances share the load as for takeover;
#       once both applied it, `goodputctl report --json`, `jobs` and
#       `fleet` run QUERIES (default 20) times each (a) through one instance,
#       which fans out to the other and merges ("one view whoever you
#       ask"), and (b) over the list of both, merged by goodputctl. Prints
#       the mean wall time per command of each, in the same run.
set -euo pipefail
usage="usage: cluster_bench.sh BUILD ingest|takeover|query [JOBS STEPS]"
build=${1:?$usage}
mode=${2:?$usage}
jobs=${3:-1000}
steps=${4:-100}
partitions=${PARTITIONS:-8}
read -r -a extra_flags <<< "${GOODPUTD_FLAGS:-}"
work=$(mktemp -d /tmp/cluster-bench-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
now() { date +%s.%N; }
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() {
  local p
  while :; do p=$(( 20000 + RANDOM % 30000 )); port_free "$p" && break; done
  echo "$p"
}

start_nats() {
  local cports=() rports=() routes="" i
  for i in 0 1 2; do cports+=("$(pick_port)"); rports+=("$(pick_port)"); done
  for i in 0 1 2; do
    routes+="nats-route://127.0.0.1:${rports[$i]}"
    [[ $i -lt 2 ]] && routes+=", "
  done
  for i in 0 1 2; do
    cat > "$work/n$i.conf" <<EOF
server_name: n$i
listen: 127.0.0.1:${cports[$i]}
jetstream { store_dir: "$work/js$i" }
cluster {
  name: goodput-bench
  listen: 127.0.0.1:${rports[$i]}
  routes: [$routes]
}
EOF
    nats-server -c "$work/n$i.conf" > "$work/n$i.log" 2>&1 &
    pids+=("$!")
  done
  nats_urls="nats://127.0.0.1:${cports[0]},nats://127.0.0.1:${cports[1]},nats://127.0.0.1:${cports[2]}"
  for _ in $(seq 1 300); do
    grep -q "JetStream cluster new metadata leader\|Self is new JetStream cluster metadata leader" \
      "$work"/n*.log 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no JetStream meta leader"; tail "$work"/n*.log; exit 1
}

# start_goodputd NAME [FLAGS...]: sets gport and mport.
start_goodputd() {
  local name=$1; shift
  "$build/server/goodputd" --data_dir="$work/db-$name" \
    --grpc_address=127.0.0.1:0 --metrics_address=127.0.0.1:0 "$@" \
    > "$work/$name.log" 2>&1 &
  pids+=("$!")
  last_pid=$!
  gport=""; mport=""
  for _ in $(seq 1 600); do
    gport=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$work/$name.log" | head -1)
    mport=$(sed -n 's/.*metrics on port \([0-9]*\).*/\1/p' "$work/$name.log" | head -1)
    [[ -n "$gport" && -n "$mport" ]] && return 0
    sleep 0.05
  done
  echo "goodputd $name did not start:"; cat "$work/$name.log"; exit 1
}

metric() {  # metric MPORT 'NAME{labels}' -> value or 0
  curl -s "http://127.0.0.1:$1/metrics" |
    awk -v n="$2" 'index($0, n " ") == 1 {print $2; f=1} END {if (!f) print 0}'
}
accepted() { metric "$1" 'goodput_ingest_events_total{result="accepted"}'; }
steps() {  # steps MPORT: the sum of goodput_job_steps_total over every job
  curl -s "http://127.0.0.1:$1/metrics" |
    awk 'index($0, "goodput_job_steps_total{") == 1 {s += $2} END {printf "%d\n", s}'
}

wait_accepted() {  # wait_accepted MPORT N: until accepted >= N (600 s)
  for _ in $(seq 1 6000); do
    [[ $(accepted "$1" | cut -d. -f1) -ge $2 ]] && return 0
    sleep 0.1
  done
  echo "only $(accepted "$1") of $2 applied"; return 1
}

# wait_split AMPORT BMPORT: until b holds partitions and the two all of
# them (a too, unless rendezvous hashing gives b every one: few partitions).
wait_split() {
  local a b
  for _ in $(seq 1 300); do
    a=$(metric "$1" goodput_cluster_partitions_held)
    b=$(metric "$2" goodput_cluster_partitions_held)
    [[ ("$a" != 0 || "$partitions" -lt 4) && "$b" != 0 &&
       $(( a + b )) == "$partitions" ]] && break
    sleep 0.1
  done
  echo "held: a $a, b $b"
}

wait_both() {  # wait_both AMPORT BMPORT N: until the two accepted >= N together
  local sum
  for _ in $(seq 1 6000); do
    sum=$(( $(accepted "$1" | cut -d. -f1) + $(accepted "$2" | cut -d. -f1) ))
    [[ $sum -ge $3 ]] && break
    sleep 0.1
  done
}

stream() {  # stream GPORT: prints ingest_bench's line, sets sent
  local out
  out=$("$build/bench/ingest_bench" stream --target="127.0.0.1:$1" \
    --jobs="$jobs" --steps="$steps")
  echo "$out"
  sent=$(echo "$out" | sed -n 's/.* events=\([0-9]*\) .*/\1/p' | head -1)
}

case "$mode" in
  ingest)
    start_goodputd embedded
    echo "== embedded goodputd"
    stream "$gport"
    start_nats
    start_goodputd cluster --cluster="$nats_urls" --cluster_id=bench-0 \
      --cluster_partitions=8
    for _ in $(seq 1 300); do
      [[ $(metric "$mport" goodput_cluster_partitions_held) == 8 ]] && break
      sleep 0.1
    done
    echo "== goodputd --cluster (3 nats-server, R=3)"
    t0=$(now)
    stream "$gport"
    t1=$(now)
    wait_accepted "$mport" "$sent"
    t2=$(now)
    echo "cluster: stream acked in $(echo "$t1 - $t0" | bc) s;" \
      "every event applied $(echo "$t2 - $t0" | bc) s after the start" \
      "($(accepted "$mport") accepted)"
    ;;
  takeover)
    start_nats
    start_goodputd a --cluster="$nats_urls" --cluster_id=bench-a \
      --cluster_partitions="$partitions" --cluster_lease_ttl=3s \
      "${extra_flags[@]}"
    apid=$last_pid; aport=$gport; amport=$mport
    start_goodputd b --cluster="$nats_urls" --cluster_id=bench-b \
      --cluster_partitions="$partitions" --cluster_lease_ttl=3s \
      "${extra_flags[@]}"
    bpid=$last_pid; bmport=$mport
    wait_split "$amport" "$bmport"
    stream "$aport"
    wait_both "$amport" "$bmport" "$sent"
    a_before=$(accepted "$amport" | cut -d. -f1)
    b_applied=$(accepted "$bmport" | cut -d. -f1)
    want=$(( $(steps "$amport") + $(steps "$bmport") ))
    echo "applied before the kill: a $a_before, b $b_applied; steps $want"
    if [[ -n "${PERF_DATA:-}" ]]; then
      perf record -g -o "$PERF_DATA" -p "$apid" > "$work/perf.log" 2>&1 &
      perf_pid=$!
      sleep 1  # perf attached
    fi
    t0=$(now)
    kill -9 "$bpid"
    for _ in $(seq 1 6000); do  # b's leases expired and a took them
      [[ $(metric "$amport" goodput_cluster_partitions_held) == "$partitions" ]] && break
      sleep 0.05
    done
    th=$(now)
    for _ in $(seq 1 12000); do  # a's /metrics current
      [[ $(steps "$amport") -ge $want ]] && break
      sleep 0.05
    done
    t1=$(now)
    if [[ -n "${PERF_DATA:-}" ]]; then
      kill -INT "$perf_pid"; wait "$perf_pid" || true
    fi
    held=$(metric "$amport" goodput_cluster_partitions_held)
    tail_events=$(( $(accepted "$amport" | cut -d. -f1) - a_before ))
    echo "takeover: a current (steps $(steps "$amport") of $want, holds" \
      "$held) $(echo "$t1 - $t0" | bc) s after kill -9 (lease TTL 3 s):" \
      "held all $partitions partitions after $(echo "$th - $t0" | bc) s," \
      "current $(echo "$t1 - $th" | bc) s later; applied $tail_events of" \
      "b's $b_applied events (imported snapshots:" \
      "$(metric "$amport" goodput_cluster_snapshots_imported_total))"
    ;;
  query)
    queries=${QUERIES:-20}
    start_nats
    start_goodputd a --cluster="$nats_urls" --cluster_id=bench-a \
      --cluster_partitions=8
    aport=$gport; amport=$mport
    start_goodputd b --cluster="$nats_urls" --cluster_id=bench-b \
      --cluster_partitions=8
    bport=$gport; bmport=$mport
    wait_split "$amport" "$bmport"
    stream "$aport"
    wait_both "$amport" "$bmport" "$sent"
    ctl() { "$build/cli/goodputctl" --server="$1" "${@:2}" > /dev/null; }
    per_call() {  # per_call SERVER ARGS...: mean ms of $queries runs
      local t0 t1 i
      ctl "$@"  # warm up (and fail loudly)
      t0=$(now)
      for i in $(seq 1 "$queries"); do ctl "$@"; done
      t1=$(now)
      echo "scale=1; ($t1 - $t0) * 1000 / $queries" | bc
    }
    one="127.0.0.1:$aport"; both="127.0.0.1:$aport,127.0.0.1:$bport"
    for q in "report --json" "jobs --limit=10 --json" "fleet --json"; do
      # shellcheck disable=SC2086
      f=$(per_call "$one" $q); l=$(per_call "$both" $q)
      echo "$q: one instance (fan-out) $f ms, list of both (goodputctl" \
        "merge) $l ms, ratio $(echo "scale=2; $f / $l" | bc)"
    done
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
