#!/usr/bin/env bash
# The README's demo command: a 5x3 wall on this machine.
#   scripts/demo.sh [SECONDS]
# Installs dependencies, builds, and makes the synthetic demo movie once
# (movies/demo-5x3, reused later). Streaming it to local receivers needs the
# streamer and receiver, which are not built yet: this script says so.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh build

movie=movies/demo-5x3
if [ ! -f "$movie/movie.toml" ]; then
  build/tools/wallcut --config configs/demo-5x3.toml --synthetic --frames 300 --out "$movie"
else
  echo "demo: reusing $movie" >&2
fi

echo "demo: not yet: the streamer and receiver programs do not exist yet, so the movie in" >&2
echo "demo: $movie cannot be streamed. What exists: the common library, its tests, wallcut." >&2
