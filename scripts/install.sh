#!/usr/bin/env bash
# Installs weft on this machine: a thin wrapper around `weft install` (dist/bin/weft), building
# first when the executables are missing. All options pass through, e.g.
#   sudo scripts/install.sh --backend flannel-vxlan --etcd-endpoints https://10.0.0.1:2379   # /opt/cni/bin, /etc/cni/net.d, systemd unit
#   sudo scripts/install.sh --standalone --backend flannel-vxlan --single-node   # dist/sea/weft once, plugins hard-linked
#   sudo scripts/install.sh --uninstall                      # undo exactly that install
#   scripts/install.sh --bin-dir /tmp/x/bin --conf-dir /tmp/x/net.d --state-dir /tmp/x/state ...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x "$root/dist/bin/weft" ] || [ ! -x "$root/dist/bin/bridge" ] || { [[ " $* " == *" --standalone"* ]] && [ ! -x "$root/dist/sea/weft" ]; }; then
  echo "weft: building first (npm run build)" >&2
  (cd "$root" && npm run build --silent) >&2
fi
exec node "$root/dist/bin/weft" install "$@"
