#!/usr/bin/env bash
# Receiver and end-to-end benchmarks, each against a reference measured in
# the same run. Loopback only; every run is bounded.
#
#   bench/receiver_bench.sh [receive|wall|loss|path|mosaic|all] (default all)
#
# receive: streamer (memory source, unpaced, MTU 9000, 2560x1600 tiles) to
#          headless receivers, 1 and 4 streams: goodput and loss vs
#          `udpceil tput --tx gso --rx gromm` (receive rate) and vs
#          `iperf3 -u -l 8972 -b 0`.
# wall:    the reference wall, 5x3 of 2560x1600 paced at 22 fps (32.5 Gbit/s)
#          to 8 headless receiver nodes with swap sync, $WALL_SECS (60) s:
#          loss, the wall's ticks presented and skipped (the swap sync's,
#          not summed over tiles), skew; over the steady middle of the run
#          only, CPU-seconds per GB for the machine (/proc/stat) and for its
#          processes (their own CPU time) vs udpceil's (measured before the
#          wall and after it), cores and CPU-s/GB per side (the streamer vs
#          udpceil's sender, the receivers vs its receiver at full rate and
#          at the wall's rate, `--cap`, measured after the wall), and per tile
#          frame the wake-ups (context switches) and system calls (perf's
#          raw_syscalls tracepoint, as root) of senders and receivers.
#          $WALL_RANKS: the streamer's MPI ranks (default: 1, spawning one
#          rank per tile; 2 is one rank streaming all 15 tiles).
#          $WALL_SOURCE=disk: from a synthetic tile store ($WALL_MOVIE, made
#          with wallcut if missing), with 15 concurrent `udpceil disk`
#          readers of its files as the disk's reference in the same run.
#          $WALL_DROP: per mille of the tile streams' packets nftables drops
#          on the loopback interface (GSO super-packets whole, as a NIC ring
#          or switch would lose them); retransmission recovers them. With
#          WALL_DROP_HOOK=output the sender's own kernel refuses them
#          instead (nft's output hook: EPERM, as a local firewall does).
#          $WALL_SYNC: lines of a [sync] table to add (latency_ms = "auto").
# loss:    the wall ($WALL_FPS, default 6: what this 2-core VM presents
#          whole) five times in one run: loss-free, 0.1% and 1% dropped on
#          the way, 0.1% and 1% of the sends refused: ticks skipped (target
#          0), the bytes sent again, and CPU-s/GB against the loss-free
#          run. $LOSS_RATES: the per-mille rates after the loss-free run
#          (default "1 10"). Needs root and nft.
# path:    the wall over a long path on the testbed: bench/path_bench.sh.
# mosaic:  the demo wall (configs/demo-5x3.toml) in one mosaic window under
#          Xvfb, $SECS s: sustained window updates per second vs the wall's fps.
# Results: one line per measurement on stdout, JSON in $OUT (build/bench-results).
set -euo pipefail
source "$(dirname "$0")/common.sh"
receiver=build/receiver/receiver


# Samples, SECS apart, the machine's CPU-seconds and the clock, and for the
# two groups of processes (RANKS, then after "--" RECEIVERS; all their
# threads) CPU-seconds, wake-ups (voluntary context switches) and
# preemptions (involuntary ones). One process samples both ends, so a slow
# start of it under load neither stretches the window nor misses a rank.
# Prints: m0 m1 t0 t1, then per group and end: cpu woken preempted.
steady_usage() {
  python3 - "$(getconf CLK_TCK)" "$@" <<'PY'
import glob, sys, time
hz, secs = float(sys.argv[1]), float(sys.argv[2])
cut = sys.argv.index("--")
groups = [sys.argv[3:cut], sys.argv[cut + 1:]]
def machine():
    f = open("/proc/stat").readline().split()
    return sum(int(f[i]) for i in (1, 2, 3, 6, 7)) / 100.0  # udpceil's sum: steal is not ours
def usage(pids):
    per = {}
    for pid in pids:
        cpu, woken, preempted = 0.0, 0, 0
        for t in glob.glob("/proc/%s/task/*" % pid):
            try:
                f = open(t + "/stat").read().rsplit(")", 1)[1].split()
                cpu += (int(f[11]) + int(f[12])) / hz
                for line in open(t + "/status"):
                    if line.startswith("voluntary_ctxt_switches"):
                        woken += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        preempted += int(line.split()[1])
            except OSError:
                pass
        if cpu > 0:
            per[pid] = [cpu, woken, preempted]
    return per
# A process gone by the second sample (the window ran past its end: the
# sampler started late on a saturated machine) counts in neither sample.
def both(a, b):
    gone = set(a) - set(b)
    if gone:
        print("steady_usage: processes %s ended inside the window; left out" % " ".join(sorted(gone)), file=sys.stderr)
    keep = set(a) & set(b)
    return [[sum(a[p][i] for p in keep) for i in range(3)], [sum(b[p][i] for p in keep) for i in range(3)]]
m0, t0, u0 = machine(), time.time(), [usage(g) for g in groups]
time.sleep(secs)
m1, t1, u1 = machine(), time.time(), [usage(g) for g in groups]
(s0, s1), (r0, r1) = both(u0[0], u1[0]), both(u0[1], u1[1])
print(m0, m1, t0, t1, *s0, *s1, *r0, *r1)
PY
}

