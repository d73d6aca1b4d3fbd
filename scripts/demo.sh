#!/usr/bin/env bash
# The README's demo command: a 5x3 wall streamed over loopback on this machine.
#   scripts/demo.sh [SECONDS]     (default 10; Ctrl-C stops earlier)
# Installs dependencies, builds, makes the synthetic demo movie once
# (movies/demo-5x3, reused later), starts the receiver for the wall's tiles
# and streams the movie with one MPI rank per tile, paced at the wall's
# 30 fps; then prints both final reports (per tile: rate, frames, loss).
#
# With a display ($DISPLAY) the receiver shows the wall in a mosaic window
# and saves its last picture to build/demo-mosaic.ppm; without one it runs
# headless. Not yet: swap sync, so tiles may show slightly different frames.
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

view=(--headless)
if [ -n "${DISPLAY:-}" ]; then view=(--mosaic --window 1280x483 --screenshot build/demo-mosaic.ppm); fi
build/receiver/receiver --config configs/demo-5x3.toml "${view[@]}" -q > build/demo-receiver.txt 2>&1 &
receiver=$!
trap 'kill $receiver 2>/dev/null || true' EXIT
sleep 2  # the receiver opens its window and sockets before the first frame
echo "demo: streaming the 5x3 wall for $seconds s (Ctrl-C stops)" >&2
scripts/streamer.sh --config configs/demo-5x3.toml --movie "$movie" --duration "$seconds" || true
sleep 0.3
kill -TERM $receiver 2>/dev/null || true
wait $receiver 2>/dev/null || true
echo
cat build/demo-receiver.txt
if [ -f build/demo-mosaic.ppm ] && command -v pnmtopng >/dev/null; then
  pnmtopng build/demo-mosaic.ppm > build/demo-mosaic.png && echo "demo: the last picture: build/demo-mosaic.png" >&2
fi
echo "demo: while it plays, http://127.0.0.1:7480/ (the web panel) and build/tools/wallctl watch show the wall; receiver --tiles gives a fullscreen window per tile (docs/receiver.md)." >&2
