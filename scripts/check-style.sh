#!/usr/bin/env bash
# The house style, enforced (scripts/test.sh runs it, so CI does): every C++
# file of the tree as clang-format writes it (.clang-format), and no finding
# of the agreed clang-tidy checks (.clang-tidy; tests/, streamer/ and
# receiver/ adjust them) in common/, streamer/, receiver/, tools/, testbed/, bench/,
# sim/ and tests/. tests/layering/ is left out: its probe must not compile.
#   scripts/check-style.sh [BUILD_DIR]   BUILD_DIR: a configured build with
#                                        compile_commands.json (default build/)
#   scripts/check-style.sh BUILD_DIR --changed
#                          clang-tidy only over what changed since the last whole
#                          pass that found nothing (.ci/tidy-clean; CI's way)
#   scripts/check-style.sh BUILD_DIR --record
#                          the whole pass, and when it finds nothing, HEAD
#                          written to .ci/tidy-clean (commit it)
#   scripts/check-style.sh --fix         rewrites the files clang-format would change
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' | grep -v '^tests/fuzz/corpus/')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
build=${1:-build}
mode=${2:-}
if [ "$mode" = "--record" ] && ! git diff --quiet HEAD; then
  echo "check-style: --record checks a committed tree: commit or stash first" >&2
  exit 2
fi

echo "check-style: clang-format over ${#files[@]} files" >&2
clang-format --dry-run -Werror "${files[@]}"

# Which translation units clang-tidy reads: a regex over compile_commands.json.
units="$PWD/(common|streamer|receiver|tools|testbed|bench|tests|sim)/(?!layering/)"
base=$(cat .ci/tidy-clean 2>/dev/null || true)
if [ "$mode" = "--changed" ] && [ -n "$base" ] && git cat-file -e "$base^{commit}" 2>/dev/null; then
  # A whole pass costs CI 15 minutes on 2 cores (docs/decisions.md, "CI
  # time"). The units changed since it, and those that include a changed
  # header (a header's findings show in its includers).
  mapfile -t changed < <(git diff --name-only "$base" -- '*.cpp' '*.h' | grep -v '^tests/layering/' || true)
  mapfile -t headers < <(printf '%s\n' "${changed[@]}" | grep '\.h$' || true)
  mapfile -t includers < <(for h in "${headers[@]}"; do git grep -l -F "#include \"$h\"" -- '*.cpp' || true; done)
  mapfile -t chosen < <(printf '%s\n' "${changed[@]}" "${includers[@]}" | grep '\.cpp$' | sort -u |
                        while read -r f; do [ -f "$f" ] && echo "$f"; done)
  echo "check-style: clang-tidy over ${#chosen[@]} units changed since $base (the last clean whole pass)" >&2
  [ "${#chosen[@]}" -gt 0 ] || { echo "check-style: clean" >&2; exit 0; }
  units="$PWD/($(printf '%s|' "${chosen[@]}" | sed 's/[.+]/\\&/g; s/|$//'))\$"
else
  echo "check-style: clang-tidy (.clang-tidy) over $build/compile_commands.json" >&2
fi
log=$(mktemp) db=$(mktemp -d)
trap 'rm -rf "$log" "$db"' EXIT
# The build compiles files in batches (scripts/batches.py): clang-tidy reads
# each file as itself.
python3 scripts/batches.py database "$build" "$db"
if ! run-clang-tidy -p "$db" -quiet -j "$(nproc)" "$units" >"$log" 2>&1; then
  grep -E "(warning|error): " "$log" | sed 's/\x1b\[[0-9;]*m//g' | sort -u >&2 || cat "$log" >&2
  echo "check-style: clang-tidy found the above" >&2
  exit 1
fi
if [ "$mode" = "--record" ]; then
  git rev-parse HEAD >.ci/tidy-clean
  echo "check-style: clean; .ci/tidy-clean is now $(cat .ci/tidy-clean)" >&2
fi
echo "check-style: clean" >&2