bench_receive() {
  local ref; ref=$("$udpceil" tput --tx gso --rx gromm --size 8972 --secs "$secs" | grep RESULT)
  local ceil; ceil=$(field "$ref" rx_Gbps)
  iperf3 -s -1 -p 5299 >/dev/null 2>&1 &
  sleep 0.5
  local ip; ip=$(iperf3 -c 127.0.0.1 -p 5299 -u -l 8972 -b 0 -t "$secs" --json | \
    python3 -c "import json,sys; d=json.load(sys.stdin)['end']['sum']; print(d['bits_per_second']*(1-d['lost_percent']/100)/1e9)")
  wait || true
  printf "reference: udpceil gso -> gromm rx %.2f Gbit/s; iperf3 -u -l 8972 -b 0 goodput %.2f Gbit/s\n" "$ceil" "$ip"
  record receive.ceiling "$ceil"
  record receive.iperf3 "$ip"
  for layout in "1 1" "2 2"; do
    set -- $layout
    local n=$(($1 * $2))
    local cfg="$out/receive-$n.toml"
    wall_config "$1" "$2" "$cfg"
    "$receiver" --config "$cfg" --headless --no-sync -q --duration $((secs + 8)) --json "$out/receive-$n-rx.json" \
      >"$out/receive-$n-rx.log" 2>&1 &
    local rx=$!
    sleep 0.5
    scripts/streamer.sh --config "$cfg" --bench --source memory --pacing off --duration "$secs" -q \
      --json "$out/receive-$n-tx.json" >"$out/receive-$n-tx.log" 2>&1
    kill -TERM "$rx"; wait "$rx" || true
    python3 - "$out/receive-$n-tx.json" "$out/receive-$n-rx.json" "$ceil" "$ip" "$n" <<'PY'
import json, os, sys
exec(os.environ["PYREC"])
tx, rx = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ceil, ip, n = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
got = sum(t["bytes"] for t in rx["tiles"]) * 8 / tx["duration_s"] / 1e9
lost = sum(t["lost"] for t in rx["tiles"])
# What a receiver over two frames behind threw away unread (not counted as lost: the jump past it starts afresh).
thrown = sum(t.get("discarded_bytes", 0) for t in rx["tiles"]) * 8 / tx["duration_s"] / 1e9
sent = tx["aggregate"]["mbps"] / 1000
print("receive %2d streams: %.2f Gbit/s received of %.2f sent, %d packets lost, %.2f Gbit/s thrown away catching "
      "up; = %.2f x udpceil rx (target >= %.2f), %.1f x iperf3 (target >= 2.5)"
      % (n, got, sent, lost, thrown, got / ceil, 0.90 if n == 1 else 0.85, got / ip))
rec("receive.%d" % n, got); rec("receive.%d.lost" % n, lost); rec("receive.%d.thrown" % n, thrown)
rec("receive.%d.placed" % n, sum(t.get("placed", 0) for t in rx["tiles"]) / max(1, sum(t["packets"] for t in rx["tiles"])))
PY
  done
}

