#!/usr/bin/env bash
# Runs the streamer under mpirun so that Ctrl-C or SIGTERM stops every rank
# at once with the final report, and a rank that dies is named by its tile.
#
#   scripts/streamer.sh [-n RANKS] STREAMER-FLAGS...   (default: -n 1, tile ranks spawned)
#
# A wall over several servers ([[server]] in --config) runs one rank per
# tile, placed by the hostfile `streamer --print-hostfile` writes, with MPI
# kept to the config's [mpi] network (`--print-mpirun-options`); -n is then
# ignored. Run it on the first server. MPIRUN_FLAGS adds mpirun options
# (the testbed's rsh agent: MPIRUN_FLAGS="--mca plm_rsh_agent testbed/testbed-rsh").
# STREAMER_STUCK_S (default 15): how long after a rank vanished a job whose
# mpirun is still there is ended (below).
#
# Why a wrapper: given to mpirun itself, Ctrl-C kills the ranks without a
# report (Open MPI 4.1 cannot forward SIGINT) and SIGTERM reaches them only
# after Open MPI's 2-second kill sequence; this script signals the ranks
# directly. A static job (-n tiles+1) runs with --enable-recovery, so that
# when a rank dies the coordinator names the tile, stops the others and
# prints the report; a spawned job is ended by mpirun, and this script then
# names the tile of the rank mpirun reports.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
# Installed (tilestream-launch), the installed streamer beside it; else the build's.
if [ -x "$(dirname "$0")/tilestream-streamer" ]; then
  streamer=${STREAMER:-$(dirname "$0")/tilestream-streamer}
else
  streamer=${STREAMER:-$here/build/streamer/streamer}
fi
ranks=1
if [ "${1:-}" = "-n" ]; then ranks=$2; shift 2; fi
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
log=$(mktemp)
hostfile=$(mktemp)
trap 'rm -f "$log" "$hostfile"' EXIT

