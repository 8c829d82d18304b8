#!/usr/bin/env bash
# Builds, once, the kubelet cluster's CoreDNS image as a docker archive that `ctr images import`
# loads (nothing can be pulled): /coredns from scripts/coredns-setup.sh, run as
# `/coredns -conf /etc/coredns/Corefile` (the Corefile comes from a ConfigMap: testkit/kube-cluster/dns.ts).
# Tagged weft.test/coredns:1.14.0; the pods name it with imagePullPolicy Never. Prints the archive path.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-lib.sh

VERSION=1.14.0
TAG=weft.test/coredns:$VERSION
BIN="$CACHE/go-bin/coredns-v$VERSION/coredns"
OUT="$CACHE/images/coredns-$VERSION.tar"
setup_lock coredns-image
if [ -s "$OUT" ] && [ "$OUT" -nt "$BIN" ] && [ "$OUT" -nt "$0" ]; then echo "$OUT"; exit 0; fi
[ -x "$BIN" ] || { echo "weft: $BIN is missing (scripts/coredns-setup.sh)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
R="$work/rootfs"
mkdir -p "$R/etc/coredns" "$R/tmp" "$work/image"
chmod 1777 "$R/tmp"
cp "$BIN" "$R/coredns"
out="$work/image"
tar -C "$R" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out/layer.tar" .
diff_id=$(sha256sum "$out/layer.tar" | cut -d' ' -f1)
printf '%s' "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Entrypoint\":[\"/coredns\"],\"WorkingDir\":\"/\",\"ExposedPorts\":{\"53/tcp\":{},\"53/udp\":{}}},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff_id\"]}}" >"$out/config.json"
printf '%s' "[{\"Config\":\"config.json\",\"RepoTags\":[\"$TAG\"],\"Layers\":[\"layer.tar\"]}]" >"$out/manifest.json"
mkdir -p "$(dirname "$OUT")"
tar -C "$out" -cf "$OUT.tmp" manifest.json config.json layer.tar
mv "$OUT.tmp" "$OUT"
echo "weft: $TAG built into $OUT" >&2
echo "$OUT"
