#!/usr/bin/env bash
# Builds, once, the Kubernetes components weft's tests run against, into a cache reused between runs
# (WEFT_CACHE_DIR, default /var/cache/weft): `go build` of the wrapper module test/tools/kube-apiserver
# through the Go module proxy, with its module and build caches there too. One k8s.io/kubernetes
# version for all of them: kube-apiserver (the kube subnet manager tests), kubelet,
# kube-controller-manager and kube-scheduler (the kubelet cluster), kube-proxy (the Services peer).
# Debian's etcd (3.4) is older than the 3.6 kube-apiserver 1.34 expects, so etcd is built from the
# same module graph. Each binary carries its version (ldflags), as a release build does: kubelet
# reports it in node.status.nodeInfo. Quiet and instant when all are there. Run by scripts/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-lib.sh

KUBE_VERSION=v1.34.4
OUT="$CACHE/go-bin/kube-$KUBE_VERSION"
KUBE_CMDS=(kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy)
# Without these every binary says v0.0.0-master+$Format:%H$ (k8s.io/component-base/version).
LDFLAGS="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 \
-X k8s.io/component-base/version.gitMinor=34 -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
STAMP="$OUT/.ldflags-$KUBE_VERSION"

setup_lock kube-setup
missing=()
for c in "${KUBE_CMDS[@]}"; do
  { [ -x "$OUT/$c" ] && [ -e "$STAMP" ]; } || missing+=("$c")
done
[ -x "$OUT/etcd" ] && [ "${#missing[@]}" -eq 0 ] && exit 0
need_go "the Kubernetes components for the kube tests"
echo "weft: building ${missing[*]} ${KUBE_VERSION} (and etcd if missing) into $OUT (go build, once; a first build takes 10-20 min on 2 cores)" >&2
t0=$(date +%s)
go_cache_env
export GOTOOLCHAIN=local
rm -rf "$OUT.tmp"
if [ -d "$OUT" ]; then cp -a "$OUT" "$OUT.tmp"; else mkdir -p "$OUT.tmp"; fi
(
  cd test/tools/kube-apiserver
  go mod download >&2
  for c in "${missing[@]}"; do
    t1=$(date +%s)
    go build -trimpath -ldflags "$LDFLAGS" -o "$OUT.tmp/$c" "k8s.io/kubernetes/cmd/$c" >&2
    echo "weft: $c built in $(($(date +%s) - t1)) s" >&2
  done
  [ -x "$OUT.tmp/etcd" ] || go build -trimpath -o "$OUT.tmp/etcd" go.etcd.io/etcd/server/v3 >&2
)
touch "$OUT.tmp/.ldflags-$KUBE_VERSION"
publish_dir "$OUT.tmp" "$OUT"
built "the Kubernetes components" "$t0"