bench_wall() {
  local wsecs=${WALL_SECS:-60} wfps=${WALL_FPS:-22} cfg=$out/wall.toml
  # The reference wall's 8 display nodes (configs/sara-5x3.toml), all on loopback.
  reference_wall_config "$wfps" "$cfg" "$(printf '[stream]\nmtu = 9000\nport_base = 50000\n%s' "${WALL_STREAM:-}")"
  # $WALL_SYNC: a [sync] table to add, e.g. a playout latency (issue 37).
  if [ -n "${WALL_SYNC:-}" ]; then printf '[sync]\n%s\n' "$WALL_SYNC" >>"$cfg"; fi
  # The raw path's cost on this machine now: the reference for CPU-s/GB,
  # the machine's (/proc/stat) and its threads' own, measured before the
  # wall and again after it (one measurement moved +-15% between runs).
  local ref; ref=$("$udpceil" tput --tx gso --rx gromm --size 8972 --secs "$secs" | grep RESULT)
  # From disk: a synthetic store of 30 frames (5.5 GB, made once), and the
  # disk's reference in the same run: 15 concurrent O_DIRECT readers
  # (`udpceil disk FILE 12 1`, one per tile file), total bytes over their
  # wall time.
  local source=(--source memory) disk_ref=0
  if [ "${WALL_SOURCE:-memory}" = disk ]; then
    local movie=${WALL_MOVIE:-$out/wall-movie}
    [ -f "$movie/movie.toml" ] || build/tools/wallcut --config "$cfg" --synthetic --frames 30 -q --force --out "$movie"
    local t0 t1 bytes=0
    t0=$(date +%s.%N)
    for f in "$movie"/tile_*.rgb; do "$udpceil" disk "$f" 12 1 >"$f.ref" & done
    wait
    t1=$(date +%s.%N)
    for f in "$movie"/tile_*.rgb; do bytes=$((bytes + $(field "$(cat "$f.ref")" bytes))); rm -f "$f.ref"; done
    disk_ref=$(python3 -c "print($bytes / ($t1 - $t0) / 1e9)")
    source=(--movie "$movie")
  fi
  nft delete table netdev tsbench 2>/dev/null || true
  nft delete table inet tsbench 2>/dev/null || true
  if [ -n "${WALL_DROP:-}" ] && [ "${WALL_DROP_HOOK:-ingress}" = output ]; then  # the sender's kernel refuses: EPERM
    nft "add table inet tsbench; add chain inet tsbench refuse { type filter hook output priority 0; }; add rule inet tsbench refuse udp dport 50000-50099 numgen random mod 1000 < $WALL_DROP counter drop"
  elif [ -n "${WALL_DROP:-}" ]; then
    nft "add table netdev tsbench; add chain netdev tsbench loss { type filter hook ingress device \"lo\" priority 0; }; add rule netdev tsbench loss udp dport 50000-50099 numgen random mod 1000 < $WALL_DROP counter drop"
  fi
  local pids=()
  for i in 1 2 3 4 5 6 7 8; do
    "$receiver" --config "$cfg" --node "$(printf tile%02d "$i")" --headless -q --duration $((wsecs + 90)) ${RX_FLAGS:-} \
      --json "$out/wall-rx$i.json" >"$out/wall-rx$i.log" 2>&1 &
    pids+=($!)
  done
  sleep 1
  rm -f "$out/wall-tx.json"
  scripts/streamer.sh ${WALL_RANKS:+-n "$WALL_RANKS"} --config "$cfg" "${source[@]}" --duration "$wsecs" -q --json "$out/wall-tx.json" \
    >"$out/wall-tx.log" 2>&1 &
  local tx=$!
  # CPU and wake-ups of the steady middle only: once every tile streams
  # (its plan line printed; start-up takes seconds under load), from a
  # quarter in (at most 10 s) to 5 s before the end.
  for _ in $(seq 600); do
    [ "$(grep -c ' -> ' "$out/wall-tx.log" 2>/dev/null)" -ge 15 ] && break
    sleep 0.1
  done
  local warm=$((wsecs / 4 < 10 ? wsecs / 4 : 10))
  sleep "$warm"
  local ranks; ranks=$(pgrep -x streamer | tr '\n' ' ')
  # Every system call of each side over the same window, where perf can
  # count them (root): the tracepoint, not our own counters.
  local window=$((wsecs - warm - 5)) counting=()
  rm -f "$out"/syscalls-*.csv
  if [ "$(id -u)" -eq 0 ] && command -v perf >/dev/null; then
    perf stat -e raw_syscalls:sys_enter -x, -o "$out/syscalls-tx.csv" -p "$(tr ' ' , <<<"${ranks% }")" -- sleep "$window" 2>/dev/null &
    counting+=($!)
    perf stat -e raw_syscalls:sys_enter -x, -o "$out/syscalls-rx.csv" -p "$(IFS=,; echo "${pids[*]}")" -- sleep "$window" 2>/dev/null &
    counting+=($!)
  fi
  local usage; usage=$(steady_usage "$window" $ranks -- "${pids[@]}")
  # Not a bare `wait` when perf is missing: that would wait for the receivers too.
  [ ${#counting[@]} -eq 0 ] || wait "${counting[@]}" 2>/dev/null || true
  wait "$tx" || echo "wall at $wfps fps: the streamer ended early: $(tail -1 "$out/wall-tx.log")"
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait "${pids[@]}" || true
  nft delete table netdev tsbench 2>/dev/null || true
  nft delete table inet tsbench 2>/dev/null || true
  [ -f "$out/wall-tx.json" ] || return 1
  local after; after=$("$udpceil" tput --tx gso --rx gromm --size 8972 --secs "$secs" | grep RESULT)
  # The raw path's receiver at the wall's own rate (--cap paces udpceil's
  # send calls; its sender then busy-waits, so only its receiver is a
  # reference): at full rate a receiver drains up to 64 messages a wake-up,
  # at a paced wall's rate it cannot.
  local rate paced
  rate=$(python3 -c "import json; print(json.load(open('$out/wall-tx.json'))['aggregate']['mbps'] / 1000)")
  paced=$("$udpceil" tput --tx gso --rx gromm --size 8972 --secs "$secs" --cap "$rate" | grep RESULT)
  local ref_cpu ref_tx ref_rx
  ref_cpu=$(python3 -c "print(($(field "$ref" sys_cpu_s/GB_rx) + $(field "$after" sys_cpu_s/GB_rx)) / 2)")
  ref_tx=$(python3 -c "print(($(field "$ref" tx_cpu_s/GB) + $(field "$after" tx_cpu_s/GB)) / 2)")
  ref_rx=$(python3 -c "print(($(field "$ref" rx_cpu_s/GB) + $(field "$after" rx_cpu_s/GB)) / 2)")
  python3 - "$out" "$ref_cpu" $usage "$disk_ref" "${WALL_LABEL:-wall}" "$ref_tx" "$ref_rx" \
    "$(field "$paced" rx_cpu_s/GB)" "$(field "$paced" rx_Gbps)" <<'PY'
import json, os, sys, glob
exec(os.environ["PYREC"])
out, label = sys.argv[1], sys.argv[20]
ref_tx, ref_rx = float(sys.argv[21]), float(sys.argv[22])
paced_rx, paced_rate = (float(a or 0) for a in sys.argv[23:25])  # 0: the capped udpceil run failed
ref_proc = ref_tx + ref_rx
ref_cpu, m0, m1, t0, t1, s0c, s0w, s0p, s1c, s1w, s1p, r0c, r0w, r0p, r1c, r1w, r1p = map(float, sys.argv[2:19])
tx = json.load(open(out + "/wall-tx.json"))
rx = [json.load(open(f)) for f in sorted(glob.glob(out + "/wall-rx*.json"))]
tiles = [t for r in rx for t in r["tiles"]]
got = sum(t["bytes"] for t in tiles)
lost = sum(t["lost"] for t in tiles)
incomplete = sum(t["frames_incomplete"] for t in tiles)
s = tx["sync"]
fps, n = tx["fps"], len(tiles)
disk_ref = float(sys.argv[19])
if disk_ref > 0:
    disk = tx["aggregate"]["disk_mbytes_per_s"] / 1e3
    print("wall from disk: read %.2f GB/s (the wall needs %.2f) = %.2f x 15 concurrent udpceil disk readers' %.2f GB/s"
          % (disk, n * fps * 2560 * 1600 * 3 / 1e9, disk / disk_ref, disk_ref))
    rec("wall.%g.disk_gbytes_per_s" % fps, disk)
    rec("wall.%g.disk_vs_udpceil" % fps, disk / disk_ref)
print("wall 5x3 of 2560x1600 at %g fps," % fps + " %d tiles on %d receiver nodes, %.0f s: sent %.2f Gbit/s, received %.2f Gbit/s"
      % (n, len(rx), tx["duration_s"], tx["aggregate"]["mbps"] / 1000, got * 8 / tx["duration_s"] / 1e9))
# Wall-level ticks: the swap sync's, one per tick (a tick any tile missed is skipped once),
# and those the coordinator dropped on every tile because the ranks fell behind (shed).
shed = tx.get("ticks", {}).get("shed", 0)
ticks = s["presented"] + s["skipped"] + s["partial"] + shed
print("wall: lost %d packets, %d incomplete tile frames; ticks: %d presented, %d skipped, %d partial, %d shed "
      "(dropped on every tile) of %d (target: 0 not presented); tile frames the senders skipped: %d (ticks their "
      "ranks, waiting, saw over a quarter interval late: %d); skew mean %.3f p99 %.3f max %.3f ms"
      % (lost, incomplete, s["presented"], s["skipped"], s["partial"], shed, ticks, tx["aggregate"]["skipped_ticks"],
         sum(x.get("ticks_seen_late", 0) for x in tx["streams"]), s["skew_mean_ms"], s["skew_p99_ms"],
         s["skew_max_ms"]))
if "ticks" in tx:
    k = tx["ticks"]
    clock = ("SCHED_FIFO, %d windows of 100 ms over its 5-ms budget" % k.get("windows_over_budget", 0)
             if k.get("real_time") else "normal priority")
    print("wall: the coordinator sent %d of %d ticks over a quarter interval late (latest %.2f ms after due; "
          "longest broadcast %.2f ms; clock at %s)"
          % (k["sent_late"], k["sent"], k["max_late_ms"], k["max_broadcast_ms"], clock))
st = tx["streams"]
st_bytes = max(1, sum(x["bytes"] for x in st))
again = sum(x.get("retransmitted_bytes", 0) for x in st)
print("wall: retransmission: %d NACKs, %.3f%% of the bytes sent again (%d packets; %d refused over the cap); receivers "
      "recovered %d, %d unrecoverable, %d frames repaired"
      % (sum(x.get("nacks", 0) for x in st), 100.0 * again / st_bytes, sum(x.get("retransmitted", 0) for x in st),
         sum(x.get("refused_cap", 0) for x in st), sum(t.get("recovered", 0) for t in tiles),
         sum(t.get("unrecoverable", 0) for t in tiles), sum(t.get("frames_repaired", 0) for t in tiles)))
refused = {}
for x in st:
    for e, n in x.get("refusals", {}).items():
        refused[e] = refused.get(e, 0) + n
print("wall: sends the kernel refused: %s; %d more refused inside a batch and sent again alone"
      % (", ".join("%s %d" % kv for kv in sorted(refused.items())) or "none",
         sum(x.get("refused_resent", 0) for x in st)))
print("wall: receivers over two frames behind caught up %d times, throwing away %.1f MB unread"
      % (sum(t.get("catch_ups", 0) for t in tiles), sum(t.get("discarded_bytes", 0) for t in tiles) / 1e6))
f = "%s.%g." % (label, fps)
rec(f + "resent_share", again / st_bytes)
for k, v in (("sent", tx["aggregate"]["mbps"] / 1000), ("received", got * 8 / tx["duration_s"] / 1e9), ("lost", lost),
             ("incomplete", incomplete), ("skipped", s["skipped"] + s["partial"] + shed), ("shed", shed),
             ("ticks", ticks),
             ("skew_mean_ms", s["skew_mean_ms"]), ("skew_p99_ms", s["skew_p99_ms"])):
    rec(f + k, v)
# A sampler that started after the run ended (its python, on a saturated
# machine) saw neither side: no figure rather than a wrong one.
if s1c <= s0c or r1c <= r0c:
    print("wall: CPU and wake-ups not measured: the steady window missed the %s (the sampler started after they ended)"
          % ("streamer" if s1c <= s0c else "receivers"))
    sys.exit(0)
# The steady window: bytes at the streamer's mean rate over it.
window = t1 - t0
gb = tx["aggregate"]["mbps"] / 8e3 * window
cpu_gb = (m1 - m0) / gb
frames = n * fps * window
print("wall: steady %.0f s: machine %.2f cores, %.3f CPU-s/GB = %.2f x udpceil's %.3f in this run (before and after; target <= 1.5 x); "
      "streamer %.2f cores, receivers %.2f cores"
      % (window, (m1 - m0) / window, cpu_gb, cpu_gb / ref_cpu, ref_cpu, (s1c - s0c) / window, (r1c - r0c) / window))
# /proc/stat charges each tick to what the CPU does at that instant: exact
# enough for udpceil's busy loops, but a paced wall wakes for bursts shorter
# than a tick on tickless idle CPUs, and the machine's count came out both
# under and over its processes' (0.29 against 0.38 cores in one run, 0.48
# against 0.40 in the next). The processes' own CPU time is the scheduler's
# exact count, beside udpceil's threads' own.
proc_gb = ((s1c - s0c) + (r1c - r0c)) / gb
print("wall: by the processes' own CPU time (the scheduler's exact count; /proc/stat samples at the tick): "
      "%.3f CPU-s/GB = %.2f x udpceil's threads' %.3f in this run" % (proc_gb, proc_gb / ref_proc, ref_proc))
tx_frames = max(1, sum(x["frames"] for x in st))
rx_frames = max(1, sum(t["frames_complete"] + t["frames_incomplete"] for t in tiles))
sw_tx, sw_rx = (s1w - s0w) / frames, (r1w - r0w) / frames
print("wall: per tile frame: sender %.0f wake-ups (voluntary context switches, target <= 30) and %.0f preemptions, "
      "%.0f send calls, %.0f pacer sleeps; receiver %.0f wake-ups (target <= 50) and %.0f preemptions, %.0f receive calls"
      % (sw_tx, (s1p - s0p) / frames, sum(x.get("send_syscalls", 0) for x in st) / tx_frames,
         sum(x.get("pacer_sleeps", 0) for x in st) / tx_frames, sw_rx, (r1p - r0p) / frames,
         sum(t.get("receive_syscalls", 0) for t in tiles) / rx_frames))
def syscalls(side):  # perf's count over the window, or None
    try:
        return float(open(out + "/syscalls-%s.csv" % side).read().split("raw_syscalls")[0].split("\n")[-1].split(",")[0])
    except (OSError, ValueError, IndexError):
        return None
calls_tx, calls_rx = syscalls("tx"), syscalls("rx")
tx_gb, rx_gb = (s1c - s0c) / gb, (r1c - r0c) / gb
at_rate = ("%.2f x at the wall's rate (%.3f, udpceil --cap %.2f)" % (rx_gb / paced_rx, paced_rx, paced_rate)
           if paced_rx > 0 else "not measured at the wall's rate (udpceil --cap gave no result)")
print("wall: per side: streamer %.3f CPU-s/GB = %.2f x udpceil's sender (%.3f); receivers %.3f CPU-s/GB = %.2f x "
      "udpceil's receiver at full rate (%.3f) and %s; system calls per tile frame (perf, all of them): %s"
      % (tx_gb, tx_gb / ref_tx, ref_tx, rx_gb, rx_gb / ref_rx, ref_rx, at_rate,
         "sender %.0f, receiver %.0f" % (calls_tx / frames, calls_rx / frames) if calls_tx and calls_rx else "not counted (needs root and perf)"))
for k, v in (("cpu_s_per_gb", cpu_gb), ("cpu_vs_udpceil", cpu_gb / ref_cpu), ("udpceil_cpu_s_per_gb", ref_cpu),
             ("proc_cpu_s_per_gb", proc_gb), ("proc_vs_udpceil", proc_gb / ref_proc),
             ("tx_vs_udpceil", tx_gb / ref_tx), ("rx_vs_udpceil", rx_gb / ref_rx),
             *((("rx_vs_udpceil_at_rate", rx_gb / paced_rx),) if paced_rx > 0 else ()),
             ("tx_wakeups_per_frame", sw_tx), ("rx_wakeups_per_frame", sw_rx),
             ("tx_syscalls_per_frame", (calls_tx or 0) / frames), ("rx_syscalls_per_frame", (calls_rx or 0) / frames)):
    rec(f + k, v)
PY
}

# The wall loss-free, then with 0.1% and 1% of its packets dropped, in one
# run: what recovery costs against the loss-free run's CPU-s/GB.
bench_loss() {
  if [ "$(id -u)" -ne 0 ] || ! command -v nft >/dev/null; then echo "loss: needs root and nft; skipped"; return; fi
  export WALL_FPS=${WALL_FPS:-6} WALL_SECS=${WALL_SECS:-40}
  local drop rates=${LOSS_RATES:-1 10}
  for drop in 0 $rates; do
    echo "== wall at $WALL_FPS fps, ${drop} per mille dropped =="
    WALL_LABEL=loss.$drop WALL_DROP=$([ "$drop" -gt 0 ] && echo "$drop") bench_wall
  done
  for drop in $rates; do  # the same share refused by the sender's own kernel (nft's output hook)
    echo "== wall at $WALL_FPS fps, ${drop} per mille of the sends refused =="
    WALL_LABEL=refuse.$drop WALL_DROP=$drop WALL_DROP_HOOK=output bench_wall
  done
  python3 - "$RESULTS" "$WALL_FPS" $rates <<'PY'
import sys
r = {}
for line in open(sys.argv[1]):
    k, v = line.rstrip("\n").split("\t")
    r[k] = float(v)
fps = float(sys.argv[2])
base = r["loss.0.%g.cpu_s_per_gb" % fps]
for kind, what in (("loss", "dropped on the way"), ("refuse", "refused by the sender's kernel")):
    for d in sys.argv[3:]:
        k = "%s.%s.%g." % (kind, d, fps)
        if k + "ticks" not in r:
            continue
        print("%s per mille %s: %d of %d ticks skipped (target 0), %.3f%% of the bytes sent again, %.3f CPU-s/GB = %.2f x "
              "the loss-free run's %.3f" % (d, what, r[k + "skipped"], r[k + "ticks"], 100 * r[k + "resent_share"],
                                            r[k + "cpu_s_per_gb"], r[k + "cpu_s_per_gb"] / base, base))
PY
}

bench_mosaic() {
  local js=$out/mosaic-rx.json
  xvfb-run -a -s "-screen 0 1920x1080x24" "$receiver" --config configs/demo-5x3.toml --mosaic --window 1280x483 -q \
    --duration $((secs + 6)) --json "$js" >"$out/mosaic-rx.log" 2>&1 &
  local rx=$!
  sleep 1.5
  scripts/streamer.sh --config configs/demo-5x3.toml --source memory --duration "$secs" -q \
    --json "$out/mosaic-tx.json" >"$out/mosaic-tx.log" 2>&1
  wait "$rx" || true
  python3 - "$js" "$out/mosaic-tx.json" <<'PY'
import json, os, sys
exec(os.environ["PYREC"])
rx, tx = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
shown = rx["sync"]["presented"] + rx["sync"]["partial"]
fps = shown / tx["duration_s"]
print("mosaic: demo wall 5x3 of 640x400 in a 1280x483 window under Xvfb (Mesa llvmpipe): %.1f fps of %g "
      "(%d ticks shown together, %d skipped, %d window updates); target: the wall's fps"
      % (fps, tx["fps"], shown, rx["sync"]["skipped"], rx["window_updates"]))
rec("mosaic.fps", fps); rec("mosaic.target", tx["fps"])
PY
}

case "$what" in
  receive) bench_receive ;;
  wall) bench_wall ;;
  loss) bench_loss ;;
  path) exec bench/path_bench.sh ;;
  mosaic) bench_mosaic ;;
  all) bench_receive; bench_wall; bench_mosaic ;;
  *) echo "usage: $0 [receive|wall|loss|path|mosaic|all]" >&2; exit 2 ;;
esac
