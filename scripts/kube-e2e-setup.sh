#!/usr/bin/env bash
# Builds, once, the upstream Kubernetes e2e test binary (`go test -c k8s.io/kubernetes/test/e2e`) and
# agnhost (k8s.io/kubernetes/test/images/agnhost, static) at the same version as scripts/kube-setup.sh,
# through the Go module proxy, into WEFT_CACHE_DIR/go-bin/kube-e2e-<version>. Not part of
# scripts/deps.sh: only scripts/kube-conformance.ts needs them. The wrapper module's go.mod/go.sum
# are copied to a scratch dir first, because the e2e packages pull test-only modules (ginkgo,
# gomega, ...) that `-mod=mod` adds: the tracked files stay as they are. A big build: about
# 9-40 min on 2 busy cores with the kube build cache warm (9 right after kube-setup.sh). Quiet and instant when cached.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-lib.sh

KUBE_VERSION=v1.34.4
OUT="$CACHE/go-bin/kube-e2e-$KUBE_VERSION"
LDFLAGS="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 \
-X k8s.io/component-base/version.gitMinor=34 -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"

setup_lock kube-e2e-setup
[ -x "$OUT/e2e.test" ] && [ -x "$OUT/agnhost" ] && exit 0
need_go "the Kubernetes e2e test binary"
echo "weft: building e2e.test and agnhost $KUBE_VERSION into $OUT (go test -c, once; 9-40 min on 2 cores)" >&2
t0=$(date +%s)
go_cache_env
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -modcacherw"
work="$CACHE/kube-e2e-work"
rm -rf "$work" "$OUT.tmp"
mkdir -p "$work" "$OUT.tmp"
cp test/tools/kube-apiserver/go.mod test/tools/kube-apiserver/go.sum "$work/"
cat >"$work/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/test/e2e"
	_ "k8s.io/kubernetes/test/images/agnhost"
)
GO
(
  cd "$work"
  t1=$(date +%s)
  CGO_ENABLED=0 go build -trimpath -ldflags "$LDFLAGS" -o "$OUT.tmp/agnhost" k8s.io/kubernetes/test/images/agnhost >&2
  echo "weft: agnhost built in $(($(date +%s) - t1)) s" >&2
  t1=$(date +%s)
  go test -c -vet=off -trimpath -ldflags "$LDFLAGS" -o "$OUT.tmp/e2e.test" k8s.io/kubernetes/test/e2e >&2
  echo "weft: e2e.test built in $(($(date +%s) - t1)) s" >&2
)
publish_dir "$OUT.tmp" "$OUT"
rm -rf "$work"
built "e2e.test and agnhost" "$t0"
