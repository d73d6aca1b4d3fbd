#!/usr/bin/env bash
# Runs the same seeds with two wallsim binaries (or one twice) and fails
# unless every counter agrees, bit for bit: the simulation's determinism,
# within a build and across builds (docs/simulation.md). What the run cost
# (sim.cpu_seconds) is left out.
#   sim/same_counters.sh WALLSIM_A WALLSIM_B
set -euo pipefail
a=$1 b=$2
if [ ! -x "$a" ]; then echo "no $a to compare with (build it first)" >&2; exit 77; fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
runs=("--scenario pixels-lost-1pct --seconds 4"
      "--scenario reference-22fps-lost-1pct --seconds 2"
      "--scenario tcp-loss-2pct-40ms --seconds 5"
      "--scenario node-stopped-10s --seconds 15"
      "--scenario reorder-dup --seconds 5"
      "--scenario clock-drift --seconds 5"
      "--scenario swarm --seed 74"
      "--scenario swarm --seed 316")
i=0
for run in "${runs[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086  # the options are words
  "$a" $run --json "$out/a$i.json" >/dev/null 2>&1 || true
  # shellcheck disable=SC2086
  "$b" $run --json "$out/b$i.json" >/dev/null 2>&1 || true
  for f in "$out/a$i.json" "$out/b$i.json"; do
    [ -s "$f" ] || { echo "no report from: wallsim $run" >&2; exit 1; }
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["sim"].pop("cpu_seconds"); print(json.dumps(j, sort_keys=True, indent=1))' "$f" >"$f.counters"
  done
  if ! diff -q "$out/a$i.json.counters" "$out/b$i.json.counters" >/dev/null; then
    echo "wallsim $run: the counters differ between $a and $b:" >&2
    diff "$out/a$i.json.counters" "$out/b$i.json.counters" | head -20 >&2
    exit 1
  fi
  echo "wallsim $run: the same counters"
done
