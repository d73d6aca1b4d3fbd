#include "streamer/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/base/json_text.h"

namespace tilestream {

StreamSummary Summarize(const TileStats& s, const WallConfig& config) {
  StreamSummary r;
  r.tile = TileId::FromIndex(s.tile, config.wall.layout).Name();
  r.nic = config.nic_label(s.nic < config.nics.size() ? s.nic : config.routes[s.tile].nic);
  r.nic_moves = s.nic_moves;
  const double seconds = s.elapsed_ns > 0 ? s.elapsed_ns / 1e9 : 0;
  if (seconds > 0) {
    r.mbps = s.bytes * 8 / seconds / 1e6;
    r.cpu_percent = s.cpu_ns / 1e9 / seconds * 100;
    r.disk_mbytes_per_s = s.disk_bytes / seconds / 1e6;
  }
  r.send_errors = s.send_errors;
  r.refusals = s.refusals;
  r.refused_resent = s.refused_resent;
  r.frames = s.frames;
  r.late_frames = s.late_frames;
  r.skipped_ticks = s.skipped_ticks;
  r.ticks_seen_late = s.ticks_seen_late;
  r.held_frames = s.held_frames;
  r.missed_frames = s.missed_frames;
  r.packets = s.packets;
  r.bytes = s.bytes;
  r.send_syscalls = s.syscalls;
  r.pacer_sleeps = s.pacer_sleeps;
  r.nacks = s.nacks;
  r.retransmitted = s.retransmitted;
  r.retransmitted_bytes = s.retransmitted_bytes;
  r.refused_old = s.refused_old;
  r.refused_cap = s.refused_cap;
  r.borrowed = s.borrowed;
  return r;
}

namespace {

struct Totals {
  double mbps = 0, cpu = 0, disk = 0, min_mbps = 0, max_mbps = 0;
  uint64_t errors = 0, late = 0, skipped = 0, missed = 0, frames = 0;
};

Totals Add(const std::vector<StreamSummary>& streams) {
  Totals t;
  t.min_mbps = streams.empty() ? 0 : streams[0].mbps;
  for (const StreamSummary& s : streams) {
    t.mbps += s.mbps;
    t.cpu += s.cpu_percent;
    t.disk += s.disk_mbytes_per_s;
    t.errors += s.send_errors;
    t.late += s.late_frames;
    t.skipped += s.skipped_ticks;
    t.missed += s.missed_frames;
    t.frames += s.frames;
    t.min_mbps = std::min(t.min_mbps, s.mbps);
    t.max_mbps = std::max(t.max_mbps, s.mbps);
  }
  return t;
}

}  // namespace

std::string SecondLine(double seconds, const std::vector<StreamSummary>& streams) {
  const Totals t = Add(streams);
  return fmt::format(
      "{:7.1f} s  {} streams  {:.2f} Gbit/s (per stream {:.2f}..{:.2f})  disk {:.0f} MB/s  "
      "CPU {:.0f}%  send errors {}  late {}  skipped {}",
      seconds, streams.size(), t.mbps / 1000, t.min_mbps / 1000, t.max_mbps / 1000, t.disk, t.cpu,
      t.errors, t.late, t.skipped);
}

namespace {

// " (EPERM 12; 80 more refused once and sent again)" after the send errors.
std::string RefusalNote(const StreamSummary& s) {
  std::string note = s.refusals.Text();
  if (s.refused_resent > 0)
    note += fmt::format("{}{} more refused once and sent again", note.empty() ? "" : "; ",
                        s.refused_resent);
  return note.empty() ? "" : " (" + note + ")";
}

}  // namespace

std::string FinalReport(double seconds, const std::vector<StreamSummary>& streams) {
  std::string out = fmt::format("final report: {:.1f} s, {} streams\n", seconds, streams.size());
  for (const StreamSummary& s : streams) {
    out += fmt::format(
        "tile {:<6} nic {:<8} {:9.1f} Mbps  {:5.1f} %CPU  {} send errors{}  disk {:.0f} MB/s  "
        "frames {} ({} late, {} skipped, {} missed){}\n",
        s.tile, s.nic, s.mbps, s.cpu_percent, s.send_errors, RefusalNote(s), s.disk_mbytes_per_s,
        s.frames, s.late_frames, s.skipped_ticks, s.missed_frames,
        s.nacks
            ? fmt::format(
                  "  NACKs {}: {} packets sent again ({} on credit), {} too old, {} over the cap",
                  s.nacks, s.retransmitted, s.borrowed, s.refused_old, s.refused_cap)
            : "");
  }
  const Totals t = Add(streams);
  out += fmt::format(
      "total  {:<2} streams  {:10.1f} Mbps  {:5.1f} %CPU  {} send errors  disk {:.0f} MB/s  "
      "frames {} ({} late, {} skipped, {} missed)\n",
      streams.size(), t.mbps, t.cpu, t.errors, t.disk, t.frames, t.late, t.skipped, t.missed);
  return out;
}

namespace {

// The q-quantile of the skews in milliseconds (0 when none), never above
// the exact maximum (the histogram rounds up to its bucket's edge).
double QuantileMs(const SwapSyncMaster& sync, double q) {
  return std::min(sync.skews().QuantileNs(q), sync.stats().skew_max_ns) / 1e6;
}

}  // namespace

std::string SyncReportLine(const SwapSyncMaster& sync) {
  const SyncStats& s = sync.stats();
  return fmt::format(
      "swap sync: {} ticks shown, {} skipped, {} partial; skew mean {:.3f}, p99 {:.3f}, max {:.3f} "
      "ms "
      "({} ticks measured)",
      s.presented, s.skipped, s.partial, s.skew_mean_ms(), QuantileMs(sync, 0.99),
      s.skew_max_ns / 1e6, s.skew_samples);
}

namespace {

// {"EPERM": 12, ...}: the errnos that refused any.
nlohmann::json RefusalJson(const RefusalCounts& refusals) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t k = 0; k < RefusalCounts::kSlots; ++k)
    if (refusals.at(k) > 0) j[RefusalCounts::SlotName(k)] = refusals.at(k);
  return j;
}

