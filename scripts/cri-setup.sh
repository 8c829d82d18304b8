#!/usr/bin/env bash
# Builds, once, what the containerd end-to-end tests need into a cache reused between runs
# (WEFT_CACHE_DIR, default /var/cache/weft): `crictl` (cri-tools, `go install` through the Go module
# proxy, with its module and build caches there too) and a busybox image tarball (docker-archive
# format) that serves as containerd's sandbox (pause) image and as the test container image, since
# no registry is reachable. Quiet and quick when both are there. Run by scripts/deps.sh.
set -euo pipefail
. "$(dirname "$0")/setup-lib.sh"

CRICTL_VERSION=v1.36.0
CRICTL_DIR="$CACHE/go-bin/cri-tools-$CRICTL_VERSION"
IMAGE_DIR="$CACHE/images"
IMAGE_TAR="$IMAGE_DIR/weft-busybox.tar"
IMAGE_REF=weft.test/busybox:1
BUSYBOX=/bin/busybox

setup_lock cri-setup

if [ ! -x "$CRICTL_DIR/crictl" ]; then
  need_go "crictl for the containerd tests"
  echo "weft: building crictl $CRICTL_VERSION into $CRICTL_DIR (go install, once)" >&2
  t0=$(date +%s)
  go_cache_env
  GOBIN="$CRICTL_DIR.tmp" go install "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION" >&2
  publish_dir "$CRICTL_DIR.tmp" "$CRICTL_DIR"
  built crictl "$t0"
fi

if [ ! -s "$IMAGE_TAR" ] || [ "$BUSYBOX" -nt "$IMAGE_TAR" ] || [ "$0" -nt "$IMAGE_TAR" ]; then
  echo "weft: building the busybox image $IMAGE_REF into $IMAGE_TAR" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  root="$work/rootfs"
  mkdir -p "$root"/{bin,etc,proc,sys,dev,tmp,www,root}
  cp "$BUSYBOX" "$root/bin/busybox"
  for applet in sh sleep httpd ip ping wget cat true hostname nc; do ln -s busybox "$root/bin/$applet"; done
  echo 'hello from a weft container' >"$root/www/index.html"
  echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
  echo 'root:x:0:' >"$root/etc/group"
  out="$work/image"
  mkdir -p "$out"
  tar -C "$root" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out/layer.tar" .
  diff_id=$(sha256sum "$out/layer.tar" | cut -d' ' -f1)
  # The pause process: sleeps until killed (StopPodSandbox sends SIGKILL).
  printf '%s' "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Entrypoint\":[\"/bin/sleep\"],\"Cmd\":[\"2147483647\"],\"WorkingDir\":\"/\",\"Env\":[\"PATH=/bin\"]},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff_id\"]}}" >"$out/config.json"
  printf '%s' "[{\"Config\":\"config.json\",\"RepoTags\":[\"$IMAGE_REF\"],\"Layers\":[\"layer.tar\"]}]" >"$out/manifest.json"
  mkdir -p "$IMAGE_DIR"
  tar -C "$out" -cf "$IMAGE_TAR.tmp" manifest.json config.json layer.tar
  mv "$IMAGE_TAR.tmp" "$IMAGE_TAR"
fi
