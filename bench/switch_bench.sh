#!/usr/bin/env bash
# Switching movies at the reference wall's size (issue 36): LOADS (20)
# `wallctl load`s in a row on a 5x3 wall of 2560x1600 tiles at SWITCH_FPS
# (6: what this 2-core VM shows whole; 22 on a 16-core server), 8 headless
# display nodes on loopback, alternating two movies of a library. Per
# switch: the time from `load` to the tick every tile switched at
# (`wallctl load` returns then) and the ticks the swap sync skipped. The
# reference, in the same run: the ticks skipped over as long a time of
# playing without loads, and the frame interval the switch time is set
# against. SWITCH_SOURCE=disk switches between 30-frame stores read with
# O_DIRECT (5.5 GB each, made once) instead of --source memory.
#   bench/switch_bench.sh            SWITCH_FPS=22 LOADS=20 SWITCH_SOURCE=disk
set -euo pipefail
source "$(dirname "$0")/common.sh"
fps=${SWITCH_FPS:-6}
loads=${LOADS:-20}
src=${SWITCH_SOURCE:-memory}
cfg=$out/switch.toml
lib=${SWITCH_LIBRARY:-$out/switch-library}
reference_wall_config "$fps" "$cfg" "$(printf '[stream]\nmtu = 9000\nport_base = 50000\n[control]\nport = 7479\n[http]\nport = 0\n[library]\npath = "%s"' "$lib")"
frames=4 source=(--source memory)
if [ "$src" = disk ]; then frames=30 source=(); fi
for m in a b; do
  [ "$(sed -n 's/^frames = //p' "$lib/$m/movie.toml" 2>/dev/null)" = "$frames" ] ||
    build/tools/wallcut --config "$cfg" --synthetic --frames "$frames" --seed "$([ $m = a ] && echo 1 || echo 2)" \
      -q --force --out "$lib/$m"
done
ctl() { build/tools/wallctl --config "$cfg" --timeout 30 "$@"; }
skipped() { ctl status | python3 -c "import json,sys; print(json.load(sys.stdin)['sync']['skipped'])"; }

pids=()
for i in 1 2 3 4 5 6 7 8; do
  build/receiver/receiver --config "$cfg" --node "$(printf tile%02d "$i")" --headless -q --duration 600 \
    >"$out/switch-rx$i.log" 2>&1 &
  pids+=($!)
done
trap 'kill -TERM "${pids[@]}" 2>/dev/null || true' EXIT
sleep 1
scripts/streamer.sh --config "$cfg" --movie a "${source[@]}" --duration 500 -q \
  --json "$out/switch-tx.json" >"$out/switch-tx.log" 2>&1 &
tx=$!
for _ in $(seq 600); do
  ctl status 2>/dev/null | grep -q '"tick":[1-9][0-9]' && break
  sleep 0.2
done

# The switches: one every second or so, a then b then a...
times=() skips=()
t_start=$(date +%s.%N)
for i in $(seq "$loads"); do
  movie=$([ $((i % 2)) -eq 1 ] && echo b || echo a)
  before=$(skipped)
  t0=$(date +%s.%N)
  ctl load "$movie" >"$out/switch-load.json" || { echo "load $movie failed: $(cat "$out/switch-load.json")"; exit 1; }
  t1=$(date +%s.%N)
  sleep 1
  times+=("$(python3 -c "print($t1 - $t0)")")
  skips+=($(($(skipped) - before)))
done
t_end=$(date +%s.%N)
# The reference: as long a time without loads.
base_before=$(skipped)
sleep "$(python3 -c "print(round($t_end - $t_start))")"
base=$(($(skipped) - base_before))
ctl stop >/dev/null || true
wait "$tx" || true

python3 - "$fps" "$base" "${times[*]}" "${skips[*]}" <<PY
$PYREC
import sys
fps, base = float(sys.argv[1]), int(sys.argv[2])
times = [float(t) for t in sys.argv[3].split()]
skips = [int(s) for s in sys.argv[4].split()]
interval = 1 / fps
print(f"switch: {len(times)} loads on the 5x3 wall of 2560x1600 at {fps:g} fps ($src)")
print(f"  load to switch: mean {sum(times)/len(times)*1000:.0f} ms, max {max(times)*1000:.0f} ms "
      f"= {sum(times)/len(times)/interval:.2f} frame intervals (mean)")
print(f"  ticks skipped around the switches: {sum(skips)} ({max(skips)} at most per switch); "
      f"reference, as long without loads: {base}")
rec("switch_load_to_switch_ms", round(sum(times) / len(times) * 1000))
rec("switch_intervals", round(sum(times) / len(times) / interval, 2))
rec("switch_skipped", sum(skips))
rec("switch_skipped_reference", base)
PY
