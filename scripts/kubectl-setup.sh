#!/usr/bin/env bash
# Unpacks, once, Debian's kubectl (package kubernetes-client) into a cache reused between runs
# (WEFT_CACHE_DIR, default /var/cache/weft) for the deploy tests, without installing the package:
# here /usr/bin/kubectl belongs to another package (google-cloud-sdk), so `apt-get install` would
# conflict. `apt-get download` + `dpkg -x`; quiet and instant when it is there. Run by scripts/deps.sh.
set -euo pipefail

CACHE=${WEFT_CACHE_DIR:-/var/cache/weft}
mkdir -p "$CACHE"
exec 9>"$CACHE/.kubectl-setup.lock"
flock 9

# The directory is named after the candidate version, so a Debian update unpacks the new one.
VERSION=$(apt-cache policy kubernetes-client 2>/dev/null | sed -n 's/^ *Candidate: //p')
if [ -z "$VERSION" ] || [ "$VERSION" = "(none)" ]; then
  apt-get update -qq
  VERSION=$(apt-cache policy kubernetes-client | sed -n 's/^ *Candidate: //p')
fi
[ -n "$VERSION" ] && [ "$VERSION" != "(none)" ] || { echo "weft: apt knows no kubernetes-client package" >&2; exit 1; }
OUT="$CACHE/kubectl-debian/$VERSION"
[ -x "$OUT/usr/bin/kubectl" ] && { ln -sfn "$VERSION" "$CACHE/kubectl-debian/current"; exit 0; }

echo "weft: unpacking Debian's kubernetes-client $VERSION into $OUT (once)" >&2
TMP=$(mktemp -d "$CACHE/kubectl-debian.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && apt-get download -qq -o APT::Sandbox::User=root "kubernetes-client=$VERSION" >&2)
dpkg -x "$TMP"/kubernetes-client_*.deb "$TMP/root"
"$TMP/root/usr/bin/kubectl" version --client >/dev/null
mkdir -p "$CACHE/kubectl-debian"
rm -rf "$OUT"
mv "$TMP/root" "$OUT"
ln -sfn "$VERSION" "$CACHE/kubectl-debian/current"
