#!/usr/bin/env bash
# Builds, once, the test harness test/tools/libcni-harness: weft's conflists driven through the go-cni
# and libcni that containerd v2.4.2 links (go-cni v1.1.14, libcni v1.3.1), because Debian's containerd
# is 1.6, whose CRI Status never calls CNI STATUS. `go build` of the wrapper module from the module
# proxy into WEFT_CACHE_DIR (default /var/cache/weft), keyed by a hash of the harness's source so a
# changed harness is rebuilt. Quiet and quick when cached; prints the binary's path last. Run by
# test/e2e/containerd/libcni-status-gc.test.ts itself.
set -euo pipefail
. "$(dirname "$0")/setup-lib.sh"

SRC="$(cd "$(dirname "$0")/../test/tools/libcni-harness" && pwd)"
HASH=$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" | sha256sum | cut -c1-12)
DIR="$CACHE/go-bin/libcni-harness-$HASH"

setup_lock libcni-setup
[ -x "$DIR/libcni-harness" ] && { echo "$DIR/libcni-harness"; exit 0; }
need_go "the libcni harness (containerd 2's CNI library) for the STATUS and GC tests"
echo "weft: building the libcni harness into $DIR (once)" >&2
t0=$(date +%s)
go_cache_env
export CGO_ENABLED=0 GOTOOLCHAIN=local
mkdir -p "$DIR.tmp"
(cd "$SRC" && go build -o "$DIR.tmp/libcni-harness" .) >&2
publish_dir "$DIR.tmp" "$DIR"
built "the libcni harness" "$t0"
echo "$DIR/libcni-harness"
