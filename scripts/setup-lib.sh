# Shared by scripts/*-setup.sh (sourced, not run): the cache of Go-built test peers (WEFT_CACHE_DIR,
# default /var/cache/weft), one lock per setup script because several checkouts of the project may
# run them at once on one machine, the Go environment that keeps module and build caches there,
# and publishing a built directory in one rename so that a half-built one is never seen.

CACHE=${WEFT_CACHE_DIR:-/var/cache/weft}

# setup_lock NAME: creates the cache and holds $CACHE/.NAME.lock (fd 9) until the script exits.
setup_lock() {
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.$1.lock"
  flock 9
}

# need_go WHAT: puts /usr/local/go/bin on PATH; fails naming WHAT when Go is missing.
need_go() {
  PATH="$PATH:/usr/local/go/bin"
  if ! command -v go >/dev/null; then
    echo "weft: Go is missing: cannot build $1" >&2
    exit 1
  fi
}

# go_cache_env: module and build caches under $CACHE (writable, so that rm -rf works).
go_cache_env() {
  export GOMODCACHE="$CACHE/go-mod" GOCACHE="$CACHE/go-build" GOFLAGS=-modcacherw
}

# publish_dir TMP DIR: replaces DIR by TMP in one rename.
publish_dir() {
  rm -rf "$2"
  mv "$1" "$2"
}

# module_src MODULE@VERSION DEST: a writable copy of the module's source at DEST (go mod download
# through the proxy into the module cache, then copied: the cache's files are read-only to go build).
module_src() {
  local src
  src=$(cd "$(dirname "$2")" && go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -n "$src" ] || { echo "weft: go mod download of $1 failed" >&2; exit 1; }
  cp -r "$src" "$2"
  chmod -R u+w "$2"
}

# built WHAT T0: says how long building WHAT took since T0 (date +%s).
built() {
  echo "weft: $1 built in $(($(date +%s) - $2)) s" >&2
}
