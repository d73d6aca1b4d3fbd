#!/usr/bin/env bash
# Runs the README's test command RUNS times in a row (default 3) with two
# CPU hogs beside it (stress-ng --cpu 2), as a loaded CI machine would: a
# test that flakes under load shows here, not in someone else's CI. Stops at
# the first failing run; prints each run's time and ctest summaries.
#   scripts/test-under-load.sh [RUNS]
#   scripts/test-under-load.sh RUNS REGEX   only the tests of build/ that
#                                           REGEX names (ctest -R), RUNS times
#                                           (a live test you add or change)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
only=${2:-}
command -v stress-ng >/dev/null || scripts/install-deps.sh
mkdir -p build
stress-ng --cpu 2 --timeout 0 --quiet &
hog=$!
trap 'kill $hog 2>/dev/null || true' EXIT
for ((i = 1; i <= runs; i++)); do
  log=build/test-under-load-$i.log
  start=$(date +%s)
  rc=0
  if [ -n "$only" ]; then
    ctest --test-dir build --output-on-failure -R "$only" >"$log" 2>&1 || rc=$?
  else
    scripts/test.sh >"$log" 2>&1 || rc=$?
  fi
  secs=$(($(date +%s) - start))
  echo "run $i of $runs: exit $rc in ${secs} s ($log)"
  grep -E "tests passed|tests failed" "$log" | sed 's/^/  /'
  grep -E "^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)" "$log" | sed 's/^/  /' || true
  [ $rc -eq 0 ] || exit $rc
done
