#!/usr/bin/env bash
# Builds, once, the kube-apiserver and etcd the Kubernetes subnet manager tests run against, into
# a cache reused between runs (WEFT_CACHE_DIR, default /var/cache/weft): `go build` of the wrapper
# module test/tools/kube-apiserver through the Go module proxy, with its module and build caches
# there too. Debian's etcd (3.4) is older than the 3.6 kube-apiserver 1.34 expects, so etcd is
# built from the same module graph. Quiet and instant when both are there. Run by scripts/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${WEFT_CACHE_DIR:-/var/cache/weft}
KUBE_VERSION=v1.34.4
OUT="$CACHE/go-bin/kube-$KUBE_VERSION"

mkdir -p "$CACHE"
exec 9>"$CACHE/.kube-setup.lock"
flock 9

[ -x "$OUT/kube-apiserver" ] && [ -x "$OUT/etcd" ] && exit 0

PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null; then
  echo "weft: Go is missing: cannot build kube-apiserver for the kube tests" >&2
  exit 1
fi
echo "weft: building kube-apiserver $KUBE_VERSION and etcd into $OUT (go build, once)" >&2
t0=$(date +%s)
export GOMODCACHE="$CACHE/go-mod" GOCACHE="$CACHE/go-build" GOFLAGS=-modcacherw GOTOOLCHAIN=local
mkdir -p "$OUT.tmp"
(
  cd test/tools/kube-apiserver
  go mod download >&2
  go build -trimpath -o "$OUT.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2
  go build -trimpath -o "$OUT.tmp/etcd" go.etcd.io/etcd/server/v3 >&2
)
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
echo "weft: kube-apiserver and etcd built in $(($(date +%s) - t0)) s" >&2
