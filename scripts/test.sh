#!/usr/bin/env bash
# The README's test command: installs the dependencies, builds, checks the
# house style (scripts/check-style.sh: clang-format and the agreed
# clang-tidy checks; a finding fails the run), and runs every test twice: in
# a normal build (with the receiver's end-to-end tests once more against a
# ThreadSanitizer build of it), then under AddressSanitizer and
# UndefinedBehaviorSanitizer. Output ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh build
scripts/check-style.sh build
scripts/build.sh --tsan
scripts/build.sh --sanitize

echo "== tests (RelWithDebInfo build) ==" >&2
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 120

echo "== tests under ASan + UBSan ==" >&2
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 300
