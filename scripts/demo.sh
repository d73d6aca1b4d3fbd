#!/usr/bin/env bash
# The README's demo command: a 5x3 wall streamed over loopback on this machine.
#   scripts/demo.sh [SECONDS]     (default 10; Ctrl-C stops earlier)
# Installs dependencies, builds, makes the synthetic demo movie once
# (movies/demo-5x3, reused later), starts the receiver for the wall's tiles
# and streams the movie with one MPI rank per tile, paced at the wall's
# 30 fps; then prints both final reports (per tile: rate, frames, loss).
#
# Not yet: the receiver is headless (statistics only); the SDL2 + OpenGL
# mosaic window and swap sync come with the receiver's rendering.
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

build/receiver/receiver --config configs/demo-5x3.toml --headless -q > build/demo-receiver.txt 2>&1 &
receiver=$!
trap 'kill $receiver 2>/dev/null || true' EXIT
sleep 0.5
echo "demo: streaming the 5x3 wall for $seconds s (Ctrl-C stops)" >&2
scripts/streamer.sh --config configs/demo-5x3.toml --movie "$movie" --duration "$seconds" || true
sleep 0.3
kill -TERM $receiver 2>/dev/null || true
wait $receiver 2>/dev/null || true
echo
cat build/demo-receiver.txt
echo "demo: not yet: the receiver is headless (no window); rendering and swap sync come next." >&2
