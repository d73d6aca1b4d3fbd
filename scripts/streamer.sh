#!/usr/bin/env bash
# Runs the streamer under mpirun so that Ctrl-C or SIGTERM stops every rank
# at once with the final report. (Given to mpirun itself, Ctrl-C kills the
# ranks without a report, and SIGTERM reaches them only after Open MPI's
# 2-second kill sequence; this script signals the ranks directly.)
#
#   scripts/streamer.sh [-n RANKS] STREAMER-FLAGS...   (default: -n 1, tile ranks spawned)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
streamer=${STREAMER:-$here/build/streamer/streamer}
ranks=1
if [ "${1:-}" = "-n" ]; then ranks=$2; shift 2; fi
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

# A session of its own: Ctrl-C reaches this script, not mpirun.
setsid mpirun -n "$ranks" --oversubscribe "$streamer" "$@" &
mpirun_pid=$!
stop() { pkill -TERM -P "$mpirun_pid" 2>/dev/null; }
trap stop INT TERM
rc=0
while kill -0 "$mpirun_pid" 2>/dev/null; do
  wait "$mpirun_pid"
  rc=$?
done
exit "$rc"
