#!/usr/bin/env bash
# Builds, once, the kube-apiserver and etcd the Kubernetes subnet manager tests run against, into
# a cache reused between runs (WEFT_CACHE_DIR, default /var/cache/weft): `go build` of the wrapper
# module test/tools/kube-apiserver through the Go module proxy, with its module and build caches
# there too. Debian's etcd (3.4) is older than the 3.6 kube-apiserver 1.34 expects, so etcd is
# built from the same module graph. Quiet and instant when both are there. Run by scripts/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-lib.sh

KUBE_VERSION=v1.34.4
OUT="$CACHE/go-bin/kube-$KUBE_VERSION"

setup_lock kube-setup
[ -x "$OUT/kube-apiserver" ] && [ -x "$OUT/etcd" ] && exit 0
need_go "kube-apiserver for the kube tests"
echo "weft: building kube-apiserver $KUBE_VERSION and etcd into $OUT (go build, once)" >&2
t0=$(date +%s)
go_cache_env
export GOTOOLCHAIN=local
mkdir -p "$OUT.tmp"
(
  cd test/tools/kube-apiserver
  go mod download >&2
  go build -trimpath -o "$OUT.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2
  go build -trimpath -o "$OUT.tmp/etcd" go.etcd.io/etcd/server/v3 >&2
)
publish_dir "$OUT.tmp" "$OUT"
built "kube-apiserver and etcd" "$t0"
