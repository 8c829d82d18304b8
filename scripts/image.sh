#!/usr/bin/env bash
# Builds the DaemonSet's image (deploy/weft.yaml) locally with podman, pulling nothing: FROM scratch
# holding the standalone executable (dist/sea/weft) at /opt/weft/weft, nft (weftd --ip-masq) with the
# shared libraries ldd finds for both, and a static busybox for the init container's sh/cp/mv/ln/cmp.
#   scripts/image.sh [--tag TAG] [--sea FILE] [--keep-context DIR] [--save FILE]
# TAG defaults to the one deploy/weft.yaml names; PODMAN (word-split) replaces `podman`, e.g. to
# give --root/--runroot of a private store. Prints the image ID on stdout. --save also writes the
# release tarball: a docker archive of TAG (what `ctr -n k8s.io images import` and `podman load`
# take) and FILE.sha256 beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=weft.local/weft:0.1.0
SEA=dist/sea/weft
KEEP=
SAVE=
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) TAG=$2; shift 2 ;;
    --sea) SEA=$2; shift 2 ;;
    --keep-context) KEEP=$2; shift 2 ;;
    --save) SAVE=$2; shift 2 ;;
    *) echo "usage: scripts/image.sh [--tag TAG] [--sea FILE] [--keep-context DIR] [--save FILE]" >&2; exit 2 ;;
  esac
done
PODMAN=${PODMAN:-podman}
NFT=$(command -v nft || echo /usr/sbin/nft)
BUSYBOX=/bin/busybox
for f in "$SEA" "$NFT" "$BUSYBOX"; do
  [ -x "$f" ] || { echo "weft image: $f is missing (npm run build; apt-get install nftables busybox-static)" >&2; exit 1; }
done
# The init container's shell must not need a library: busybox-static's is a static executable.
if ldd "$BUSYBOX" >/dev/null 2>&1; then echo "weft image: $BUSYBOX is not static (apt-get install busybox-static)" >&2; exit 1; fi

CTX=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/weft-image.XXXXXX")}
[ -n "$KEEP" ] || trap 'rm -rf "$CTX"' EXIT
R="$CTX/rootfs"
rm -rf "$R"
mkdir -p "$R"/{opt/weft,usr/sbin,bin,etc,tmp,run,proc,sys,dev}
chmod 1777 "$R/tmp"
cp "$SEA" "$R/opt/weft/weft"
cp "$NFT" "$R/usr/sbin/nft"
cp "$BUSYBOX" "$R/bin/busybox"
chmod 755 "$R/opt/weft/weft" "$R/usr/sbin/nft" "$R/bin/busybox"
for applet in sh cp mv ln rm mkdir cat ls cmp; do ln -s busybox "$R/bin/$applet"; done

# Every shared object either executable loads (the dynamic loader included), at the path ldd
# resolved it to, dereferenced: the image has no symlink farm of its own.
libs=$( { ldd "$SEA"; ldd "$NFT"; } | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' | sort -u)
for lib in $libs; do
  mkdir -p "$R$(dirname "$lib")"
  cp -L "$lib" "$R$lib"
done

cat > "$CTX/Containerfile" <<'CONTAINERFILE'
FROM scratch
COPY rootfs/ /
LABEL org.opencontainers.image.title="weft" org.opencontainers.image.description="weft CNI plugins and weftd (standalone), nft, busybox"
CMD ["/opt/weft/weft", "weftd", "--version"]
CONTAINERFILE

# shellcheck disable=SC2086 # PODMAN is a command line on purpose
$PODMAN build --pull=never --network=none --quiet --tag "$TAG" --file "$CTX/Containerfile" "$CTX"
if [ -n "$SAVE" ]; then
  echo "weft image: saving $TAG to $SAVE" >&2
  rm -f "$SAVE" "$SAVE.sha256"
  # shellcheck disable=SC2086
  $PODMAN save --format docker-archive -o "$SAVE" "$TAG" >&2
  (cd "$(dirname "$SAVE")" && sha256sum "$(basename "$SAVE")" > "$(basename "$SAVE").sha256")
fi
