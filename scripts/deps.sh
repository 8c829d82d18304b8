#!/usr/bin/env bash
# Installs what weft's tests, demo and benchmarks need when it is missing: Debian packages
# (as root, through apt) and the npm packages of package-lock.json ("base"), then the Go-built peers
# and kubectl under /var/cache/weft ("peers"). Quiet and quick when all is there.
# Usage: scripts/deps.sh [all|base|peers] (default all). scripts/test.sh runs "peers" beside the
# build, lint and unit tests, which need none of them (on a fresh machine, 20-25 min of Go builds).
set -euo pipefail
cd "$(dirname "$0")/.."
part=${1:-all}
case "$part" in all|base|peers) ;; *) echo "usage: $0 [all|base|peers]" >&2; exit 2 ;; esac

install_base() {
  APT_PACKAGES=(iproute2 iputils-ping iptables nftables iperf3 ethtool conntrack util-linux procps
    containernetworking-plugins etcd-server etcd-client podman runc containerd busybox-static
    python3 make g++ curl tcpdump openssl ipset)

  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "weft: missing Debian packages (${missing[*]}); run as root to install them" >&2
    else
      echo "weft: installing Debian packages: ${missing[*]}" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq "${missing[@]}" >&2
    fi
  fi

  # npm packages: install from the lock file when node_modules is missing or older than it. A
  # node_modules that is a symlink is a shared install (git worktrees): npm ci would empty its target.
  if [ ! -L node_modules ] && { [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
    echo "weft: installing npm packages (npm ci)" >&2
    npm ci --no-audit --no-fund >&2
  fi
}

install_peers() {
  # crictl and the busybox image for the containerd end-to-end tests (cached under /var/cache/weft).
  # CI must not go on without them: the containerd suites would fail later with less to go on.
  if [ "$(id -u)" -eq 0 ]; then
    bash scripts/cri-setup.sh || { echo "weft: scripts/cri-setup.sh failed" >&2; [ "${CI:-}" != true ] || exit 1; }
  fi

  # flanneld and flannel's CNI plugin, the peers of the mixed-cluster tests (cached under /var/cache/weft like crictl).
  if [ "$(id -u)" -eq 0 ]; then
    bash scripts/flannel-setup.sh || { echo "weft: scripts/flannel-setup.sh failed" >&2; [ "${CI:-}" != true ] || exit 1; }
    bash scripts/flannel-cni-setup.sh || { echo "weft: scripts/flannel-cni-setup.sh failed" >&2; [ "${CI:-}" != true ] || exit 1; }
    bash scripts/kube-router-setup.sh || { echo "weft: scripts/kube-router-setup.sh failed" >&2; [ "${CI:-}" != true ] || exit 1; }
  fi

  # kube-apiserver and etcd for the Kubernetes subnet manager tests (cached under /var/cache/weft).
  if [ "$(id -u)" -eq 0 ]; then
    bash scripts/kube-setup.sh || { echo "weft: scripts/kube-setup.sh failed" >&2; [ "${CI:-}" != true ] || exit 1; }
    # CoreDNS as the kubelet cluster's kube-dns (test/e2e/kubernetes/services.test.ts; about 4 min cold).
    bash scripts/coredns-setup.sh || { echo "weft: scripts/coredns-setup.sh failed" >&2; [ "${CI:-}" != true ] || exit 1; }
  fi

  # Debian's kubectl (kubernetes-client), unpacked without installing it (its /usr/bin/kubectl may
  # collide with another package's), for the deploy/weft.yaml tests (cached under /var/cache/weft).
  if [ "$(id -u)" -eq 0 ]; then
    bash scripts/kubectl-setup.sh || { echo "weft: scripts/kubectl-setup.sh failed" >&2; [ "${CI:-}" != true ] || exit 1; }
  fi
}

if [ "$part" != peers ]; then install_base; fi
if [ "$part" != base ]; then install_peers; fi
