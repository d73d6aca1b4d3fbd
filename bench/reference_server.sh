#!/usr/bin/env bash
# The reference wall's measurements for a bigger machine lent for minutes
# (docs/scaling.md): run from a checkout there after `bench/portable.sh DIR`
# made here and carried along. Each run is bounded; each leaves its log and
# JSON in $RESULTS_DIR/NAME.tgz and its summary lines in
# $RESULTS_DIR/all.log, so what finished comes back even if a later run is
# cut off.
#
#   bench/reference_server.sh DIR RESULTS_DIR [RUN...]
#
# RUN is NAME:RANKS:FPS:SECS[:disk][:lost=N|refused=N][:latency=MS|auto]
# (RANKS 1: spawned, one rank per tile; N per mille of the tile datagrams
# dropped on lo's ingress, or refused by the sender's kernel in nft's
# output hook; a playout latency, [sync] latency_ms).
# Default: the wall at 22 fps with a rank per tile and with one rank per
# NIC (5), from disk at 8 fps, and at 6 fps for the CPU ratio: about 6
# minutes on 16 cores (each run takes its seconds plus 25-55 s). The
# faults of the path (issue 34): n16-22fps-refused:16:22:60::refused=10
# n16-22fps-lost:16:22:60::lost=10. A NAME starting with "switch" runs
# bench/switch_bench.sh instead (20 loads at FPS, from memory, or from disk
# with SOURCE disk; RANKS and SECS unused): switch-22fps:1:22:0 (issue 36).
# A NAME starting with "path" runs bench/path_bench.sh (the testbed's 2x2
# wall over the delay line at FPS, rtt 20 ms and 1% loss: what the line
# sustains there): path-22fps:1:22:20. Issue 37's, in the defaults:
# n16-60fps-lost-auto:16:60:30::lost=10:latency=auto, path-22fps:1:22:20.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 PORTABLE_DIR RESULTS_DIR [NAME:RANKS:FPS:SECS[:disk]...]" >&2; exit 2; }
cd "$(dirname "$0")/.."
portable=$1 results=$2
shift 2
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(n16-22fps:16:22:60 n5-22fps:5:22:60 disk-8fps:16:8:40:disk n16-6fps:16:6:60
                                switch-22fps:1:22:0 n16-60fps-lost-auto:16:60:30::lost=10:latency=auto
                                path-22fps:1:22:20)
mkdir -p "$results"
log=$results/all.log
# shellcheck source=/dev/null
source "$portable/env.sh"
{
  date -u
  echo "cores $(nproc), $(grep -m1 'model name' /proc/cpuinfo)"
  uname -r
  free -g | sed -n 2p
  df -hT . | tail -1
  command -v perf >/dev/null && echo "perf: yes" || echo "perf: no"
} >>"$log" 2>&1
for run in "${runs[@]}"; do
  IFS=: read -r name ranks fps wsecs source fault sync <<<"$run"
  dir=/tmp/tsbench-$name
  rm -rf "$dir"
  echo "== $name: ranks $ranks, $fps fps, $wsecs s, ${source:-memory} ${fault:-} ($(date -u +%T))" >>"$log"
  extra=()
  case "${fault:-}" in
    lost=*) extra+=(WALL_DROP="${fault#lost=}") ;;
    refused=*) extra+=(WALL_DROP="${fault#refused=}" WALL_DROP_HOOK=output) ;;
  esac
  [ "$ranks" = 1 ] || extra+=(WALL_RANKS="$ranks")
  case "${sync:-}" in
    latency=auto) extra+=(WALL_SYNC='latency_ms = "auto"') ;;
    latency=*) extra+=(WALL_SYNC="latency_ms = ${sync#latency=}") ;;
  esac
  [ "${source:-}" = disk ] && extra+=(WALL_SOURCE=disk WALL_MOVIE="$PWD/movies/reference")
  if [[ $name == path* ]]; then
    mkdir -p "$dir"
    env OUT="$dir" PATH_FPS="$fps" PATH_SECS="$wsecs" PATH_RTTS=20 PATH_LOSSES=1 \
      timeout --kill-after 10 $((wsecs + 120)) bench/path_bench.sh >>"$log" 2>&1 || echo "$name: rc $?" >>"$log"
  elif [[ $name == switch* ]]; then
    mkdir -p "$dir"
    env OUT="$dir" SWITCH_FPS="$fps" SWITCH_SOURCE="${source:-memory}" \
      timeout --kill-after 10 300 bench/switch_bench.sh >>"$log" 2>&1 || echo "$name: rc $?" >>"$log"
  else
    env OUT="$dir" WALL_FPS="$fps" WALL_SECS="$wsecs" "${extra[@]}" \
      timeout --kill-after 10 $((wsecs + 120)) bench/receiver_bench.sh wall >>"$log" 2>&1 ||
      echo "$name: rc $?" >>"$log"
  fi
  pkill -9 -f build/receiver/receiver 2>/dev/null
  pkill -9 -x mpirun 2>/dev/null
  pkill -9 -x streamer 2>/dev/null
  # The logs and reports, not the movies (a switch library is 1.4 GB).
  tar -czf "$results/$name.tgz" --exclude="*.rgb" -C /tmp "tsbench-$name" 2>>"$log"
done
echo "done $(date -u +%T)" >>"$log"
