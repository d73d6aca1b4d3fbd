#!/usr/bin/env bash
# The README's test command: installs the dependencies, builds, checks the
# house style (scripts/check-style.sh: clang-format over every file, the
# agreed clang-tidy checks over what changed since the last clean whole
# pass, .ci/tidy-clean; a finding fails the run), and runs every test in a
# normal build (with the receiver's end-to-end tests once more against a
# ThreadSanitizer build of it), then under AddressSanitizer and
# UndefinedBehaviorSanitizer every unit test and the live tests that are
# not left out below. Output ends with ctest's summary.
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

# Live tests the sanitizer build does not repeat (docs/decisions.md, "What
# the sanitizers repeat"): more of the same code under other faults (the
# testbed's loss, links, NICs and second server: LongPath's loss and burst
# over a delay and the refusal test stay), third-party programs (the interop
# suites), and a launcher waiting for dead processes. Every
# HostileControlPorts case runs here too.
not_sanitized='^(TestbedTest|TwoServers|LinkEvents|RetransmissionTest|InteropTest|StreamerInteropTest)\.'
not_sanitized+='|^PathFaults\.(ADisplayNode|ANicThat)'
not_sanitized+='|^StreamerTest\.(Dead|AJobStoppedWhole|ProcessesTheRanks)'
stage "tests under ASan + UBSan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 300 -E "$not_sanitized"