nlohmann::json StreamJson(const StreamSummary& s) {
  return {{"tile", s.tile},
          {"nic", s.nic},
          {"host", s.host},
          {"mbps", s.mbps},
          {"cpu_percent", s.cpu_percent},
          {"send_errors", s.send_errors},
          {"refusals", RefusalJson(s.refusals)},
          {"refused_resent", s.refused_resent},
          {"nic_moves", s.nic_moves},
          {"disk_mbytes_per_s", s.disk_mbytes_per_s},
          {"frames", s.frames},
          {"late_frames", s.late_frames},
          {"skipped_ticks", s.skipped_ticks},
          {"ticks_seen_late", s.ticks_seen_late},
          {"missed_frames", s.missed_frames},
          {"held_frames", s.held_frames},
          {"packets", s.packets},
          {"bytes", s.bytes},
          {"send_syscalls", s.send_syscalls},
          {"pacer_sleeps", s.pacer_sleeps},
          {"nacks", s.nacks},
          {"retransmitted", s.retransmitted},
          {"retransmitted_bytes", s.retransmitted_bytes},
          {"refused_old", s.refused_old},
          {"refused_cap", s.refused_cap},
          {"borrowed", s.borrowed}};
}

nlohmann::json SyncJson(const SwapSyncMaster& sync, const WallConfig& config) {
  const SyncStats& s = sync.stats();
  nlohmann::json without = nlohmann::json::object();  // tiles that missed any
  for (uint32_t t = 0; t < config.tile_count(); ++t)
    if (sync.ticks_without(t) > 0)
      without[TileId::FromIndex(t, config.wall.layout).Name()] = sync.ticks_without(t);
  return {{"presented", s.presented},
          {"left_out", s.left_out},
          {"ticks_without", without},
          {"skipped", s.skipped},
          {"partial", s.partial},
          {"unmatched", s.unmatched},
          {"decided_by_leader", s.led},
          {"abandoned", s.abandoned},
          {"skew_samples", s.skew_samples},
          {"skew_mean_ms", s.skew_mean_ms()},
          {"skew_p50_ms", QuantileMs(sync, 0.5)},
          {"skew_p99_ms", QuantileMs(sync, 0.99)},
          {"skew_max_ms", s.skew_max_ns / 1e6}};
}

nlohmann::json TicksJson(const TickTiming& t) {
  return {{"sent", t.sent},
          {"sent_late", t.late},
          {"max_late_ms", t.max_late_ns / 1e6},
          {"max_broadcast_ms", t.max_broadcast_ns / 1e6},
          {"real_time", t.real_time},
          {"windows_over_budget", t.windows_over_budget},
          {"shed", t.shed},
          {"shed_cuts", t.shed_cuts}};
}

}  // namespace

