#!/usr/bin/env bash
# The test command behind `npm test`: build, typecheck, lint, unit tests, then the root-only
# namespace and end-to-end tests. Usage: scripts/test.sh [all|unit|ns|e2e|stress]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
if [ "$mode" = all ]; then bash scripts/deps.sh base; else bash scripts/deps.sh; fi

# start_peers: builds the Go peers (scripts/deps.sh peers) in the background, its lines marked
# [peers]; wait_peers waits for it and stops the run when it failed in CI (deps.sh's own rule).
start_peers() {
  ( set -o pipefail; bash scripts/deps.sh peers 2>&1 | sed -u 's/^/[peers] /' ) &
  peers_pid=$!
}
wait_peers() {
  local rc=0
  wait "$peers_pid" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "weft: scripts/deps.sh peers failed (exit $rc)" >&2
    [ "${CI:-}" != true ] || exit "$rc"
  fi
}

run_node_tests() { # $1: folder under test/
  mapfile -t files < <(find "test/$1" -name '*.test.ts' | sort)
  if [ "${#files[@]}" -eq 0 ]; then echo "no tests in test/$1"; return 0; fi
  node --import tsx --test --test-concurrency=1 --test-reporter=spec "${files[@]}"
}

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "############################################################" >&2
    echo "## SKIPPED: test/$1 needs root (network namespaces).       ##" >&2
    echo "## Run 'sudo npm test' to run them.                        ##" >&2
    echo "############################################################" >&2
    return 1
  fi
}

# The validate-first corpus runs as a sample here (16 evenly spread bad inputs per plugin); the
# whole corpus (over 500 inputs, about 5 minutes) runs in `npm run test:stress`.
export WEFT_VF_SAMPLE=${WEFT_VF_SAMPLE:-16}

case "$mode" in
  all)
    # The Go peers build while the steps that need none of them run (unit tests need no root and
    # no peer); the namespace and end-to-end tests wait for them.
    start_peers
    npm run build
    npx tsc --noEmit
    npx eslint .
    run_node_tests unit
    wait_peers
    if need_root ns; then run_node_tests ns; run_node_tests e2e; run_node_tests fuzz; fi
    ;;
  unit) run_node_tests unit ;;
  ns) need_root ns && run_node_tests ns ;;
  e2e) need_root e2e && run_node_tests e2e ;;
  fuzz) need_root fuzz && run_node_tests fuzz ;;
  stress) need_root stress && bash scripts/stress.sh ;;
  *) echo "usage: $0 [all|unit|ns|e2e|fuzz|stress]" >&2; exit 2 ;;
esac
