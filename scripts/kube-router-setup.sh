#!/usr/bin/env bash
# Builds, once, the real kube-router that the NetworkPolicy tests and benchmark run as the reference
# peer (its policy controller only: --run-firewall; nothing of it goes into weft): `go install
# github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION` from the module
# proxy, binary, module and build caches under WEFT_CACHE_DIR (default /var/cache/weft). It needs the
# ipset tool at run time (Debian package ipset, installed by scripts/deps.sh). Quiet and quick when cached.
# The module index warns of security flaws in v2.1.0: it is a test peer, never shipped.
set -euo pipefail
. "$(dirname "$0")/setup-lib.sh"

KUBE_ROUTER_VERSION=v2.1.0
KUBE_ROUTER_DIR="$CACHE/go-bin/kube-router-$KUBE_ROUTER_VERSION"

setup_lock kube-router-setup
[ -x "$KUBE_ROUTER_DIR/kube-router" ] && exit 0
need_go "kube-router for the NetworkPolicy tests"
echo "weft: building kube-router $KUBE_ROUTER_VERSION into $KUBE_ROUTER_DIR (go install, once)" >&2
t0=$(date +%s)
go_cache_env
export CGO_ENABLED=0 GOTOOLCHAIN=local
mkdir -p "$KUBE_ROUTER_DIR.tmp"
GOBIN="$KUBE_ROUTER_DIR.tmp" go install "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION" >&2
publish_dir "$KUBE_ROUTER_DIR.tmp" "$KUBE_ROUTER_DIR"
built kube-router "$t0"
