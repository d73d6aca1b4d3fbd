#!/usr/bin/env bash
# The wall far from its server (issue 37; docs/operations.md, "A wall far
# from its server"): the testbed's 2x2 wall of 2560x1600 tiles at
# $PATH_FPS (5: 1.97 Gbit/s, what this 2-core VM carries through the
# delay line) for $PATH_SECS (15) s, over a delay line with each round
# trip in $PATH_RTTS (ms, default "0 10 20 40 80") and each loss in
# $PATH_LOSSES (%, default "0 0.1 1 2"), the playout latency `auto`; each
# lossy run once more with the sync's TCP segments lost too
# ($PATH_TCP_LOSS=no leaves those out).
# Per run: ticks shown and skipped, the latency the wall chose (in round
# trips, beside SRT's guide: 3 at up to 1% loss, 4 at 2-3%; and against
# one frame interval + 3 or 4 round trips), the skew's p99, the share of bytes sent again,
# requests per packet lost, the machine's CPU-seconds per GB; the
# reference is the first run (no delay, no loss), in the same run of this
# script, and every run's CPU is given as a ratio of it. And what the
# delay line itself held against its setting.
#
#   bench/path_bench.sh   (or bench/receiver_bench.sh path)
#
# Root only (network namespaces, iptables); bounded: every run stops by itself.
set -euo pipefail
source "$(dirname "$0")/common.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v iptables >/dev/null; then
  echo "path: needs root and iptables; skipped"
  exit 0
fi
fps=${PATH_FPS:-5}
secs=${PATH_SECS:-15}
rtts=${PATH_RTTS:-0 10 20 40 80}
losses=${PATH_LOSSES:-0 0.1 1 2}
tcp_loss=${PATH_TCP_LOSS:-yes}
work=$out/path
mkdir -p "$work"
[ -x build/testbed/pathline ] || cmake --build build --target pathline >/dev/null
config=$work/wall.toml
sed "s/^fps = .*/fps = $fps/" configs/testbed-2x2.toml > "$config"
printf '\n[sync]\nlatency_ms = "auto"\n' >> "$config"
[ -f "$work/movie/movie.toml" ] ||
  build/tools/wallcut --config "$config" --synthetic --frames 4 --out "$work/movie" -q >/dev/null
nodes=(tile01 tile02 tile03 tile04)

machine_cpu() { awk '/^cpu /{print ($2+$3+$4+$7+$8)/100}' /proc/stat; }

one_run() {  # RTT_MS LOSS_PERCENT TCP_LOSS(no|yes)
  local label=path.$1.$2 pids=() spec="rtt=${1}ms,loss=${2}%"
  if [ "$3" = yes ]; then label+=.tcp spec+=",tcp_loss=yes"; fi
  testbed/testbed.sh up --path "$spec" >/dev/null
  for n in "${nodes[@]}"; do
    ip netns exec "ts-$n" build/receiver/receiver --config "$config" --node "$n" --headless -q \
      --duration $((secs + 20)) --json "$work/$n.json" > "$work/$n.log" 2>&1 &
    pids+=($!)
  done
  sleep 1
  local c0 t0
  c0=$(machine_cpu) t0=$(date +%s.%N)
  timeout $((secs + 60)) ip netns exec ts-server "$(command -v mpirun)" -n 1 --oversubscribe \
    build/streamer/streamer --config "$config" --movie "$work/movie" --source memory \
    --ticks $((secs * fps)) -q --json "$work/streamer.json" > "$work/streamer.log" 2>&1 || true
  local cpu seconds
  cpu=$(awk -v a="$c0" -v b="$(machine_cpu)" 'BEGIN{print b-a}')
  seconds=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  testbed/testbed.sh path-report > "$work/path.json" 2>/dev/null || true
  testbed/testbed.sh down >/dev/null
  python3 - "$label" "$1" "$2" "$cpu" "$seconds" "$work" "$3" "$fps" <<'PY'
import json, os, sys
exec(os.environ["PYREC"])
label, rtt, loss, cpu, secs, work = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
tcp, fps = sys.argv[7] == "yes", float(sys.argv[8])
tx = json.load(open(work + "/streamer.json"))
sync = tx["sync"]
sent = sum(s["bytes"] for s in tx["streams"])
again = sum(s["retransmitted_bytes"] for s in tx["streams"])
tiles = [json.load(open("%s/%s.json" % (work, n)))["tiles"][0] for n in ("tile01", "tile02", "tile03", "tile04")]
lost = sum(t["lost"] for t in tiles)
asked = sum(t["nack_requested"] for t in tiles)
try:
    line = json.load(open(work + "/path.json"))
    held = line["out"]["held"]["p50_us"] / 1e3
except Exception:
    held = float("nan")
gb = sent / 1e9
rec(label + ".shown", sync["presented"] + sync["partial"]); rec(label + ".skipped", sync["skipped"])
rec(label + ".latency_ms", sync["latency_ms"]); rec(label + ".skew_p99_ms", sync["skew_p99_ms"])
rec(label + ".resent_share", again / max(sent, 1)); rec(label + ".nacks_per_lost", asked / lost if lost else 0)
rec(label + ".cpu_s_per_gb", cpu / gb)
srt = 3 if float(loss) <= 1 else 4  # SRT's guide, in round trips
target = 1000 / fps + srt * rtt      # issue 43's: a frame interval and as many round trips
print("rtt %3g ms, loss %4s%%%s: %d shown, %d skipped; latency %.0f ms = %.2f round trips (SRT's guide %d; "
      "interval + %d rtt: %.0f ms, %s); skew p99 %.2f ms; %.3f%% resent; %.2f requests per packet lost (%d lost); "
      "%.3f CPU-s/GB; line held %.1f ms one way"
      % (rtt, loss, " (TCP too)" if tcp else "", sync["presented"] + sync["partial"], sync["skipped"], sync["latency_ms"],
         sync["latency_ms"] / rtt if rtt else float("nan"), srt, srt, target,
         "within" if sync["latency_ms"] <= target else "over", sync["skew_p99_ms"], 100 * again / max(sent, 1),
         asked / lost if lost else 0, lost, cpu / gb, held))
PY
}

for rtt in $rtts; do
  for loss in $losses; do
    one_run "$rtt" "$loss" no
    if [ "$tcp_loss" = yes ] && [ "$loss" != 0 ]; then one_run "$rtt" "$loss" yes; fi
  done
done
python3 - $rtts -- $losses <<'PY'
import sys
r = {}
for line in open(__import__("os").environ["RESULTS"]):
    k, v = line.rstrip("\n").split("\t")
    r[k] = float(v)
cut = sys.argv.index("--")
rtts, losses = sys.argv[1:cut], sys.argv[cut + 1:]
base = r.get("path.%s.%s.cpu_s_per_gb" % (rtts[0], losses[0]))
if base:
    for rtt in rtts:
        print("rtt %3s ms: CPU-s/GB " % rtt + ", ".join(
            "%s%% loss %.2f x" % (loss, r["path.%s.%s.cpu_s_per_gb" % (rtt, loss)] / base)
            for loss in losses if "path.%s.%s.cpu_s_per_gb" % (rtt, loss) in r)
              + " the reference run's %.3f (rtt %s ms, %s%% loss)" % (base, rtts[0], losses[0]))
PY
