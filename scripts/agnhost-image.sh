#!/usr/bin/env bash
# Builds, once, the image the upstream e2e tests run their pods from, as a docker archive that
# `ctr images import` loads (nothing can be pulled): tagged registry.k8s.io/e2e-test-images/agnhost:2.56
# (the name and version test/utils/image/manifest.go of k8s.io/kubernetes v1.34.4 asks for), holding
# /agnhost built by scripts/kube-e2e-setup.sh and the tools the network tests exec in it: dash as
# /bin/sh, a static busybox for the small tools, the machine's curl with the libraries ldd finds, and Debian's
# netcat-openbsd (`nc -u`, which busybox lacks) and dig (bind9-dnsutils, with the libraries the
# machine lacks) fetched with `apt-get download` and unpacked, not installed, glibc's getent. The
# same archive is tagged registry.k8s.io/e2e-test-images/jessie-dnsutils:1.7 too: the DNS tests'
# second querier only needs sh, dig and getent from it. Its default command is `pause`, as
# upstream's (a pod that names no command, like the HostPort test's host-exec pod, must keep
# running). Upstream's agnhost image is Alpine with iproute2, iperf and CoreDNS as well: the tests
# that need those fail here. Prints the archive path.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-lib.sh

KUBE_VERSION=v1.34.4
TAG=registry.k8s.io/e2e-test-images/agnhost:2.56
DNSUTILS_TAG=registry.k8s.io/e2e-test-images/jessie-dnsutils:1.7
# dig's packages and those of its libraries that a Debian 12 machine does not have installed.
DEBS=(netcat-openbsd bind9-dnsutils bind9-libs libfstrm0 libjemalloc2 liblmdb0 libmaxminddb0)
AGNHOST="$CACHE/go-bin/kube-e2e-$KUBE_VERSION/agnhost"
OUT="$CACHE/images/agnhost-2.56.tar"
setup_lock agnhost-image
if [ -s "$OUT" ] && [ "$OUT" -nt "$AGNHOST" ] && [ "$OUT" -nt "$0" ]; then echo "$OUT"; exit 0; fi
[ -x "$AGNHOST" ] || { echo "weft: $AGNHOST is missing (scripts/kube-e2e-setup.sh)" >&2; exit 1; }
for f in /bin/busybox /bin/dash /usr/bin/curl /usr/bin/getent; do [ -x "$f" ] || { echo "weft: $f is missing" >&2; exit 1; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
debs="$CACHE/debs"
mkdir -p "$debs" "$work/x"
for p in "${DEBS[@]}"; do
  ls "$debs/${p}"_*.deb >/dev/null 2>&1 || (cd "$debs" && apt-get download "$p" >&2)
  dpkg-deb -x "$(ls "$debs/${p}"_*.deb | head -1)" "$work/x"
done
X="$work/x"
R="$work/rootfs"
mkdir -p "$R"/{bin,usr/bin,etc,tmp,proc,sys,dev,root,uploads}
chmod 1777 "$R/tmp"
cp "$AGNHOST" "$R/agnhost"
# porter's TLS pair at / (upstream's Dockerfile adds them there; the Proxy tests dial its https ports).
porter="$CACHE/go-mod/k8s.io/kubernetes@$KUBE_VERSION/test/images/agnhost/porter"
cp "$porter/localhost.crt" "$porter/localhost.key" "$R/"
ln -s agnhost "$R/agnhost-2"
cp /bin/busybox "$R/bin/busybox"
for a in cat echo ls ps sleep kill grep sed awk wc head tail cut tr hostname ip ping wget true false test env id mkdir rm mv cp touch date timeout printf dd nslookup seq; do
  ln -s busybox "$R/bin/$a"
done
# dash, not busybox, as /bin/sh: Debian's static busybox runs its own applets before PATH (its nc has no -u).
cp /bin/dash "$R/bin/sh"
cp /usr/bin/curl /usr/bin/getent "$R/usr/bin/"
cp "$X/bin/nc.openbsd" "$R/usr/bin/nc"
cp "$X/usr/bin/dig" "$R/usr/bin/dig"
# Every library ldd finds, the unpacked ones first; those are copied to where they would be installed.
libs=$( { ldd /bin/dash; ldd /usr/bin/curl; ldd /usr/bin/getent; LD_LIBRARY_PATH="$X/usr/lib/x86_64-linux-gnu" ldd "$X/bin/nc.openbsd";
  LD_LIBRARY_PATH="$X/usr/lib/x86_64-linux-gnu" ldd "$X/usr/bin/dig"; } | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' | sort -u)
for lib in $libs; do
  dest=${lib#"$X"}
  mkdir -p "$R$(dirname "$dest")"
  cp -L "$lib" "$R$dest"
done
LD_LIBRARY_PATH= chroot "$R" /usr/bin/dig -v >/dev/null 2>&1 || { echo "weft: dig does not run in the image" >&2; exit 1; }
mkdir -p "$R/etc/ssl/certs"
printf 'root:x:0:0:root:/root:/bin/sh\nuser-defined-in-image:x:1000:50000::/home:/bin/sh\n' >"$R/etc/passwd"
printf 'root:x:0:\ngroup-defined-in-image:x:50000:user-defined-in-image\n' >"$R/etc/group"
echo 'hosts: files dns' >"$R/etc/nsswitch.conf"
out="$work/image"
mkdir -p "$out"
tar -C "$R" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out/layer.tar" .
diff_id=$(sha256sum "$out/layer.tar" | cut -d' ' -f1)
printf '%s' "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Entrypoint\":[\"/agnhost\"],\"Cmd\":[\"pause\"],\"WorkingDir\":\"/\",\"Env\":[\"PATH=/usr/bin:/bin\"],\"ExposedPorts\":{\"80/tcp\":{},\"8080/tcp\":{},\"8081/tcp\":{},\"9376/tcp\":{},\"5000/tcp\":{}}},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff_id\"]}}" >"$out/config.json"
printf '%s' "[{\"Config\":\"config.json\",\"RepoTags\":[\"$TAG\",\"$DNSUTILS_TAG\"],\"Layers\":[\"layer.tar\"]}]" >"$out/manifest.json"
mkdir -p "$(dirname "$OUT")"
tar -C "$out" -cf "$OUT.tmp" manifest.json config.json layer.tar
mv "$OUT.tmp" "$OUT"
echo "weft: $TAG and $DNSUTILS_TAG built into $OUT" >&2
echo "$OUT"
