// pathline: a long network path on one machine, for the testbed's tests and
// benchmarks (testbed/testbed.sh up --path SPEC): `run` is the delay line
// (testbed/delay_line.h), `probe` and `echo` measure a path from outside
// (testbed/path_probe.h).
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "common/base/clock.h"
#include "common/base/guarded_main.h"
#include "testbed/delay_line.h"
#include "testbed/path_probe.h"

namespace {

tilestream::DelayLine* g_line = nullptr;

void OnSignal(int) {
  if (g_line) g_line->RequestStop();
}

int Fail(const tilestream::Status& s) {
  spdlog::error("{}", s.message());
  return 1;
}

int RunLine(const std::string& spec_text, uint16_t out_queue, uint16_t in_queue, double seconds,
            const std::string& ready, const std::string& stats) {
  using namespace tilestream;
  auto spec = ParsePathSpec(spec_text);
  if (!spec.ok()) return Fail(spec.status());
  auto line = DelayLine::Open({*spec, out_queue, in_queue});
  if (!line.ok()) return Fail(line.status());
  g_line = line->get();
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  spdlog::info("pathline: queues {} (out) and {} (in): {}", out_queue, in_queue, spec->Describe());
  if (!ready.empty()) std::ofstream(ready) << spec->Describe() << "\n";
  const Status s = (*line)->Run(MonotonicNs() + static_cast<int64_t>(seconds * 1e9));
  if (!stats.empty()) std::ofstream(stats) << (*line)->Report() << "\n";
  return s.ok() ? 0 : Fail(s);
}

int Run(int argc, char** argv) {
  using namespace tilestream;
  CLI::App app{
      "A long network path on one machine (delay, jitter, loss, reordering, a rate cap), and a\n"
      "probe that measures one. The delay line serves the netfilter queues that nftables sends\n"
      "a network namespace's packets to (testbed/testbed.sh up --path SPEC sets it up).\n\n"
      "SPEC: key=value,... e.g. rtt=20ms,jitter=2ms,loss=0.5%; keys: rtt, delay (one way),\n"
      "jitter, jitter_period, loss, tcp_loss=yes|no, burst (datagrams), burst_at, burst_to\n"
      "(IPv4), reorder, reorder_by, rate (e.g. 5gbit), seed. See testbed/path_model.h.",
      "pathline"};
  app.require_subcommand(1);
  std::string spec, ready, stats, to;
  uint16_t out_queue = 0, in_queue = 1, port = 0;
  double seconds = 1800;
  ProbeOptions probe;
  double gbps = 0.008;

  CLI::App* run = app.add_subcommand("run", "Be the delay line (as root, in the namespace)");
  run->add_option("--path", spec, "The path (SPEC)")->required();
  run->add_option("--out-queue", out_queue, "Queue number of the packets sent (default 0)");
  run->add_option("--in-queue", in_queue, "Queue number of the packets received (default 1)");
  run->add_option("--seconds", seconds, "Stop by itself after this long (default 1800)")
      ->check(CLI::Range(0.1, 86400.0));
  run->add_option("--ready", ready, "Write the path's description here once serving");
  run->add_option("--stats", stats, "Write what it did and how accurately (JSON) here at the end");

  CLI::App* pr = app.add_subcommand("probe", "Measure a path: send stamped datagrams to an echo");
  pr->add_option("--to", probe.to, "The echo, ADDRESS:PORT")->required();
  pr->add_option("--count", probe.count, "Datagrams (default 1000)")
      ->check(CLI::Range(1, 10'000'000));
  pr->add_option("--gbps", gbps, "Rate, Gbit/s (default 0.008)")->check(CLI::Range(1e-6, 100.0));
  pr->add_option("--bytes", probe.bytes, "Size of each (default 1000)")
      ->check(CLI::Range(32, 65000));

  CLI::App* echo = app.add_subcommand("echo", "Answer probes");
  echo->add_option("--port", port, "UDP port")->required();
  echo->add_option("--seconds", seconds, "Stop after this long (default 1800)")
      ->check(CLI::Range(0.1, 86400.0));
  CLI11_PARSE(app, argc, argv);

  if (run->parsed()) return RunLine(spec, out_queue, in_queue, seconds, ready, stats);
  if (echo->parsed()) {
    const Status s = RunEcho(port, seconds);
    return s.ok() ? 0 : Fail(s);
  }
  probe.rate_bps = gbps * 1e9;
  auto r = RunProbe(probe);
  if (!r.ok()) return Fail(r.status());
  std::printf("%s\n", r->c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tilestream::GuardedMain("pathline", [&] { return Run(argc, argv); });
}
