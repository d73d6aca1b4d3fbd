// wallsim: the whole wall in one process on virtual time (sim/wall_model.h).
//   wallsim --list
//   wallsim --scenario NAME [--seed N] [--seconds S] [--json FILE]
//   wallsim --swarm COUNT --seed N        (seeds N .. N+COUNT-1)
//   wallsim --scenario swarm --seed N     (one seed of a swarm again)
// Exit status: 0 when every invariant held (or, for a scenario with a known
// failure, exactly that one failed), 1 when one did not, 2 on bad usage.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>

#include "sim/wall_model.h"

namespace tilestream::sim {
namespace {

// Whether the run passes: every invariant held, or exactly the known one
// failed. Prints what failed and how to replay it.
bool Judge(const Scenario& s, const std::vector<std::string>& failures, bool quiet) {
  const bool pass = Passes(s, failures);
  if (pass && !failures.empty() && !quiet)
    for (const std::string& f : failures)
      fmt::print("{}: fails as known (until fixed): {}\n", s.name, f);
  if (pass) return true;
  fmt::print(stderr, "FAILED {} (seed {}): {}\n", s.name, s.seed, s.Describe());
  for (const std::string& f : failures) fmt::print(stderr, "  {}\n", f);
  if (!s.expect_failure.empty())
    fmt::print(stderr, "  known to fail: {}; a fix that landed drops them from the scenario\n",
               fmt::join(s.expect_failure, ", "));
  const bool swarm = s.name.rfind("swarm-", 0) == 0;
  fmt::print(stderr, "  replay: build/sim/wallsim --scenario {} --seed {}\n",
             swarm ? "swarm" : s.name, s.seed);
  return false;
}

int RunOne(Scenario s, const std::string& json_path) {
  const WallReport r = RunWall(s);
  const std::vector<std::string> failures = CheckInvariants(s, r);
  const std::string json = ReportJson(s, r, failures);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << json << "\n";
    if (!out) {
      fmt::print(stderr, "cannot write {}\n", json_path);
      return 2;
    }
  }
  fmt::print(
      "{}: {} of {} ticks shown, {} skipped, {} shed; skew p99 {:.3f} ms; latency {:.0f} ms; "
      "{:.1f} s simulated in {:.2f} CPU-s ({} datagrams)\n",
      s.name, r.presented + r.partial, r.ticks, r.skipped, r.shed, r.skew_p99_ms, r.latency_ms,
      r.wall_seconds, r.cpu_seconds, r.datagrams);
  return Judge(s, failures, false) ? 0 : 1;
}

// Every failed invariant counted by name, those a region may fail apart.
int RunSwarm(uint64_t count, uint64_t first_seed) {
  uint64_t failed = 0, clean = 0;
  std::map<std::string, uint64_t> known, found;
  std::map<std::string, std::vector<uint64_t>> seeds;  // the first few of each, to replay
  double cpu = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const Scenario s = SwarmScenario(first_seed + i);
    const WallReport r = RunWall(s);
    cpu += r.cpu_seconds;
    const std::vector<std::string> failures = CheckInvariants(s, r);
    clean += failures.empty();
    for (const std::string& f : failures) {
      const std::string name = f.substr(0, f.find(':'));
      const bool may = std::find(s.may_fail.begin(), s.may_fail.end(), name) != s.may_fail.end();
      const std::string what = may ? name + ", " + s.may_fail_why : name;
      ++(may ? known[what] : found[what]);
      if (seeds[what].size() < 3) seeds[what].push_back(s.seed);
    }
    if (!Judge(s, failures, true)) ++failed;
  }
  fmt::print("swarm: {} seeds from {}: {} clean, {} failed; {:.1f} CPU-s\n", count, first_seed,
             clean, failed, cpu);
  for (const auto& [name, n] : found)
    fmt::print("  failed {}: {} walls (seeds {})\n", name, n, fmt::join(seeds[name], ", "));
  for (const auto& [name, n] : known)
    fmt::print("  known, {}: {} walls (seeds {})\n", name, n, fmt::join(seeds[name], ", "));
  return failed ? 1 : 0;
}

int Main(int argc, char** argv) {
  CLI::App app{"wallsim: the whole wall, deterministic, on virtual time"};
  std::string name, json;
  uint64_t seed = 1, swarm = 0;
  double seconds = 0;
  bool list = false;
  app.add_flag("--list", list, "name the scenarios");
  app.add_option("--scenario", name, "run one scenario ('swarm': one seed of a swarm)");
  app.add_option("--seed", seed, "the seed of every draw (default 1)");
  app.add_option("--seconds", seconds, "play this long instead of the scenario's")
      ->check(CLI::Range(0.5, 3600.0));
  app.add_option("--json", json, "write the report here");
  app.add_option("--swarm", swarm, "run this many random walls, seeds from --seed on")
      ->check(CLI::Range(1, 1000000));
  CLI11_PARSE(app, argc, argv);
  if (list) {
    for (const Scenario& s : Scenarios()) fmt::print("{:28} {}\n", s.name, s.about);
    return 0;
  }
  if (swarm > 0) return RunSwarm(swarm, seed);
  if (name.empty()) {
    fmt::print(stderr, "wallsim: say --scenario NAME, --swarm COUNT or --list\n");
    return 2;
  }
  Scenario s;
  if (name == "swarm") {
    s = SwarmScenario(seed);
  } else if (const Scenario* found = FindScenario(name)) {
    s = *found;
    s.seed = seed;
  } else {
    fmt::print(stderr, "wallsim: no scenario '{}' (--list names them)\n", name);
    return 2;
  }
  if (seconds > 0) s.seconds = seconds;
  return RunOne(s, json);
}

}  // namespace
}  // namespace tilestream::sim

int main(int argc, char** argv) {
  try {
    return tilestream::sim::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wallsim: %s\n", e.what());
    return 2;
  }
}
