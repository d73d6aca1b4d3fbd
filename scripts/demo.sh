#!/usr/bin/env bash
# The README's demo command: a 5x3 wall streamed over loopback on this machine.
#   scripts/demo.sh [SECONDS]     (default 10; Ctrl-C stops earlier)
# Installs dependencies, builds, makes the synthetic demo movie once
# (movies/demo-5x3, reused later), and streams it with one MPI rank per tile,
# paced at the wall's 30 fps, then prints the final report.
#
# Not yet: the receivers that show the wall (SDL2 + OpenGL mosaic) do not
# exist yet; until they do, the 15 streams go to a counting UDP sink on
# loopback, which prints what it received.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}

scripts/install-deps.sh
scripts/build.sh build >/dev/null

movie=movies/demo-5x3
if [ ! -f "$movie/movie.toml" ]; then
  build/tools/wallcut --config configs/demo-5x3.toml --synthetic --frames 300 --out "$movie"
else
  echo "demo: reusing $movie" >&2
fi

build/bench/udp_sink --port 50000 --count 15 --seconds $((seconds + 30)) > build/demo-sink.txt &
sink=$!
trap 'kill $sink 2>/dev/null || true' EXIT
sleep 0.5
echo "demo: streaming the 5x3 wall for $seconds s (Ctrl-C stops)" >&2
scripts/streamer.sh --config configs/demo-5x3.toml --movie "$movie" --duration "$seconds" || true
kill -TERM $sink 2>/dev/null || true
wait $sink 2>/dev/null || true
echo "demo: not yet: no receiver shows the wall (SDL2/OpenGL receivers come next); the streams" >&2
echo "demo: went to a UDP sink on loopback, which received $(sed -n 's/udp_sink: total \([0-9]*\) bytes/\1/p' build/demo-sink.txt) bytes." >&2
