#!/usr/bin/env bash
# Our HTTP request parser against Boost.Beast's and libevent's evhttp
# (bench/http_parsers.cpp; docs/decisions.md, "HTTP parsing"): installs
# libboost-dev and libevent-dev (not needed by the build otherwise), builds,
# and prints what each says to the malformed cases and its rate.
#   bench/http_parsers.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --parsers
scripts/build.sh >/dev/null
cmake --build build --target http_parsers >/dev/null
build/bench/http_parsers --seconds "${1:-1}"