std::string FinalReportJson(double seconds, const std::vector<StreamSummary>& streams,
                            const WallConfig& config, bool bench, const SwapSyncMaster* sync,
                            const TickTiming* ticks) {
  nlohmann::json j;
  j["duration_s"] = seconds;
  j["mode"] = bench ? "bench" : "play";
  j["layout"] = config.wall.layout.ToString();
  j["tile"] = fmt::format("{}x{}", config.wall.tile.width, config.wall.tile.height);
  j["fps"] = config.wall.fps;
  j["mtu"] = config.stream.mtu;
  j["streams"] = nlohmann::json::array();
  for (const StreamSummary& s : streams) j["streams"].push_back(StreamJson(s));
  const Totals t = Add(streams);
  j["aggregate"] = {{"streams", streams.size()},   {"mbps", t.mbps},
                    {"cpu_percent", t.cpu},        {"send_errors", t.errors},
                    {"disk_mbytes_per_s", t.disk}, {"frames", t.frames},
                    {"late_frames", t.late},       {"skipped_ticks", t.skipped},
                    {"missed_frames", t.missed}};
  if (sync) j["sync"] = SyncJson(*sync, config);
  if (sync && ticks) j["sync"]["latency_ms"] = ticks->latency_ns / 1e6;
  if (ticks) j["ticks"] = TicksJson(*ticks);
  return JsonText(j, 2) + "\n";
}

TileStats Delta(const TileStats& now, const TileStats& before) {
  TileStats d = now;
  d.bytes -= before.bytes;
  d.packets -= before.packets;
  d.disk_bytes -= before.disk_bytes;
  d.cpu_ns -= before.cpu_ns;
  d.elapsed_ns -= before.elapsed_ns;
  d.send_errors -= before.send_errors;
  d.refusals -= before.refusals;
  d.refused_resent -= before.refused_resent;
  d.late_frames -= before.late_frames;
  d.skipped_ticks -= before.skipped_ticks;
  d.ticks_seen_late -= before.ticks_seen_late;
  d.missed_frames -= before.missed_frames;
  d.frames -= before.frames;
  return d;
}

namespace {

std::string PlanTileLine(const Wall& wall, const StreamerOptions& o, const RankPlan& plan,
                         const ReadyMessage& ready, uint32_t t) {
  const WallConfig& c = wall.config;
  const TileRoute& r = c.routes[t];
  return fmt::format(
      "  tile {:<6} rank {:<3} -> {}:{}  nic {}{}{}{}{}{}\n",
      TileId::FromIndex(t, c.wall.layout).Name(), plan.rank(t), c.nodes[r.node].address, r.port,
      c.nic_label(r.nic),
      ready.numa_node != 0xffffffff ? fmt::format(" (NUMA {})", ready.numa_node) : "",
      ready.gso ? "  GSO" : "  sendmmsg",
      wall.movie && o.source != "memory" ? (ready.direct_io ? "  O_DIRECT" : "  buffered reads")
                                         : "",
      c.several_servers() ? fmt::format("  host {}", ready.host) : "",
      ready.ok && ready.doorbell_port == 0 ? "  ticks polled (no doorbell)" : "");
}

}  // namespace

std::string PlanReport(const Wall& wall, const StreamerOptions& o, const RankPlan& plan,
                       const std::vector<ReadyMessage>& ready, int world_size) {
  const WallConfig& c = wall.config;
  std::string text = fmt::format(
      "streamer: {} wall of {}x{} tiles at {} fps, MTU {} ({} packing), pacing {}, {}{}\n",
      c.wall.layout.ToString(), c.wall.tile.width, c.wall.tile.height, c.wall.fps, c.stream.mtu,
      c.stream.packing == Packing::kPacked ? "packed" : "line", c.stream.pacing ? "on" : "off",
      o.bench ? "benchmark from " + o.source : "playing",
      wall.movie ? fmt::format(", movie {} ({} frames)", wall.movie->directory, wall.movie->frames)
                 : "");
  for (uint32_t t = 0; t < c.tile_count(); ++t) text += PlanTileLine(wall, o, plan, ready[t], t);
  if (world_size - 1 > plan.tile_ranks())
    text += fmt::format("  ranks {}..{} spare: more ranks than tiles + 1\n", plan.tile_ranks() + 1,
                        world_size - 1);
  return text;
}

}  // namespace tilestream
