#!/usr/bin/env bash
# Builds goodput's OCI image from Debian 12 packages, from nothing but the
# Debian mirror the host already uses: one image, non-root (uid 65532), with
# /usr/bin/goodputd (the default entrypoint), goodput-agent, goodputctl and
# goodput-sim, and only the shared libraries they load (`mmdebstrap
# --variant=extract` of the Debian packages that own them, at the host's
# versions). Needs root; installs mmdebstrap and podman if missing.
#
#   scripts/image.sh [OUT]      OUT: OCI archive (default build/goodput.oci.tar)
#   scripts/image.sh --packages only print the runtime packages (CI smoke)
# Environment: IMAGE (default localhost/goodput:VERSION), BUILD_DIR.
# Elsewhere: `podman load -i OUT`, or `skopeo copy oci-archive:OUT
# docker://REGISTRY/goodput:TAG`. Checked by tests/image_test.sh (nightly).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${BUILD_DIR:-build}
VERSION=$(sed -n 's/^project(goodput VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
IMAGE=${IMAGE:-localhost/goodput:$VERSION}
BINARIES=(server/goodputd agent/goodput-agent cli/goodputctl sim/goodput-sim)
TARGETS=(goodputd goodput-agent goodputctl goodput-sim)

# The Debian packages that own the shared libraries the binaries load,
# comma-separated; fails naming a library no package owns. One dpkg -S for
# all (each call reads dpkg's whole file list).
packages() {
  local libs=() lib owners
  mapfile -t libs < <(for b in "${BINARIES[@]}"; do ldd "$BUILD_DIR/$b"; done |
    awk '$3 ~ /^\// { print $3 }' | sort -u)
  owners=$(for lib in "${libs[@]}"; do echo "$lib"; realpath "$lib"; done |
    sort -u | xargs dpkg -S 2>/dev/null || true)
  for lib in "${libs[@]}"; do
    awk -F': ' -v a="$lib" -v b="$(realpath "$lib")" \
      '$2 == a || $2 == b { found = 1 } END { exit !found }' <<<"$owners" ||
      { echo "image: no package owns $lib" >&2; return 1; }
  done
  cut -d: -f1 <<<"$owners" | sort -u | paste -sd,
}

if [[ "${1:-}" == --packages ]]; then  # of binaries already in BUILD_DIR
  packages
  exit 0
fi
OUT=${1:-$BUILD_DIR/goodput.oci.tar}
if ! command -v mmdebstrap >/dev/null || ! command -v podman >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap podman \
    </dev/null
fi
SETUP=demo bash scripts/build.sh "${TARGETS[@]}"
PKGS=$(packages)
echo "image: runtime packages: $PKGS"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
R=$WORK/root
mmdebstrap --quiet --variant=extract --include="coreutils,$PKGS" \
  --format=directory bookworm "$R" - </etc/apt/sources.list.d/debian.sources
rm -rf "$R/var/cache/apt" "$R/var/lib/apt/lists" "$R/usr/share/doc" \
  "$R/usr/share/man" "$R/usr/share/locale" "$R/usr/share/info"
for b in "${BINARIES[@]}"; do install -m 0755 -s "$BUILD_DIR/$b" "$R/usr/bin/"; done
printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
  'goodput:x:65532:65532:goodput:/var/lib/goodput:/usr/sbin/nologin' >"$R/etc/passwd"
printf '%s\n' 'root:x:0:' 'goodput:x:65532:' >"$R/etc/group"
install -d -m 0755 -o 65532 -g 65532 "$R/var/lib/goodput" "$R/run/goodput-agent"
tar -C "$R" --numeric-owner -cf "$WORK/rootfs.tar" .
podman import --quiet \
  --change 'USER 65532:65532' \
  --change 'WORKDIR /var/lib/goodput' \
  --change 'ENV PATH=/usr/bin:/bin' \
  --change 'ENTRYPOINT ["/usr/bin/goodputd"]' \
  --change 'CMD ["--data_dir=/var/lib/goodput/data", "--grpc_address=0.0.0.0:7700", "--metrics_address=0.0.0.0:7701"]' \
  --change 'EXPOSE 7700' --change 'EXPOSE 7701' \
  --change "LABEL org.opencontainers.image.title=goodput org.opencontainers.image.version=$VERSION" \
  "$WORK/rootfs.tar" "$IMAGE" >/dev/null
mkdir -p "$(dirname "$OUT")"
rm -f "$OUT"
podman save --quiet --format oci-archive -o "$OUT" "$IMAGE"
echo "image: $IMAGE ($(du -m "$OUT" | cut -f1) MiB) in $OUT"
