#!/usr/bin/env bash
# Builds the OCI image (scripts/image.sh) and runs the service from it:
# goodputd, a goodput-agent and goodput-sim each in their own container
# (host network, the agent's socket directory shared as a volume), then
# checks that goodputd reports every job of the simulator's truth. Exits 77
# (skip) with the reason where this machine cannot build or run containers.
# Heavy (downloads the runtime packages, builds the image): .ci/nightly.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
((EUID == 0)) || skip "needs root (podman and mmdebstrap run as root here)"

TMP=$(mktemp -d)
IMAGE=localhost/goodput:image-test
NAMES=()
cleanup() {
  for n in "${NAMES[@]}"; do podman rm -f "$n" >/dev/null 2>&1 || true; done
  podman rmi -f "$IMAGE" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT

IMAGE=$IMAGE bash scripts/image.sh "$TMP/goodput.oci.tar" ||
  fail "scripts/image.sh failed"
size=$(du -m "$TMP/goodput.oci.tar" | cut -f1)
echo "image: $size MiB"
((size < 200)) || fail "image is $size MiB; want a small image (< 200 MiB)"

# How this machine runs containers: podman's defaults, or runc on cgroupfs
# with limits it may set (containers in containers cannot raise rlimits).
G=() R=()
try() { podman "${G[@]}" run --rm --network=host "${R[@]}" \
  --entrypoint /usr/bin/goodputctl "$IMAGE" --help >/dev/null 2>&1; }
if ! try; then
  G=(--runtime=runc --cgroup-manager=cgroupfs)
  R=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
  try || skip "podman cannot run a container on this machine: $(podman \
    "${G[@]}" run --rm "${R[@]}" --entrypoint /usr/bin/goodputctl "$IMAGE" \
    --help 2>&1 | tail -1)"
fi
# run NAME ENTRYPOINT ARGS...: a detached container of the image.
run() {
  local name=$1 entry=$2
  shift 2
  NAMES+=("$name")
  podman "${G[@]}" run -d --name "$name" --network=host "${R[@]}" \
    -v "$TMP/run:/run/goodput-agent" -v "$TMP/data:/var/lib/goodput/data" \
    -v "$TMP/out:/out" --entrypoint "$entry" "$IMAGE" "$@" >/dev/null
}
ctl() {
  podman "${G[@]}" run --rm --network=host "${R[@]}" \
    --entrypoint /usr/bin/goodputctl "$IMAGE" "$@"
}
mkdir -p "$TMP/run" "$TMP/data" "$TMP/out"
chown 65532:65532 "$TMP/run" "$TMP/data" "$TMP/out"

PORT=$((20000 + RANDOM % 10000))
run gp-goodputd /usr/bin/goodputd --data_dir=/var/lib/goodput/data \
  --grpc_address=127.0.0.1:$PORT --metrics_address=127.0.0.1:0
for _ in $(seq 100); do
  podman logs gp-goodputd 2>&1 | grep -q "listening on port" && break
  sleep 0.2
done
podman logs gp-goodputd 2>&1 | grep -q "listening on port $PORT" ||
  fail "goodputd did not start: $(podman logs gp-goodputd 2>&1 | tail -5)"
run gp-agent /usr/bin/goodput-agent --server=127.0.0.1:$PORT \
  --socket=/run/goodput-agent/agent.sock \
  --spool_dir=/var/lib/goodput/spool --metrics_address=127.0.0.1:0 \
  --batch_delay=50ms
for _ in $(seq 100); do [[ -S "$TMP/run/agent.sock" ]] && break; sleep 0.2; done
[[ -S "$TMP/run/agent.sock" ]] ||
  fail "agent did not start: $(podman logs gp-agent 2>&1 | tail -5)"
run gp-sim /usr/bin/goodput-sim --seed=3 --hosts=16 --jobs=12 \
  --duration=2h --speed=7200 --sockets=/run/goodput-agent/agent.sock \
  --truth=/out/truth.json
code=$(podman wait gp-sim)
((code == 0)) || fail "goodput-sim exited $code: $(podman logs gp-sim 2>&1 | tail -5)"

want=$(/usr/bin/python3 -c 'import json,sys
print(" ".join(sorted(j["job_id"] for j in json.load(open(sys.argv[1]))["jobs"])))' \
  "$TMP/out/truth.json")
[[ -n "$want" ]] || fail "the simulator's truth has no jobs"
for _ in $(seq 150); do
  got=$(ctl --server=127.0.0.1:$PORT report --json 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys
print(" ".join(sorted(j["job_id"] for j in json.load(sys.stdin)["jobs"])))' \
    2>/dev/null || true)
  [[ "$got" == "$want" ]] && break
  sleep 0.2
done
[[ "$got" == "$want" ]] || fail "goodputd's jobs ($got) are not the truth's ($want)"
echo "PASS: image $size MiB; goodputd, agent and sim ran in containers;" \
  "$(wc -w <<<"$want") jobs reported"
