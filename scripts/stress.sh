#!/usr/bin/env bash
# The full reliability run behind `npm run test:stress`: every input of the validate-first corpus, the fuzz suite at >= 2,000 cases per
# plugin (plus 100 through each binary), 200 SIGKILL trials of bridge ADD, storms of 64 parallel ADD/DEL
# and 1,000 mixed operations, and the soaks of test/stress (issue 20: SOAK_CYCLES bridge+portmap cycles,
# weftd through WEFTD_SOAK_EVENTS lease events and WEFTD_SOAK_FLAPS uplink flaps). Needs root (network namespaces made by
# the tests; the root namespace is never touched). Prints the figures for the closing note at the end.
# Usage: scripts/stress.sh [extra node --test args]; FUZZ_SEED=<n> replays a fuzz run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then echo "stress: needs root (network namespaces)" >&2; exit 1; fi
[ -x dist/bin/bridge ] || npm run build

export FUZZ_CASES=${FUZZ_CASES:-2000}
export FUZZ_BIN_CASES=${FUZZ_BIN_CASES:-100}
export CRASH_TRIALS=${CRASH_TRIALS:-200}
export STORM_PARALLEL=${STORM_PARALLEL:-64}
export STORM_OPS=${STORM_OPS:-1000}
export STORM_CONCURRENCY=${STORM_CONCURRENCY:-16}

log=$(mktemp /tmp/weft-stress-XXXXXX.log)
export WEFT_VF_SAMPLE=0 # every bad input of the validate-first corpus
mapfile -t files < <(find test/fuzz test/e2e/reliability test/e2e/validate-first -name '*.test.ts' | sort; [ -d test/stress ] && find test/stress -name '*.test.ts' | sort)
status=0
node --import tsx --test --test-concurrency=1 --test-timeout=3600000 --test-reporter=spec "$@" "${files[@]}" 2>&1 | tee "$log" || status=$?

echo
echo "== stress figures (full log: $log) =="
grep -E '^\s*ℹ .*(cases|trials|parallel|soak)' "$log" | sed 's/^\s*ℹ /  /' || true
grep -E '^ℹ (tests|pass|fail)' "$log" || true
exit "$status"
