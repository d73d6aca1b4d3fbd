#!/usr/bin/env bash
# Memory soak: does anything grow while the wall plays for a long time?
#
#   bench/memory_soak.sh [SECONDS]    (default 600)
#
# The demo wall (configs/demo-5x3.toml: 15 tiles of 640x400 at 30 fps, one
# receiver process for all of them, swap sync on) streams movies/demo-5x3
# from disk (O_DIRECT, looping) as a static job of 16 ranks for SECONDS.
# Every 10 s the RSS of every streamer rank and of the receiver is sampled.
# Prints, per process, RSS once warm (the first sample at or after 60 s), at
# the end and at most, and the growth; records the totals for bench/run.
# Not a pass/fail test: a figure to read (docs/hardening.md has the last).
set -euo pipefail
source "$(dirname "$0")/common.sh"
soak=${1:-600}
interval=10
config=configs/demo-5x3.toml
movie=movies/demo-5x3
if [ ! -f "$movie/movie.toml" ]; then
  build/tools/wallcut --config "$config" --synthetic --frames 300 --out "$movie"
fi
samples=$out/memory_soak.tsv
: > "$samples"

build/receiver/receiver --config "$config" --headless -q --json "$out/memory_soak_receiver.json" \
  > "$out/memory_soak_receiver.txt" 2>&1 &
receiver=$!
trap 'kill $receiver 2>/dev/null || true' EXIT
sleep 1
scripts/streamer.sh -n 16 --config "$config" --movie "$movie" --duration "$soak" -q \
  --json "$out/memory_soak_streamer.json" > "$out/memory_soak_streamer.txt" 2>&1 &
streamer=$!
start=$SECONDS
echo "memory_soak: the demo wall for $soak s, RSS sampled every $interval s" >&2
while kill -0 "$streamer" 2>/dev/null; do
  t=$((SECONDS - start))
  for pid in $(pgrep -x streamer) $receiver; do
    rss=$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$rss" ] && printf '%s\t%s\t%s\t%s\n' "$t" "$pid" "$(cat /proc/$pid/comm 2>/dev/null)" "$rss" >> "$samples"
  done
  sleep "$interval"
done
wait "$streamer" || echo "memory_soak: the streamer exited $?" >&2
kill -TERM $receiver 2>/dev/null || true
wait $receiver 2>/dev/null || true

python3 - "$samples" "$soak" <<EOF
import collections, sys
$PYREC
soak = int(sys.argv[2])
# Samples while the wall played (the ranks free their buffers as they end).
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
rows = [r for r in rows if int(r[0]) < soak]
by = collections.defaultdict(list)
for t, pid, name, rss in rows:
    by[(name, int(pid))].append((int(t), int(rss)))
warm_at = 60
total_warm = total_end = 0
worst = 0
print("%-9s %7s %10s %10s %10s %8s" % ("process", "pid", "warm KiB", "end KiB", "max KiB", "growth"))
for (name, pid), s in sorted(by.items()):
    warm = next((r for t, r in s if t >= warm_at), s[0][1])
    end = s[-1][1]
    print("%-9s %7d %10d %10d %10d %+8d" % (name, pid, warm, end, max(r for _, r in s), end - warm))
    total_warm += warm
    total_end += end
    worst = max(worst, end - warm)
span = max(int(r[0]) for r in rows)
print("total: %d processes, %d KiB once warm, %d KiB after %d s: %+d KiB; most any one grew: %+d KiB"
      % (len(by), total_warm, total_end, span, total_end - total_warm, worst))
rec("soak_seconds", span)
rec("soak_processes", len(by))
rec("soak_rss_warm_kib", total_warm)
rec("soak_rss_growth_kib", total_end - total_warm)
rec("soak_rss_worst_growth_kib", worst)
EOF
tail -n 20 "$out/memory_soak_receiver.txt" | grep -E "final report|swap sync|^tile" | head -4
grep -E "total|sync" "$out/memory_soak_streamer.txt" | tail -3
