#!/usr/bin/env bash
# Builds, once, CoreDNS for the kubelet cluster's `kube-dns` Service (testkit/kube-cluster/dns.ts)
# into WEFT_CACHE_DIR/go-bin/coredns-<version>/coredns: a static binary made through the Go module
# proxy from a wrapper main in a scratch dir that imports coremain and only the plugins the cluster's
# Corefile names (errors, log, health, ready, kubernetes, cache, loadbalance, hosts, metrics), so the
# cloud plugins' modules (route53, azure, clouddns...) are never fetched. CoreDNS v1.14.0 is the newest
# release on the client-go 0.34 line (that of kube-setup.sh's Kubernetes). scripts/deps.sh runs it
# after kube-setup.sh (the kube cluster with DNS needs it). Quiet and instant when cached.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-lib.sh

COREDNS_VERSION=v1.14.0
OUT="$CACHE/go-bin/coredns-$COREDNS_VERSION"

setup_lock coredns-setup
[ -x "$OUT/coredns" ] && exit 0
need_go "CoreDNS for the kube cluster's DNS"
echo "weft: building CoreDNS $COREDNS_VERSION into $OUT (go build, once; a few minutes on 2 cores)" >&2
t0=$(date +%s)
go_cache_env
export GOTOOLCHAIN=local
work="$CACHE/coredns-work"
rm -rf "$work" "$OUT.tmp"
mkdir -p "$work" "$OUT.tmp"
cat >"$work/go.mod" <<MOD
module weft.test/coredns

go 1.24.0

require github.com/coredns/coredns $COREDNS_VERSION
MOD
cat >"$work/main.go" <<'GO'
// CoreDNS with the plugins of the kube cluster's Corefile only.
package main

import (
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	coremain.Run()
}
GO
(
  cd "$work"
  go mod tidy >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$OUT.tmp/coredns" . >&2
)
"$OUT.tmp/coredns" -plugins | grep -qw kubernetes || { echo "weft: the CoreDNS built lacks the kubernetes plugin" >&2; exit 1; }
publish_dir "$OUT.tmp" "$OUT"
rm -rf "$work"
built "CoreDNS $COREDNS_VERSION" "$t0"
