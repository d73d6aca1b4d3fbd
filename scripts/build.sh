#!/usr/bin/env bash
# Configures and builds tilestream.
#   scripts/build.sh [BUILD_DIR] [--sanitize] [--fuzz] [extra cmake args...]
# BUILD_DIR defaults to build/ (build-asan/ with --sanitize, build-fuzz/ with --fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."

dir="" args=()
for a in "$@"; do
  case "$a" in
    --sanitize) args+=(-DTILESTREAM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug); dir=${dir:-build-asan} ;;
    --fuzz) args+=(-DTILESTREAM_FUZZERS=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
            dir=${dir:-build-fuzz} ;;
    -*) args+=("$a") ;;
    *) dir="$a" ;;
  esac
done
dir=${dir:-build}

cmake -S . -B "$dir" "${args[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)"
