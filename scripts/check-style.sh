#!/usr/bin/env bash
# The house style, enforced (scripts/test.sh runs it, so CI does): every C++
# file of the tree as clang-format writes it (.clang-format), and no finding
# of the agreed clang-tidy checks (.clang-tidy; tests/, streamer/ and
# receiver/ adjust them) in common/, streamer/, receiver/, tools/, bench/ and
# tests/. tests/layering/ is left out: its probe must not compile.
#   scripts/check-style.sh [BUILD_DIR]   BUILD_DIR: a configured build with
#                                        compile_commands.json (default build/)
#   scripts/check-style.sh --fix         rewrites the files clang-format would change
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' | grep -v '^tests/fuzz/corpus/')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
build=${1:-build}

echo "check-style: clang-format over ${#files[@]} files" >&2
clang-format --dry-run -Werror "${files[@]}"

echo "check-style: clang-tidy (.clang-tidy) over $build/compile_commands.json" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! run-clang-tidy -p "$build" -quiet -j "$(nproc)" \
     "$PWD/(common|streamer|receiver|tools|bench|tests)/(?!layering/)" >"$log" 2>&1; then
  grep -E "(warning|error): " "$log" | sed 's/\x1b\[[0-9;]*m//g' | sort -u >&2 || cat "$log" >&2
  echo "check-style: clang-tidy found the above" >&2
  exit 1
fi
echo "check-style: clean" >&2
