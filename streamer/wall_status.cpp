#include "streamer/wall_status.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace tilestream {
namespace {

nlohmann::json TileStatus(const WallStatusView& v, uint32_t t) {
  const WallConfig& c = v.config;
  const uint32_t configured = c.routes[t].nic;
  const uint32_t now =
      t < v.latest.size() && v.latest[t].nic < c.nics.size() ? v.latest[t].nic : configured;
  nlohmann::json tile{{"tile", TileId::FromIndex(t, c.wall.layout).Name()},
                      {"rank", v.plan.rank(t)},
                      {"nic", c.nic_label(now)},
                      {"node", c.nodes[c.routes[t].node].name}};
  if (now != configured)  // NIC failover
    tile["nic_why"] = fmt::format("{} is down", c.nic_label(configured));
  if (t < v.last_second.size()) {
    const StreamSummary& s = v.last_second[t];
    tile["gbps"] = s.mbps / 1000;
    tile["disk_mbytes_per_s"] = s.disk_mbytes_per_s;
    tile["send_errors"] = v.latest[t].send_errors;
    tile["send_refusals"] = v.latest[t].refusals.Text();
    tile["late_frames"] = v.latest[t].late_frames;
  }
  if (t < v.receivers.size() && v.receivers[t].known) {
    const TileRepairStats& r = v.receivers[t].stats;
    tile["receiver"] = {{"fps", r.frames},
                        {"lost", r.lost},
                        {"incomplete", r.incomplete},
                        {"rtt_ms", r.rtt_us / 1e3},
                        {"jitter_ms", r.rttvar_us / 1e3},
                        {"requested", r.requested},
                        {"late_retransmissions", r.late}};
  }
  return tile;
}

}  // namespace

void AddWallStatus(const WallStatusView& v, nlohmann::json* out) {
  nlohmann::json& j = *out;
  const SyncStats& st = v.sync.stats();
  j["sync"] = {{"enabled", v.config.sync.enabled},   {"nodes", v.synced_nodes},
               {"shown", st.presented + st.partial}, {"skipped", st.skipped},
               {"skew_mean_ms", st.skew_mean_ms()},  {"skew_max_ms", st.skew_max_ns / 1e6}};
  nlohmann::json left_out = nlohmann::json::array();
  for (uint32_t t = 0; t < v.config.tile_count(); ++t)
    if (v.sync.left_out(t)) left_out.push_back(TileId::FromIndex(t, v.config.wall.layout).Name());
  j["sync"]["left_out"] = left_out;  // missed ticks in a row: the wall plays on without them
  j["sync"]["latency_ms"] = v.latency_ns / 1e6;
  const bool led = v.leader >= 0 && static_cast<size_t>(v.leader) < v.config.nodes.size();
  j["sync"]["decided_by"] = led ? v.config.nodes[static_cast<size_t>(v.leader)].name : "server";
  nlohmann::json rtt = nlohmann::json::object();
  for (size_t n = 0; n < v.node_rtt.size() && n < v.config.nodes.size(); ++n)
    if (v.node_rtt[n].samples > 0)
      rtt[v.config.nodes[n].name] = {{"rtt_ms", v.node_rtt[n].rtt_ns / 1e6},
                                     {"jitter_ms", v.node_rtt[n].rttvar_ns / 1e6}};
  j["sync"]["nodes_rtt"] = rtt;
  nlohmann::json refused = nlohmann::json::object();
  for (size_t n = 0; n < v.node_refusals.size() && n < v.config.nodes.size(); ++n)
    if (!v.node_refusals[n].empty()) refused[v.config.nodes[n].name] = v.node_refusals[n];
  j["sync"]["refused"] = refused;  // nodes refused at their join, and why
  j["shed"] = {{"ticks", v.shedder.shed()}, {"share_sent", v.shedder.keep()}};
  j["tiles"] = nlohmann::json::array();
  for (uint32_t t = 0; t < v.config.tile_count(); ++t) j["tiles"].push_back(TileStatus(v, t));
}

}  // namespace tilestream
