#!/usr/bin/env bash
# Builds, once, the kubelet cluster's sandbox ("pause") image as a docker archive that
# `ctr images import` loads (nothing can be pulled): one static Go program, /pause, that holds the
# pod's namespaces, reaps the zombies it inherits as PID 1 and exits 0 on SIGINT/SIGTERM, as
# upstream's pause does. Tagged registry.k8s.io/pause:3.10 and :3.10.1 (containerd's sandbox_image
# in the kit, and the image the upstream e2e tests run: test/utils/image/manifest.go of v1.34.4),
# so a pod naming either finds it locally. Prints the archive path.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-lib.sh

TAGS=(registry.k8s.io/pause:3.10 registry.k8s.io/pause:3.10.1)
OUT="$CACHE/images/pause-3.10.tar"
setup_lock pause-image
if [ -s "$OUT" ] && [ "$OUT" -nt "$0" ]; then echo "$OUT"; exit 0; fi
need_go "the pause image"
go_cache_env
export GOTOOLCHAIN=local GOFLAGS="-modcacherw -mod=mod"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/rootfs" "$work/image"
printf 'module weft.test/pause\n\ngo 1.24.0\n' >"$work/src/go.mod"
cat >"$work/src/main.go" <<'GO'
// The pod sandbox's first process: holds the namespaces, reaps orphans, exits on INT/TERM.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause (weft) 3.10")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "pause: warning: not running as PID 1")
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			fmt.Fprintf(os.Stderr, "pause: shutting down, got signal %v\n", s)
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
GO
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/rootfs/pause" .) >&2
"$work/rootfs/pause" -v >/dev/null
out="$work/image"
tar -C "$work/rootfs" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out/layer.tar" .
diff_id=$(sha256sum "$out/layer.tar" | cut -d' ' -f1)
printf '%s' "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Entrypoint\":[\"/pause\"],\"WorkingDir\":\"/\",\"User\":\"65535:65535\"},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff_id\"]}}" >"$out/config.json"
tags=$(printf '"%s",' "${TAGS[@]}")
printf '%s' "[{\"Config\":\"config.json\",\"RepoTags\":[${tags%,}],\"Layers\":[\"layer.tar\"]}]" >"$out/manifest.json"
mkdir -p "$(dirname "$OUT")"
tar -C "$out" -cf "$OUT.tmp" manifest.json config.json layer.tar
mv "$OUT.tmp" "$OUT"
echo "weft: ${TAGS[*]} built into $OUT" >&2
echo "$OUT"
