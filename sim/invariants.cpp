// The invariants every run of the wall's simulation is held to, and its
// report in the programs' names (docs/simulation.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "sim/wall_model.h"

namespace tilestream::sim {

namespace {

bool NodeFaults(const Scenario& s) {
  for (const Fault& f : s.faults)
    if (f.kind == Fault::Kind::kNodeLinkDown || f.kind == Fault::Kind::kNodeStopped ||
        f.kind == Fault::Kind::kNodeDies)
      return true;
  return false;
}

}  // namespace

std::vector<std::string> CheckInvariants(const Scenario& s, const WallReport& r) {
  std::vector<std::string> failed;
  const auto fail = [&](const char* name, std::string what) {
    failed.push_back(fmt::format("{}: {}", name, what));
  };
  if (r.shown_not_whole || r.shown_not_exact)
    fail("whole", fmt::format("{} frames shown incomplete, {} with other pixels than sent",
                              r.shown_not_whole, r.shown_not_exact));
  if (r.ticks_torn)
    fail("torn",
         fmt::format("{} tile frames missing from ticks their tiles took part in", r.ticks_torn));
  uint64_t lost = 0, requested = 0, unrecoverable = 0, refused = 0, repairable = 0;
  for (size_t i = 0; i < r.tiles.size(); ++i) {
    const TileCounters& t = r.tiles[i];
    lost += t.lost;
    refused += t.refused_sends;
    // A tile whose socket broke (kSendsFail) answers nothing: what it
    // lost after is neither recoverable nor asked for in vain.
    const bool broke = std::any_of(s.faults.begin(), s.faults.end(), [&](const Fault& f) {
      return f.kind == Fault::Kind::kSendsFail && f.which == i;
    });
    if (broke) continue;
    repairable += t.lost;
    requested += t.nack_requested;
    unrecoverable += t.unrecoverable;
  }
  // What the receivers count lost was lost: refused by the sender's
  // kernel, on a path, or in a socket that filled while its node was
  // stopped; not late, not reordered, not duplicated.
  if (lost > refused + r.lost_on_paths + r.dropped_at_nodes)
    fail("phantom",
         fmt::format("{} counted lost; {} refused, {} lost on the paths, {} in full sockets", lost,
                     refused, r.lost_on_paths, r.dropped_at_nodes));
  if (unrecoverable && !NodeFaults(s))
    fail("recovered",
         fmt::format("{} packets unrecoverable of {} lost", unrecoverable, repairable));
  // A path down loses the requests too: asked again and again, rightly.
  if (repairable > 0 && !NodeFaults(s) &&
      static_cast<double>(requested) > 1.2 * static_cast<double>(repairable))
    fail("requests", fmt::format("{} requested for {} lost: {:.2f} per lost packet", requested,
                                 repairable, static_cast<double>(requested) / repairable));
  if (r.late_decisions)
    fail("late", fmt::format("{} decisions reached a node after their moment, its path up",
                             r.late_decisions));
  if (r.virtual_skew_p99_ms > 1.0)
    fail("skew", fmt::format("skew p99 {:.2f} ms on the virtual clock", r.virtual_skew_p99_ms));
  // Every load every tile could open was switched to, at one tick on every
  // tile (frames exact: above); one a tile could not open said why, and the
  // movie playing played on.
  std::vector<const Fault*> loads;
  for (const Fault& f : s.faults)
    if (f.kind == Fault::Kind::kLoad || f.kind == Fault::Kind::kLoadFails) loads.push_back(&f);
  std::stable_sort(loads.begin(), loads.end(),
                   [](const Fault* a, const Fault* b) { return a->at_s < b->at_s; });
  uint64_t playing = 0, refused_loads = 0;
  for (size_t i = 0; i < loads.size(); ++i) {
    if (loads[i]->kind == Fault::Kind::kLoad) playing = i + 1;
    refused_loads += loads[i]->kind == Fault::Kind::kLoadFails;
  }
  if (r.movie_generation != playing || r.load_errors.size() != refused_loads)
    fail("movie", fmt::format("playing load {} at the end, {} loads failed; expected {} and {}",
                              r.movie_generation, r.load_errors.size(), playing, refused_loads));
  // A leader given up (a fault of its node, of its sync's datagrams, or of
  // the LAN)
  // costs the ticks opened with it that it had not decided: those of the
  // latency, and of the grace before it is given up, no more; and the
  // next may miss three more before it leaves the faulty node's tiles out.
  const double latency_s = s.latency_ms && *s.latency_ms >= 0 ? *s.latency_ms / 1e3 : 0.5;
  const double grace_s = 4 * (s.path.one_way_ns + 2 * s.path.jitter_ns) / 1e9 + 0.1;
  const auto per_leader = static_cast<uint64_t>(std::ceil((latency_s + grace_s) * s.fps)) + 2;
  const bool leader_faults = NodeFaults(s) || s.lan.loss > 0 ||
                             std::any_of(s.faults.begin(), s.faults.end(), [](const Fault& f) {
                               return f.kind == Fault::Kind::kSyncUdpBlocked;
                             });
  if (r.abandoned > (leader_faults ? r.leaders_given_up * per_leader : 0))
    fail("abandoned", fmt::format("{} ticks skipped with {} leaders given up ({} faults of nodes)",
                                  r.abandoned, r.leaders_given_up, leader_faults ? "with" : "no"));
  if (r.leaders_given_up < s.min_leaders_given_up)
    fail("leader given up", fmt::format("{} leaders given up, {} at least", r.leaders_given_up,
                                        s.min_leaders_given_up));
  const uint64_t shown = r.presented + r.partial;
  if (static_cast<double>(shown + s.may_miss + r.abandoned + 3 * r.leaders_given_up) <
      s.min_shown * static_cast<double>(r.ticks))
    fail("shown", fmt::format("{} of {} ticks shown ({} skipped, {} shed), asked {:.0f}% less {}",
                              shown, r.ticks, r.skipped, r.shed, s.min_shown * 100, s.may_miss));
  return failed;
}

bool Passes(const Scenario& s, const std::vector<std::string>& failures) {
  std::vector<std::string> names;
  names.reserve(failures.size());
  for (const std::string& f : failures) names.push_back(f.substr(0, f.find(':')));
  const auto in = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  for (const std::string& e : s.expect_failure)
    if (!in(names, e)) return false;  // fixed: the scenario must say so
  for (const std::string& n : names)
    if (!in(s.expect_failure, n) && !in(s.may_fail, n)) return false;
  return true;
}

std::string ReportJson(const Scenario& s, const WallReport& r,
                       const std::vector<std::string>& failures) {
  nlohmann::ordered_json j;
  j["scenario"] = s.name;
  j["seed"] = s.seed;
  j["options"] = s.Describe();
  j["sync"] = {{"ticks", r.ticks},
               {"presented", r.presented},
               {"skipped", r.skipped},
               {"partial", r.partial},
               {"left_out", r.left_out},
               {"skew_p99_ms", r.skew_p99_ms},
               {"skew_max_ms", r.skew_max_ms},
               {"virtual_skew_p99_ms", r.virtual_skew_p99_ms},
               {"latency_ms", r.latency_ms},
               {"repair_rounds", r.repair_rounds},
               {"late_decisions", r.late_decisions},
               {"late_decisions_path_down", r.late_decisions_path_down},
               {"leaders", r.leaders},
               {"leaders_given_up", r.leaders_given_up},
               {"abandoned", r.abandoned}};
  j["movie"] = {{"generation", r.movie_generation}, {"load_errors", r.load_errors}};
  j["shedder"] = {{"shed", r.shed}, {"keep", r.shed_keep}, {"ceiling", r.shed_ceiling}};
  nlohmann::ordered_json tiles = nlohmann::ordered_json::array();
  for (const TileCounters& t : r.tiles)
    tiles.push_back({{"frames_sent", t.frames_sent},
                     {"skipped_ticks", t.skipped_ticks},
                     {"complete", t.complete},
                     {"incomplete", t.incomplete},
                     {"lost", t.lost},
                     {"recovered", t.recovered},
                     {"unrecoverable", t.unrecoverable},
                     {"nack_requested", t.nack_requested},
                     {"nack_asked_again", t.nack_asked_again},
                     {"retransmitted", t.retransmitted},
                     {"refused_cap", t.refused_cap},
                     {"refused_sends", t.refused_sends},
                     {"repair_rtt_ms", t.repair_rtt_ms},
                     {"repair_rttvar_ms", t.repair_rttvar_ms}});
  j["tiles"] = tiles;
  j["checks"] = {{"shown_frames", r.shown_frames},
                 {"shown_not_whole", r.shown_not_whole},
                 {"shown_not_exact", r.shown_not_exact},
                 {"ticks_torn", r.ticks_torn},
                 {"ticks_torn_excused", r.ticks_torn_excused},
                 {"shows_excused", r.shows_excused},
                 {"lost_on_paths", r.lost_on_paths},
                 {"dropped_at_nodes", r.dropped_at_nodes},
                 {"duplicates", r.duplicates},
                 {"tcp_probes", r.tcp_probes},
                 {"tcp_timeouts", r.tcp_timeouts},
                 {"failed", failures},
                 {"known_failures", s.expect_failure}};
  j["sim"] = {{"wall_seconds", r.wall_seconds},
              {"cpu_seconds", r.cpu_seconds},
              {"events", r.events},
              {"datagrams", r.datagrams}};
  return j.dump(2);
}

}  // namespace tilestream::sim