# A wall over several servers: its hostfile, its rank count, its MPI network.
placement=()
config="" previous=""
for a in "$@"; do
  if [ "$previous" = "--config" ]; then config=$a; fi
  case $a in --config=*) config=${a#--config=} ;; esac
  previous=$a
done
if [ -n "$config" ] && "$streamer" --config "$config" --print-hostfile > "$hostfile" 2>/dev/null &&
  [ "$(grep -c ' slots=' "$hostfile")" -gt 1 ]; then
  ranks=0
  while read -r _ slots; do ranks=$((ranks + ${slots#slots=})); done < <(grep ' slots=' "$hostfile")
  mapfile -t mpi_network < <("$streamer" --config "$config" --print-mpirun-options)
  placement=(--hostfile "$hostfile" --map-by slot "${mpi_network[@]}")
fi
read -r -a extra <<< "${MPIRUN_FLAGS:-}"
# Not over several servers: there Open MPI 4.1's recovery hangs the job once
# its ranks exit non-zero (a flag or config error; seen on the testbed), so
# a dead rank ends the job through mpirun at once (docs/decisions.md).
recovery=()
if [ "$ranks" -gt 1 ] && [ ${#placement[@]} -eq 0 ]; then recovery=(--enable-recovery); fi

# A session of its own: Ctrl-C reaches this script, not mpirun.
# Open MPI settings, chosen (docs/decisions.md): --bind-to none, since each
# tile rank places itself on its NIC's NUMA node; mpi_yield_when_idle, since
# ranks may outnumber cores and a rank waiting in MPI must not spin a core
# away from a pacing loop.
mca=(--bind-to none --mca mpi_yield_when_idle 1)
setsid mpirun -n "$ranks" --oversubscribe "${mca[@]}" "${placement[@]}" "${extra[@]}" "${recovery[@]}" "$streamer" "$@" > >(trap "" INT TERM; exec tee "$log") 2>&1 &
mpirun_pid=$!
# Kills every live process of mpirun's session (zombies are dead already;
# this machine's init may never reap them); false if there was none.
kill_session() { pkill -KILL -s "$mpirun_pid" -r R,S,D,T,t; }
stop() { pkill -TERM -P "$mpirun_pid" 2>/dev/null; }
trap stop INT TERM
# The wall rank of mpirun's child PID into rank_of, from its environment: a
# spawned job's coordinator is alone in its world and its tile ranks count
# from 0; "-" for a process that is no rank (the testbed's rsh agent).
declare -A rank_of=()
spawned=0
note_rank() {
  local var rank="-" size=0
  while IFS= read -r -d '' var; do
    case $var in
      OMPI_COMM_WORLD_RANK=*) rank=${var#*=} ;;
      OMPI_COMM_WORLD_SIZE=*) size=${var#*=} ;;
    esac
  done < "/proc/$1/environ" 2>/dev/null
  if [ "$rank" != "-" ] && [ "$size" -eq 1 ]; then
    spawned=1
  elif [ "$rank" != "-" ] && [ "$spawned" -eq 1 ]; then
    rank=$((rank + 1))
  fi
  rank_of[$1]=$rank
}
# A rank gone while mpirun stays: recorded once, with when.
gone="" gone_at=0
watch_ranks() {
  local kids=() k state
  # (no newline at the end of that file: read says EOF, the array is filled)
  read -r -a kids 2>/dev/null < "/proc/$mpirun_pid/task/$mpirun_pid/children"
  [ "${#kids[@]}" -gt 0 ] || return 0
  # ("-" again: read between mpirun's fork and the rank's exec)
  for k in "${kids[@]}"; do [ "${rank_of[$k]:--}" != "-" ] || note_rank "$k"; done
  [ "$gone_at" -eq 0 ] || return 0
  for k in "${!rank_of[@]}"; do
    [ "${rank_of[$k]}" != "-" ] || continue
    state=Z  # gone, or a zombie mpirun has not reaped
    read -r _ _ state _ 2>/dev/null < "/proc/$k/stat"
    if [ "$state" = Z ]; then gone=${rank_of[$k]} gone_at=$SECONDS; fi
  done
  if [ "$gone_at" -eq 0 ] && [ "$SECONDS" -ge 10 ]; then never_seen_rank; fi
}
# A static job starts every rank at once, so a rank not seen 10 s in died
# before the first look, and mpirun reaped it at once (seen in CI: the
# coordinator killed within a second of the plan, its tile ranks then
# silent for a minute): gone since then. Once all are seen, never again.
all_seen=1
[ ${#recovery[@]} -eq 0 ] || all_seen=0
never_seen_rank() {
  [ "$all_seen" -eq 0 ] || return 0
  local r k
  for ((r = 0; r < ranks; r++)); do
    for k in "${!rank_of[@]}"; do [ "${rank_of[$k]}" != "$r" ] || continue 2; done
    gone=$r gone_at=$SECONDS
    return 0
  done
  all_seen=1
}
# Under --enable-recovery mpirun does not always exit after MPI_Abort (seen
# under load): 3 s after the abort, end its session. Nor always when a rank
# dies: once seen in CI, not even the other ranks' last words came through.
# So STREAMER_STUCK_S (15) s after a rank vanished with mpirun still there, end its session
# too (ranks that end normally leave MPI_Finalize together). Its whole
# session, not its process group: Open MPI gives each rank a group of its
# own.
# The wait forks nothing per turn: `read -t` on a pipe nobody writes to is a
# sleep inside bash, and the log and mpirun's children are looked at once a
# second (a `sleep` and a `grep` five times a second cost this VM about a
# tenth of a core, which the wall benchmark counted as the wall's; the
# children are read from /proc, and each one's environment once).
exec {nap}<> <(:)
aborted_at=0 turns=0 stuck=""
stuck_s=${STREAMER_STUCK_S:-15}
[[ $stuck_s =~ ^[1-9][0-9]{0,3}$ ]] || { echo "streamer.sh: STREAMER_STUCK_S must be 1 to 9999 seconds, not '$stuck_s'" >&2; exit 2; }
while kill -0 "$mpirun_pid" 2>/dev/null; do
  read -r -t 0.2 -u "$nap" _ || true
  turns=$((turns + 1))
  [ $((turns % 5)) -eq 0 ] || continue
  watch_ranks
  if [ "$aborted_at" -eq 0 ] && grep -q "MPI_ABORT was invoked" "$log"; then
    aborted_at=$SECONDS
  fi
  if [ "$aborted_at" -gt 0 ] && [ $((SECONDS - aborted_at)) -ge 3 ]; then
    kill_session
  elif [ "$gone_at" -gt 0 ] && [ $((SECONDS - gone_at)) -ge "$stuck_s" ]; then
    stuck=$gone
    kill_session
  fi
done
wait "$mpirun_pid"
rc=$?
# Nothing of the job outlives this script (seen in CI: four live processes
# of the job 200 ms after it exited). Open MPI kills the ranks when mpirun
# dies (stopped ones too: a parent-death signal), but a killed process
# lives until its exit is done, and what a rank started is no child of
# mpirun. So whatever is left in the session is killed and waited for, 5 s
# at most; normally nothing is, and one pkill says so.
for ((turn = 0; turn < 25; turn++)); do
  kill_session || break
  read -r -t 0.2 -u "$nap" _ || true
done
sleep 0.1  # let tee finish
# mpirun names a dead process by its rank in its own job: for spawned tile
# ranks (a "Child job") that is the tile index, one below the wall rank.
dead=$(sed -n 's/.*process rank \([0-9][0-9]*\) .*exited on signal.*/\1/p' "$log" | head -1)
if [ -n "$dead" ] && grep -q "^Child job" "$log"; then dead=$((dead + 1)); fi
if [ -z "$dead" ] && [ -n "$stuck" ]; then
  echo "streamer.sh: mpirun did not end the job $stuck_s s after rank $stuck died; ended it" >&2
  dead=$stuck
fi
if [ -n "$dead" ]; then
  tile=$(sed -n "s/^  tile \([^ ]*\) *rank $dead .*/\1/p" "$log" | paste -sd, | sed 's/,/, /g')
  # On a wall of several servers the plan line ends with the rank's host.
  host=$(sed -n "s/^  tile [^ ]* *rank $dead .*  host \([^ ]*\)$/, on server \1/p" "$log" | head -1)
  if [ "$dead" -eq 0 ]; then
    echo "streamer.sh: the coordinator (rank 0) died; the job was ended" >&2
  else
    case $tile in *,*) what=tiles ;; *) what=tile ;; esac
    echo "streamer.sh: $what ${tile:-?} (rank $dead$host) died; the job was ended" >&2
  fi
  [ "$rc" -ne 0 ] || rc=1
fi
# Under --enable-recovery mpirun exits 0 even when the coordinator ended the
# job over a dead tile, or the tiles ended it over a dead coordinator.
if grep -q "stopped responding; ending the job\|no word from the coordinator; ending the job" "$log" &&
  [ "$rc" -eq 0 ]; then
  rc=1
fi
exit "$rc"
