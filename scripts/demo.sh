#!/usr/bin/env bash
# `npm run demo`: installs what it needs, builds weft, then runs the simulated-cluster demo.
# Arguments go to scripts/demo.ts (--keep, --store etcd, --backends vxlan,host-gw); with --kube,
# scripts/demo-kube.ts runs instead: a real 3-node Kubernetes cluster with weft's DaemonSet.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "npm run demo creates network namespaces: run it as root" >&2
  exit 1
fi
# The simulated clusters need only the Debian and npm packages; --kube needs the Go-built peers too
# (a first build takes 20-25 minutes, cached in /var/cache/weft).
if [ "${1:-}" = --kube ]; then bash scripts/deps.sh; else bash scripts/deps.sh base; fi
npm run --silent build
if [ "${1:-}" = --kube ]; then
  shift
  exec node --import tsx scripts/demo-kube.ts "$@"
fi
exec node --import tsx scripts/demo.ts "$@"
