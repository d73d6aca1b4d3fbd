#!/usr/bin/env bash
# Configures and builds tilestream.
#   scripts/build.sh [BUILD_DIR] [--sanitize] [--tsan] [--fuzz] [extra cmake args...]
# BUILD_DIR defaults to build/ (build-asan/ with --sanitize, build-tsan/ with
# --tsan, build-fuzz/ with --fuzz). --tsan builds the receiver alone, under
# ThreadSanitizer: the normal build's receiver tests run it (ctest
# receiver_under_tsan).
set -euo pipefail
cd "$(dirname "$0")/.."

dir="" args=() target=()
for a in "$@"; do
  case "$a" in
    --sanitize) args+=(-DTILESTREAM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DTILESTREAM_BENCH=OFF
                       "-DTILESTREAM_REFERENCE_WALLSIM=$PWD/build/sim/wallsim")  # sim/same_counters.sh
                dir=${dir:-build-asan} ;;
    --tsan) args+=(-DTILESTREAM_TSAN=ON -DTILESTREAM_TESTS=OFF -DTILESTREAM_BENCH=OFF)
            target=(--target receiver); dir=${dir:-build-tsan} ;;
    --fuzz) args+=(-DTILESTREAM_FUZZERS=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
            dir=${dir:-build-fuzz} ;;
    -*) args+=("$a") ;;
    *) dir="$a" ;;
  esac
done
dir=${dir:-build}

# ccache, keyed so that a clone in another folder (CI's) hits what a build in
# this one stored: paths under the checkout are hashed relative to it, the
# working directory is not hashed, and __FILE__ (gtest, spdlog) does not
# turn direct hits off (docs/decisions.md, "CI time").
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
  export CCACHE_SLOPPINESS=file_macro,time_macros,include_file_mtime,include_file_ctime
  args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

cmake -S . -B "$dir" "${args[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" "${target[@]}"
