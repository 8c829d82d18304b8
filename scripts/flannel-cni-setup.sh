#!/usr/bin/env bash
# Builds, once, flannel's own CNI plugin (the `flannel` binary) that the mixed-cluster tests run on
# flanneld's node in front of the reference bridge and host-local (a test peer; nothing of it goes into
# weft). github.com/flannel-io/cni-plugin, its home since 2021, is refused by the module proxy (403);
# the same plugin as released in github.com/containernetworking/plugins v0.9.1 (plugins/meta/flannel,
# the last release before it moved) is served, so that is what is built: `go build` with the module's
# go.mod (its zip carries no vendor/), into WEFT_CACHE_DIR (default /var/cache/weft). Run by scripts/deps.sh.
set -euo pipefail
. "$(dirname "$0")/setup-lib.sh"

PLUGINS_VERSION=v0.9.1
DIR="$CACHE/go-bin/flannel-cni-$PLUGINS_VERSION"

setup_lock flannel-cni-setup
[ -x "$DIR/flannel" ] && exit 0
need_go "flannel's CNI plugin for the mixed-cluster tests"
echo "weft: building flannel's CNI plugin (containernetworking/plugins $PLUGINS_VERSION) into $DIR (once)" >&2
t0=$(date +%s)
go_cache_env
export GOTOOLCHAIN=local CGO_ENABLED=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
module_src "github.com/containernetworking/plugins@$PLUGINS_VERSION" "$work/plugins"
rm -rf "$work/plugins/vendor"
mkdir -p "$DIR.tmp"
(cd "$work/plugins" && GOFLAGS="$GOFLAGS -mod=mod" go build -o "$DIR.tmp/flannel" ./plugins/meta/flannel) >&2
publish_dir "$DIR.tmp" "$DIR"
built "flannel's CNI plugin" "$t0"
