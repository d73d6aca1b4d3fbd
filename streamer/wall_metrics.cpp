#include "streamer/wall_metrics.h"

#include <fmt/format.h>

#include <array>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/base/metrics_text.h"

namespace tilestream {
namespace {

struct TileCounter {
  const char* name;
  const char* help;
  std::function<double(const TileStats&)> value;
};

// Per tile, from its rank's last report.
void TileCounters(const WallStatusView& v, MetricsText* m) {
  const std::array<TileCounter, 12> counters{{
      {"tilestream_tile_sent_bytes_total", "UDP payload bytes sent (retransmissions included)",
       [](const TileStats& s) { return double(s.bytes); }},
      {"tilestream_tile_sent_packets_total", "RTP packets sent",
       [](const TileStats& s) { return double(s.packets); }},
      {"tilestream_tile_send_errors_total", "datagrams the kernel refused (all errnos)",
       [](const TileStats& s) { return double(s.send_errors); }},
      {"tilestream_tile_disk_read_bytes_total", "bytes read from the tile store",
       [](const TileStats& s) { return double(s.disk_bytes); }},
      {"tilestream_tile_disk_read_seconds_total", "time spent in tile store reads",
       [](const TileStats& s) { return s.disk_read_ns / 1e9; }},
      {"tilestream_tile_frames_sent_total", "frames sent",
       [](const TileStats& s) { return double(s.frames); }},
      {"tilestream_tile_frames_late_total", "frames not out before the next tick",
       [](const TileStats& s) { return double(s.late_frames); }},
      {"tilestream_tile_ticks_skipped_total", "ticks dropped because the tile was behind",
       [](const TileStats& s) { return double(s.skipped_ticks); }},
      {"tilestream_tile_frames_missed_total", "ticks with no frame from the disk in time",
       [](const TileStats& s) { return double(s.missed_frames); }},
      {"tilestream_tile_nacks_total", "retransmission requests from the receiver",
       [](const TileStats& s) { return double(s.nacks); }},
      {"tilestream_tile_retransmitted_packets_total", "packets sent again",
       [](const TileStats& s) { return double(s.retransmitted); }},
      {"tilestream_tile_cpu_seconds_total", "CPU time of the tile's rank, shared by its tiles",
       [](const TileStats& s) { return s.cpu_ns / 1e9; }},
  }};
  const WallConfig& c = v.config;
  for (const TileCounter& k : counters) {
    m->Family(k.name, "counter", k.help);
    for (uint32_t t = 0; t < c.tile_count() && t < v.latest.size(); ++t) {
      const std::string tile = TileId::FromIndex(t, c.wall.layout).Name();
      m->Sample({{"tile", tile},
                 {"nic", c.nic_label(c.routes[t].nic)},
                 {"node", c.nodes[c.routes[t].node].name}},
                k.value(v.latest[t]));
    }
  }
}

// Per tile and errno, the refusals that happened (a family with no samples
// until one does).
void RefusalCounters(const WallStatusView& v, MetricsText* m) {
  m->Family("tilestream_tile_send_refusals_total", "counter",
            "datagrams the kernel refused, by errno: each cost that datagram only, repaired "
            "like any loss");
  const WallConfig& c = v.config;
  for (uint32_t t = 0; t < c.tile_count() && t < v.latest.size(); ++t) {
    for (size_t k = 0; k < RefusalCounts::kSlots; ++k) {
      if (v.latest[t].refusals.at(k) == 0) continue;
      m->Sample({{"tile", TileId::FromIndex(t, c.wall.layout).Name()},
                 {"errno", RefusalCounts::SlotName(k)}},
                double(v.latest[t].refusals.at(k)));
    }
  }
}

// Where each tile streams from now: its configured NIC, or another while
// that one is down (NIC failover). The counters keep the configured NIC's
// label, so that a move does not start new series.
void NicRoutes(const WallStatusView& v, MetricsText* m) {
  m->Family("tilestream_tile_nic", "gauge",
            "1 for the NIC the tile streams from now; moved: 1 while its configured NIC is down");
  const WallConfig& c = v.config;
  for (uint32_t t = 0; t < c.tile_count() && t < v.latest.size(); ++t) {
    const uint32_t configured = c.routes[t].nic;
    const uint32_t now = v.latest[t].nic < c.nics.size() ? v.latest[t].nic : configured;
    m->Sample({{"tile", TileId::FromIndex(t, c.wall.layout).Name()},
               {"nic", c.nic_label(now)},
               {"configured_nic", c.nic_label(configured)},
               {"moved", now == configured ? "0" : "1"}},
              uint64_t{1});
  }
}

// What each tile's receiver said in its last report.
void ReceiverGauges(const WallStatusView& v, MetricsText* m) {
  const WallConfig& c = v.config;
  struct Gauge {
    const char* name;
    const char* type;
    const char* help;
    double (*value)(const TileRepairStats&);
  };
  static constexpr Gauge kGauges[] = {
      {"tilestream_display_tile_fps", "gauge",
       "frames the tile's display node showed in its last second",
       [](const TileRepairStats& s) { return double(s.frames); }},
      {"tilestream_display_tile_repair_rtt_seconds", "gauge",
       "the tile's smoothed round trip from asking for a lost packet to its arrival (0: none yet)",
       [](const TileRepairStats& s) { return s.rtt_us / 1e6; }},
      {"tilestream_display_tile_repair_rtt_deviation_seconds", "gauge",
       "the mean deviation of that round trip: the path's jitter",
       [](const TileRepairStats& s) { return s.rttvar_us / 1e6; }},
      {"tilestream_display_tile_requested_total", "counter",
       "lost packets the tile asked for, repeats included",
       [](const TileRepairStats& s) { return double(s.requested); }},
      {"tilestream_display_tile_late_retransmissions_total", "counter",
       "retransmissions that came after their frame was shown or given up",
       [](const TileRepairStats& s) { return double(s.late); }},
  };
  for (const Gauge& g : kGauges) {
    m->Family(g.name, g.type, g.help);
    for (uint32_t t = 0; t < v.receivers.size(); ++t) {
      if (!v.receivers[t].known) continue;
      m->Sample({{"tile", TileId::FromIndex(t, c.wall.layout).Name()},
                 {"node", c.nodes[c.routes[t].node].name}},
                g.value(v.receivers[t].stats));
    }
  }
}

void SyncMetrics(const WallStatusView& v, MetricsText* m) {
  const SyncStats& st = v.sync.stats();
  m->Family("tilestream_wall_ticks_presented_total", "counter",
            "ticks every display node showed at once (swap sync)");
  m->Sample({}, st.presented + st.partial);
  m->Family("tilestream_wall_ticks_skipped_total", "counter",
            "ticks skipped on every tile: incomplete at the deadline");
  m->Sample({}, st.skipped);
  m->Family("tilestream_wall_ticks_shed_total", "counter",
            "ticks not sent to any tile: the tile ranks had fallen behind");
  m->Sample({}, v.shedder.shed());
  m->Family("tilestream_wall_ticks_sent_ratio", "gauge",
            "the share of ticks sent while the tile ranks fall behind; 1 when they keep up");
  m->Sample({}, v.shedder.keep());
  m->Family("tilestream_sync_nodes", "gauge", "display nodes taking part in the swap sync");
  m->Sample({}, uint64_t{v.synced_nodes});
  m->Family("tilestream_sync_latency_seconds", "gauge",
            "the playout latency: a tick shows this long after its frame was sent (0: as decided)");
  m->Sample({}, v.latency_ns / 1e9);
  m->Family("tilestream_sync_node_rtt_seconds", "gauge",
            "the round trip to the display node on its sync connection (smoothed)");
  for (size_t n = 0; n < v.node_rtt.size() && n < v.config.nodes.size(); ++n)
    if (v.node_rtt[n].samples > 0)
      m->Sample({{"node", v.config.nodes[n].name}}, v.node_rtt[n].rtt_ns / 1e9);
  m->Family("tilestream_sync_tile_left_out", "gauge",
            "1 while a tile is left out of the swap sync for missing ticks in a row");
  for (uint32_t t = 0; t < v.config.tile_count(); ++t)
    m->Sample({{"tile", TileId::FromIndex(t, v.config.wall.layout).Name()}},
              uint64_t{v.sync.left_out(t) ? 1u : 0u});
  m->Family("tilestream_wall_skew_seconds", "histogram",
            "between the first and the last display node showing a tick");
  for (const double le : {0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1}) {
    const std::string bound = fmt::format("{}", le);
    m->Sample({{"le", bound}}, v.sync.skews().CountBelowNs(static_cast<int64_t>(le * 1e9)),
              "_bucket");
  }
  m->Sample({{"le", "+Inf"}}, v.sync.skews().count(), "_bucket");
  m->Sample({}, st.skew_sum_ns / 1e9, "_sum");
  m->Sample({}, v.sync.skews().count(), "_count");
}

void PlaybackMetrics(const Playback* p, MetricsText* m) {
  m->Family("tilestream_playback_frame", "gauge", "the movie frame the next tick sends");
  m->Sample({}, p ? p->frame() : uint64_t{0});
  m->Family("tilestream_playback_frames", "gauge", "frames in the movie");
  m->Sample({}, p ? p->frames() : uint64_t{0});
  m->Family("tilestream_playback_playing", "gauge", "1 playing, 0 paused or benchmark");
  m->Sample({}, uint64_t{p && p->playing() ? 1u : 0u});
  m->Family("tilestream_playback_speed", "gauge", "frames per tick; negative plays backwards");
  m->Sample({}, p ? p->speed() : 0.0);
}

// Per live source, from its status entry.
void LiveMetrics(const nlohmann::json& live, MetricsText* m) {
  struct Field {
    const char* key;
    const char* name;
    const char* type;
    const char* help;
  };
  static constexpr Field kFields[] = {
      {"receiving", "tilestream_live_receiving", "gauge", "1 while pictures come (one a second)"},
      {"slate", "tilestream_live_slate", "gauge", "1 while the slate stands for a stopped source"},
      {"frames", "tilestream_live_frames_total", "counter", "whole frames received"},
      {"pictures", "tilestream_live_pictures_total", "counter",
       "pictures converted for the tiles (frames faster than the wall coalesce)"},
      {"incomplete", "tilestream_live_frames_incomplete_total", "counter",
       "frames not received whole"},
      {"lost", "tilestream_live_lost_packets_total", "counter", "packets never received"},
      {"recovered", "tilestream_live_recovered_packets_total", "counter",
       "packets received again after a NACK"},
      {"strangers", "tilestream_live_stranger_packets_total", "counter",
       "packets of another SSRC, source or payload type"},
      {"malformed", "tilestream_live_malformed_packets_total", "counter",
       "packets that are not RTP/RFC 4175 of the stream's geometry"},
      {"kernel_drops", "tilestream_live_kernel_drops_total", "counter",
       "datagrams the kernel dropped: the socket's buffer was full"},
  };
  for (const Field& f : kFields) {
    m->Family(f.name, f.type, f.help);
    for (const nlohmann::json& s : live) {
      const nlohmann::json* v = s.contains(f.key) ? &s[f.key] : nullptr;
      if (!v) continue;
      const uint64_t value = v->is_boolean() ? uint64_t{v->get<bool>()} : v->get<uint64_t>();
      m->Sample({{"source", s.value("name", "")}}, value);
    }
  }
}

}  // namespace

std::string WallMetrics(const WallStatusView& v, const Playback* playback,
                        const nlohmann::json* live) {
  MetricsText m;
  TileCounters(v, &m);
  RefusalCounters(v, &m);
  NicRoutes(v, &m);
  ReceiverGauges(v, &m);
  SyncMetrics(v, &m);
  PlaybackMetrics(playback, &m);
  if (live && live->is_array()) LiveMetrics(*live, &m);
  return m.text();
}

}  // namespace tilestream
