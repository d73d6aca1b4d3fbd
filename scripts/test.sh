#!/usr/bin/env bash
# The README's test command: installs the dependencies, builds, checks the
# house style (scripts/check-style.sh: clang-format and the agreed
# clang-tidy checks; a finding fails the run), and runs every test twice: in
# a normal build (with the receiver's end-to-end tests once more against a
# ThreadSanitizer build of it), then under AddressSanitizer and
# UndefinedBehaviorSanitizer. Output ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each stage says when it starts, in minutes into the run: where CI's time goes.
stage() { echo "== $* ($((SECONDS / 60))m$((SECONDS % 60))s in) ==" >&2; }
stage dependencies
scripts/install-deps.sh
stage build
scripts/build.sh build
stage style
scripts/check-style.sh build
stage "receiver under ThreadSanitizer"
scripts/build.sh --tsan
stage "AddressSanitizer and UndefinedBehaviorSanitizer build"
scripts/build.sh --sanitize

stage "tests (RelWithDebInfo build)"
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 120

stage "tests under ASan + UBSan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 300
