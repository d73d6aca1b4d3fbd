#!/usr/bin/env bash
# The README's test command: installs the dependencies, builds, checks the
# house style (scripts/check-style.sh: clang-format over every file, the
# agreed clang-tidy checks over what changed since the last clean whole
# pass, .ci/tidy-clean; a finding fails the run), and runs every test in a
# normal build (with the receiver's end-to-end tests once more against a
# ThreadSanitizer build of it), then under AddressSanitizer and
# UndefinedBehaviorSanitizer the unit tests, the wall's simulation and the
# hostile-input tests. Output ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each stage says when it starts, in minutes into the run: where CI's time goes.
stage() { echo "== $* ($((SECONDS / 60))m$((SECONDS % 60))s in) ==" >&2; }
stage dependencies
scripts/install-deps.sh
stage build
scripts/build.sh build
stage "receiver under ThreadSanitizer"
scripts/build.sh --tsan

# Beside the live tests, at low priority: the style check, the unit tests
# and the simulation (the normal build's, then the sanitizer build's).
# They need CPU, not time: the unit tests drive their own clocks and the
# simulation runs on virtual time, so the load beside them changes no
# result; the live tests mostly wait on a wall's clock, assert nothing the
# machine's speed decides, and are held to pass with two CPU hogs beside
# them (scripts/test-under-load.sh). Their output follows the live tests'.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
beside_log=build/beside-the-live-tests.log
(
  renice -n 10 -p "$BASHPID" >/dev/null  # before it starts anything
  stage style
  scripts/check-style.sh build --changed
  stage "unit tests and the simulation (RelWithDebInfo build)"
  ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 120 -L 'unit|sim'
  stage "AddressSanitizer and UndefinedBehaviorSanitizer build"
  scripts/build.sh --sanitize
  # Under ASan + UBSan (docs/decisions.md, "What the sanitizers repeat"):
  # the unit tests and the fuzz corpora (label unit), the simulation's
  # scenarios, swarm and determinism against the optimized build (label
  # sim).
  stage "unit tests and the simulation under ASan + UBSan"
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 300 -L 'unit|sim'
) >"$beside_log" 2>&1 &
beside=$!
# Interrupted, or a stage below failing: nothing of it runs on.
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
trap 'kill_tree $beside' EXIT

rc=0
# The Debian packages as an operator gets them: built, installed with
# apt-get, a wall played with the installed programs alone, removed with
# nothing left (scripts/package-test.sh; needs root for apt-get).
if [ "$(id -u)" -eq 0 ]; then
  stage "packages: build, install, play, remove"
  scripts/package-test.sh || rc=$?
fi

stage "live tests (RelWithDebInfo build)"
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 120 -LE 'unit|sim' || rc=$?

stage "waiting for the style check and the sanitizers' run beside the tests"
beside_rc=0
wait "$beside" || beside_rc=$?
trap - EXIT
cat "$beside_log"
[ "$beside_rc" -eq 0 ] || { echo "== the style check or the sanitizers' run failed ==" >&2; exit "$beside_rc"; }

# The hostile-input tests of the live suite under ASan + UBSan, alone: the
# other live tests assert what the optimized build's run asserts, and their
# timing under ASan on 2 cores is the VM host's.
stage "hostile-input tests under ASan + UBSan"
ctest --test-dir build-asan --output-on-failure --timeout 300 \
  -R '^(HostileControlPorts|HostileInputTest)\.' || rc=$?
exit "$rc"
