#!/usr/bin/env bash
# Builds, once, the real flanneld that the mixed-cluster tests run beside weftd as a peer (nothing of
# it goes into weft): `go install github.com/flannel-io/flannel@$FLANNEL_VERSION` with cgo (its udp
# backend needs it), binary, module and build caches under WEFT_CACHE_DIR (default /var/cache/weft)
# so later runs and CI reuse them. Quiet and quick when cached. Run by scripts/deps.sh.
# `go install` itself fails: the proxy refuses (403) the tencentcloud SDK zip that flannel's
# tencentvpc backend imports, so the module source is copied to a temp dir, main.go's blank import
# of that backend is dropped, and `go build` runs there (every other backend is built as released).
# flannel's CNI plugin is built by scripts/flannel-cni-setup.sh.
set -euo pipefail
. "$(dirname "$0")/setup-lib.sh"

FLANNEL_VERSION=v0.28.10
FLANNEL_DIR="$CACHE/go-bin/flannel-$FLANNEL_VERSION"

setup_lock flannel-setup
[ -x "$FLANNEL_DIR/flannel" ] && exit 0
need_go "flanneld for the mixed-cluster tests"
echo "weft: building flanneld $FLANNEL_VERSION into $FLANNEL_DIR (go install, once)" >&2
t0=$(date +%s)
go_cache_env
export CGO_ENABLED=1 GOTOOLCHAIN=local
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
module_src "github.com/flannel-io/flannel@$FLANNEL_VERSION" "$work/flannel"
sed -i '/pkg\/backend\/tencentvpc"/d' "$work/flannel/main.go"
mkdir -p "$FLANNEL_DIR.tmp"
(cd "$work/flannel" && go build -o "$FLANNEL_DIR.tmp/flannel" .) >&2
publish_dir "$FLANNEL_DIR.tmp" "$FLANNEL_DIR"
built flanneld "$t0"
