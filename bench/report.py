#!/usr/bin/env python3
"""Turns one bench/run into the generated part of docs/benchmarks.md and its plots.

    bench/report.py RUN_DIR BENCHMARKS_MD PLOT_DIR

RUN_DIR holds results.tsv ("key<TAB>value" lines written by the benchmark
scripts' `record`) and packet_rate.json. The table replaces what stands
between the two markers in BENCHMARKS_MD (added at the top if missing);
the plots are drawn by gnuplot into PLOT_DIR. Figures absent from the run
(a skipped benchmark) are left out of the table and the plots.
"""
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

BEGIN = "<!-- bench/run: begin (generated, do not edit) -->"
END = "<!-- bench/run: end -->"


def load(run):
    r = {}
    with open(os.path.join(run, "results.tsv")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("\t")
            try:
                r[k] = float(v)
            except ValueError:
                pass
    try:
        with open(os.path.join(run, "packet_rate.json")) as f:
            for k, v in json.load(f).items():
                r["packet_rate." + k] = v
    except OSError:
        pass
    return r


def verdict(ok):
    return "met" if ok else "**not met**"


def rows(r):
    """(benchmark, result, reference, ratio, target) for every figure present."""
    out = []
    if "packet_rate.parse_gbps" in r:
        out.append(("parse + assemble one 2560x1600 frame, one core", "%.1f GB/s" % r["packet_rate.parse_gbps"],
                    "memcpy %.1f GB/s" % r["packet_rate.memcpy_gbps"], "%.2fx" % r["packet_rate.parse_vs_memcpy"],
                    ">= 10 GB/s: " + verdict(r["packet_rate.parse_gbps"] >= 10)))
    ceiling = r.get("send.ceiling")
    for n in (1, 4, 15):
        if ceiling and "send.%d" % n in r:
            ratio = r["send.%d" % n] / ceiling
            out.append(("send, memory, unpaced, %d stream%s" % (n, "s" if n > 1 else ""), "%.1f Gbit/s" % r["send.%d" % n],
                        "udpceil GSO tx %.1f Gbit/s" % ceiling, "%.2fx" % ratio, ">= 0.90: " + verdict(ratio >= 0.9)))
    for n in (1, 4):
        k = "paced.%d." % n
        if k + "pct_min" in r:
            ok = r[k + "pct_min"] >= 99.5 and r[k + "pct_max"] <= 100.5 and r[k + "cpu_max"] <= 30
            out.append(("paced 2.5 Gbit/s, %d stream%s" % (n, "s" if n > 1 else ""),
                        "%.2f-%.2f%% of target, CPU <= %.1f%%" % (r[k + "pct_min"], r[k + "pct_max"], r[k + "cpu_max"]),
                        "udpceil pacer %.1f%%, %.1f%% CPU" % (r.get("paced.udpceil.pct", 0), r.get("paced.udpceil.cpu", 0)),
                        "", "within 0.5%, <= 30% CPU: " + verdict(ok)))
    if "disk.ring" in r:
        ratio = r["disk.ring"] / r["disk.two"]
        out.append(("disk, one tile's read-ahead ring on XFS (loop device), O_DIRECT; the streamer disk to network "
                    "read %.2f GB/s" % r["disk.tile"], "%.2f GB/s" % r["disk.ring"],
                    "udpceil two-buffer %.2f GB/s (one buffer %.2f)" % (r["disk.two"], r["disk.one"]), "%.2fx" % ratio,
                    ">= 0.90: " + verdict(ratio >= 0.9)))
    for n in (1, 4):
        if "receive.%d" % n in r and "receive.ceiling" in r:
            got, target = r["receive.%d" % n], 0.90 if n == 1 else 0.85
            ratio = got / r["receive.ceiling"]
            out.append(("receive, %d stream%s into one receiver, %.0f%% placed, %d lost, %.1f Gbit/s thrown away "
                        "catching up" % (n, "s" if n > 1 else "", 100 * r.get("receive.%d.placed" % n, 0),
                                         r["receive.%d.lost" % n], r.get("receive.%d.thrown" % n, 0)),
                        "%.1f Gbit/s" % got, "udpceil GRO rx %.1f Gbit/s; iperf3 %.1f" % (r["receive.ceiling"], r["receive.iperf3"]),
                        "%.2fx; %.1fx iperf3" % (ratio, got / r["receive.iperf3"]),
                        ">= %.2f: %s; >= 2.5x iperf3: %s" % (target, verdict(ratio >= target), verdict(got / r["receive.iperf3"] >= 2.5))))
    for fps in wall_fps(r):
        k = "wall.%g." % fps
        out.append(("reference wall 5x3 of 2560x1600 at %g fps, 8 nodes, swap sync" % fps,
                    "%.1f Gbit/s received; lost %d, not shown %d of %d ticks (%d of them shed on every tile); "
                    "skew %.2f ms mean, %.2f p99" %
                    (r[k + "received"], r[k + "lost"], r[k + "skipped"], r[k + "ticks"], r.get(k + "shed", 0),
                     r[k + "skew_mean_ms"], r[k + "skew_p99_ms"]),
                    *wall_cpu(r, k)))
    if "mosaic.fps" in r:
        ratio = r["mosaic.fps"] / r["mosaic.target"]
        out.append(("demo wall in a mosaic window under Xvfb", "%.1f fps" % r["mosaic.fps"], "the wall's %g fps" % r["mosaic.target"],
                    "%.2fx" % ratio, "the wall's fps: " + verdict(ratio >= 0.97)))
    nics = nic_balance(r)
    if nics:
        worst = max(abs(tx / sent - 1) for _, tx, sent, _ in nics)
        out.append(("testbed: tiles over 4 veth NICs (%s tiles)" % "/".join(str(t) for *_, t in nics),
                    " ".join("%s %.0f Mbit/s" % (n, tx * 8 / r["nic.duration_s"] / 1e6) for n, tx, _, _ in nics),
                    "bytes the streamer sent per NIC", "within %.1f%%" % (100 * worst),
                    "traffic leaves through its NIC: " + verdict(worst < 0.05)))
    return out


def wall_cpu(r, k):
    """The wall row's reference, ratio and verdicts; CPU "not measured" where
    the steady window missed the processes (bench/receiver_bench.sh)."""
    whole = verdict(r[k + "lost"] == 0 and r[k + "skipped"] == 0)
    if k + "cpu_s_per_gb" not in r:
        return "udpceil: not measured", "not measured", "0 lost/skipped: %s; <= 1.5x: not measured" % whole
    sides = ""
    if k + "rx_vs_udpceil_at_rate" in r:
        sides = ("; streamer %.2fx udpceil's sender, receivers %.2fx its receiver (%.2fx at the wall's rate)" %
                 (r[k + "tx_vs_udpceil"], r[k + "rx_vs_udpceil"], r[k + "rx_vs_udpceil_at_rate"]))
    return ("udpceil %.3f CPU-s/GB" % r[k + "udpceil_cpu_s_per_gb"],
            "%.2f CPU-s/GB = %.2fx; by the processes' own CPU time %.2fx%s" %
            (r[k + "cpu_s_per_gb"], r[k + "cpu_vs_udpceil"], r[k + "proc_vs_udpceil"], sides),
            "0 lost/skipped: %s; <= 1.5x: %s" % (whole, verdict(max(r[k + "cpu_vs_udpceil"], r[k + "proc_vs_udpceil"]) <= 1.5)))


def wall_fps(r, suffix=".ticks"):
    return sorted(float(k[len("wall."):-len(suffix)]) for k in r if k.startswith("wall.") and k.endswith(suffix))


def nic_balance(r):
    """[(nic, interface tx bytes, streamer bytes, tiles)] from the testbed run."""
    out = []
    for k in sorted(r):
        if k.startswith("nic.") and k.endswith(".tx_bytes"):
            nic = k.split(".")[1]
            streams = [v for s, v in r.items() if s.startswith("nic.%s.stream_bytes." % nic)]
            if streams:
                out.append((nic, r[k], sum(streams), len(streams)))
    return out


def plot(r, plot_dir):
    os.makedirs(plot_dir, exist_ok=True)
    made = []
    with tempfile.TemporaryDirectory() as tmp:
        def data(name, lines):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            return path

        def gnuplot(name, script):
            png = os.path.join(plot_dir, name)
            subprocess.run(["gnuplot"], input='set terminal pngcairo size 800,450 font "sans,10"\nset output "%s"\n'
                           % png + script, text=True, check=True)
            made.append(name)

        send = [(n, r["send.%d" % n]) for n in (1, 4, 15) if "send.%d" % n in r]
        recv = [(n, r["receive.%d" % n]) for n in (1, 4) if "receive.%d" % n in r]
        if send or recv:
            s = data("send.dat", ["%d %f" % p for p in send] or ["1 NaN"])
            v = data("recv.dat", ["%d %f" % p for p in recv] or ["1 NaN"])
            refs = ""
            if "send.ceiling" in r:
                refs += ', %f title "udpceil GSO send ceiling" dt 2 lc rgb "#1f77b4"' % r["send.ceiling"]
            if "receive.ceiling" in r:
                refs += ', %f title "udpceil GRO receive ceiling" dt 2 lc rgb "#d62728"' % r["receive.ceiling"]
            gnuplot("throughput.png", """set title "Throughput vs number of streams (loopback, MTU 9000, 2560x1600 tiles)"
set xlabel "streams"; set ylabel "Gbit/s"; set logscale x 2; set xrange [0.8:20]; set yrange [0:*]; set grid
set key bottom right
plot "%s" with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "streamer send (memory, unpaced)", \\
     "%s" with linespoints lw 2 pt 5 lc rgb "#d62728" title "receiver (direct placement)"%s
""" % (s, v, refs))
        nics = nic_balance(r)
        if nics:
            d = data("nic.dat", ['%s %f %f' % (n, tx * 8 / r["nic.duration_s"] / 1e6, sent * 8 / r["nic.duration_s"] / 1e6)
                                 for n, tx, sent, _ in nics])
            gnuplot("nic-balance.png", """set title "Per-NIC balance on the namespace testbed (15 tiles over 4 veth NICs)"
set ylabel "Mbit/s"; set style data histograms; set style fill solid 0.8 border -1; set boxwidth 0.9
set yrange [0:*]; set grid ytics; set key below
plot "%s" using 2:xtic(1) title "interface tx (/sys/class/net)", "" using 3 title "streamer: its tiles on that NIC"
""" % d)
        fps = wall_fps(r, ".cpu_s_per_gb")
        if fps:
            d = data("cpu.dat", ["%g %f %f %f" % (f, r["wall.%g.cpu_s_per_gb" % f], r["wall.%g.proc_cpu_s_per_gb" % f],
                                                   1.5 * r["wall.%g.udpceil_cpu_s_per_gb" % f]) for f in fps])
            gnuplot("cpu-per-gb.png", """set title "Reference wall on one 2-core machine: CPU-seconds per GB received"
set xlabel "wall fps (22 fps = 32.5 Gbit/s)"; set ylabel "CPU-s/GB"; set yrange [0:*]; set grid
set xrange [0:*]
plot "%s" using 1:2 with linespoints lw 2 pt 7 title "whole machine (/proc/stat)", "" using 1:3 with linespoints lw 2 pt 5 title "its processes' own CPU time", "" using 1:4 with lines dt 2 title "target: 1.5 x udpceil (same run)"
""" % d)
    return made


def render(r, made, run):
    lines = [BEGIN, "", "## Latest run of `bench/run`", "",
             "Generated by `bench/run` on %s (%s, %d CPUs), raw output in `%s/`. Each ratio is against the reference "
             "measured in the same run; the analysis below the generated part explains the figures." %
             (datetime.date.today().isoformat(), platform.machine(), os.cpu_count(), run), "",
             "| benchmark | result | reference (same run) | ratio | target |", "|---|---|---|---|---|"]
    lines += ["| %s |" % " | ".join(row) for row in rows(r)]
    lines.append("")
    for name, what in (("throughput.png", "Throughput vs number of streams"), ("nic-balance.png", "Per-NIC balance"),
                       ("cpu-per-gb.png", "CPU-seconds per GB of the reference wall")):
        if name in made:
            lines += ["![%s](bench/%s)" % (what, name), ""]
    lines.append(END)
    return "\n".join(lines)


def main():
    run, md, plot_dir = sys.argv[1:4]
    r = load(run)
    made = plot(r, plot_dir)
    block = render(r, made, run)
    with open(md) as f:
        text = f.read()
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:  # after the title and the first paragraph
        head, sep, rest = text.partition("\n## ")
        text = head.rstrip("\n") + "\n\n" + block + "\n" + sep + rest
    with open(md, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
