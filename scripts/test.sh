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
stage style
scripts/check-style.sh build --changed
stage "receiver under ThreadSanitizer"
scripts/build.sh --tsan
stage "AddressSanitizer and UndefinedBehaviorSanitizer build"
scripts/build.sh --sanitize

# The Debian packages as an operator gets them: built, installed with
# apt-get, a wall played with the installed programs alone, removed with
# nothing left (scripts/package-test.sh; needs root for apt-get).
if [ "$(id -u)" -eq 0 ]; then
  stage "packages: build, install, play, remove"
  scripts/package-test.sh
fi

stage "tests (RelWithDebInfo build)"
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 120

# Under ASan + UBSan (docs/decisions.md, "What the sanitizers repeat"):
# the unit tests and the fuzz corpora (label unit), the simulation's
# scenarios, swarm and determinism against the optimized build (label
# sim), and the hostile-input tests of the live suite. The other live
# tests assert what the optimized build's run asserts, and their timing
# under ASan on 2 cores is the VM host's.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
stage "hostile-input tests under ASan + UBSan"
ctest --test-dir build-asan --output-on-failure --timeout 300 \
  -R '^(HostileControlPorts|HostileInputTest)\.'
stage "unit tests and the simulation under ASan + UBSan"
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 300 -L 'unit|sim'
