#!/usr/bin/env bash
# A live source's latency (issue 44, docs/live.md): from a picture complete
# at the server to every tile showing it. build/bench/live_counter sends
# FRAMES numbered pictures (one colour each) at SOURCE_FPS to the
# streamer's live source over loopback; the 2x2 wall of TILE tiles (no
# bezels: the picture is cut pixel for pixel) plays it at WALL_FPS, and
# its two headless display nodes log when each tile showed which picture
# (--frame-log names the picture, --present-log the moment). Per picture
# shown on every tile: the latest tile's moment minus the moment the
# picture's last packet left. The reference, in the same run: the wall's
# frame interval and its playout latency (sync.latency_ms); the bound is
# 2 intervals + the playout latency.
#   bench/live_latency.sh       WALL_FPS=30 SOURCE_FPS=30 FRAMES=300 TILE=640x400 LATENCY_MS=0
set -euo pipefail
source "$(dirname "$0")/common.sh"
wall_fps=${WALL_FPS:-30}
source_fps=${SOURCE_FPS:-30}
frames=${FRAMES:-300}
tile=${TILE:-640x400}
tw=${tile%x*} th=${tile#*x}
[ -x build/bench/live_counter ] || scripts/build.sh >/dev/null
port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
p=() && for _ in 1 2 3 4 5; do p+=("$(port)"); done
cfg=$out/live-latency.toml
cat >"$cfg" <<EOF
[wall]
columns = 2
rows = 2
tile_width = $tw
tile_height = $th
fps = $wall_fps
[stream]
mtu = 9000
[control]
port = 7478
[http]
port = 0
[sync]
latency_ms = ${LATENCY_MS:-0}
[[node]]
name = "left"
address = "127.0.0.1"
tiles = ["r0c0", "r1c0"]
ports = [${p[0]}, ${p[2]}]
[[node]]
name = "right"
address = "127.0.0.1"
tiles = ["r0c1", "r1c1"]
ports = [${p[1]}, ${p[3]}]
EOF
cat >"$out/live-latency.sdp" <<EOF
v=0
o=- 0 0 IN IP4 127.0.0.1
s=counter
c=IN IP4 127.0.0.1
t=0 0
m=video ${p[4]} RTP/AVP 96
a=rtpmap:96 raw/90000
a=fmtp:96 sampling=RGB; width=$((2 * tw)); height=$((2 * th)); depth=8
EOF
ctl() { build/tools/wallctl --config "$cfg" --timeout 30 "$@"; }
pids=()
trap 'kill -TERM "${pids[@]}" 2>/dev/null || true' EXIT
for node in left right; do
  build/receiver/receiver --config "$cfg" --node "$node" --headless -q --duration 600 \
    --frame-log "$out/live-$node-frames.txt" --present-log "$out/live-$node-shown.txt" \
    >"$out/live-$node.log" 2>&1 &
  pids+=($!)
done
sleep 1
scripts/streamer.sh --config "$cfg" --live "cam=$out/live-latency.sdp" --duration 500 -q \
  --json "$out/live-tx.json" >"$out/live-tx.log" 2>&1 &
tx=$!
for _ in $(seq 300); do ctl status >/dev/null 2>&1 && break; sleep 0.2; done
ctl load cam >/dev/null
build/bench/live_counter --to "127.0.0.1:${p[4]}" --size "$((2 * tw))x$((2 * th))" --tile "$tile" \
  --fps "$source_fps" --frames "$frames" --log "$out/live-sent.txt"
sleep 1
ctl stop >/dev/null || true
wait "$tx" || true
kill -TERM "${pids[@]}" 2>/dev/null || true
wait "${pids[@]}" 2>/dev/null || true

python3 - "$out" "$wall_fps" "$source_fps" "$tile" <<'PY'
import json, os, statistics, sys
out, wall_fps, source_fps, tile = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
exec(os.environ["PYREC"])
sent = {}        # checksum -> (picture, sent ns)
for line in open(f"{out}/live-sent.txt"):
    n, ns, sum_ = line.split()
    sent[sum_] = (int(n), int(ns))
shown = {}       # picture -> tile -> first moment shown
for node in ("left", "right"):
    names = {}   # (tile, timestamp) -> checksum
    for line in open(f"{out}/live-{node}-frames.txt"):
        t, ts, sum_ = line.split()
        names[(t, ts)] = sum_
    for line in open(f"{out}/live-{node}-shown.txt"):
        t, ts, ns = line.split()
        picture = sent.get(names.get((t, ts), ""))
        if picture:
            shown.setdefault(picture[0], {}).setdefault(t, int(ns))
sent_at = {n: ns for n, ns in sent.values()}
lat = sorted((max(tiles.values()) - sent_at[n]) / 1e6 for n, tiles in shown.items() if len(tiles) == 4)
report = json.load(open(f"{out}/live-tx.json"))
playout = float(report.get("sync", {}).get("latency_ms", 0) or 0)
interval = 1000 / wall_fps
if not lat:
    sys.exit("live latency: no picture shown on every tile (see the logs in " + out + ")")
p50, p99 = statistics.median(lat), lat[min(len(lat) - 1, int(len(lat) * 0.99))]
print(f"live latency: {len(sent)} pictures of {tile} x 4 sent at {source_fps:g} fps, "
      f"{len(lat)} shown on every tile of the wall at {wall_fps:g} fps")
print(f"  picture sent -> every tile showing it: median {p50:.1f} ms, p99 {p99:.1f} ms, max {lat[-1]:.1f} ms")
print(f"  beyond the playout latency ({playout:.0f} ms): median {(p50 - playout) / interval:.2f}, "
      f"p99 {(p99 - playout) / interval:.2f}, max {(lat[-1] - playout) / interval:.2f} frame intervals "
      f"of {interval:.1f} ms (bound: 2)")
rec("live_latency_p50_ms", round(p50, 1))
rec("live_latency_p99_intervals_beyond_playout", round((p99 - playout) / interval, 2))
PY
