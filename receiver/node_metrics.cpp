#include "receiver/node_metrics.h"

#include <fmt/format.h>

#include <functional>

#include "common/base/metrics_text.h"
#include "common/control/http_listener.h"

namespace tilestream {
namespace {

struct TileCounter {
  const char* name;
  const char* help;
  std::function<uint64_t(const TileReceiverStats&)> value;
};

const std::vector<TileCounter>& TileCounters() {
  static const std::vector<TileCounter> counters{
      {"tilestream_receiver_received_bytes_total", "UDP payload bytes received",
       [](const TileReceiverStats& s) { return s.socket.bytes; }},
      {"tilestream_receiver_received_packets_total", "datagrams received",
       [](const TileReceiverStats& s) { return s.socket.datagrams; }},
      {"tilestream_receiver_lost_packets_total", "sequence numbers never seen",
       [](const TileReceiverStats& s) { return s.assembler.lost; }},
      {"tilestream_receiver_reordered_packets_total", "packets after a higher sequence number",
       [](const TileReceiverStats& s) { return s.assembler.reordered; }},
      {"tilestream_receiver_duplicate_packets_total", "packets received twice",
       [](const TileReceiverStats& s) { return s.assembler.duplicate; }},
      {"tilestream_receiver_late_packets_total", "packets of a frame already gone",
       [](const TileReceiverStats& s) { return s.assembler.late; }},
      {"tilestream_receiver_foreign_packets_total", "packets of another sender (SSRC or source)",
       [](const TileReceiverStats& s) {
         return s.assembler.foreign_ssrc + s.assembler.foreign_source;
       }},
      {"tilestream_receiver_frames_complete_total", "frames with every pixel",
       [](const TileReceiverStats& s) { return s.assembler.frames_complete; }},
      {"tilestream_receiver_frames_incomplete_total", "frames given up with pixels missing",
       [](const TileReceiverStats& s) { return s.assembler.frames_incomplete; }},
      {"tilestream_receiver_kernel_drops_total", "drops of the socket buffer (the kernel's count)",
       [](const TileReceiverStats& s) { return s.socket.kernel_drops; }},
      {"tilestream_receiver_catch_ups_total",
       "times the tile, over two frames behind, threw its socket's queue away",
       [](const TileReceiverStats& s) { return s.socket.catch_ups; }},
      {"tilestream_receiver_retransmitted_packets_total", "retransmissions received",
       [](const TileReceiverStats& s) { return s.assembler.retransmitted; }},
      {"tilestream_receiver_recovered_packets_total", "retransmissions that filled a gap",
       [](const TileReceiverStats& s) { return s.assembler.recovered; }},
      {"tilestream_receiver_nacks_total", "retransmission requests sent",
       [](const TileReceiverStats& s) { return s.loss.nacks; }},
  };
  return counters;
}

void NodeCounters(const NodeMetricsView& v, MetricsText* m) {
  const MetricLabels node{{"node", v.node}};
  m->Family("tilestream_receiver_ticks_shown_total", "counter",
            "swap-sync ticks this node showed (whole or partial)");
  m->Sample(node, v.shown.shown_ticks());
  m->Family("tilestream_receiver_ticks_skipped_total", "counter",
            "swap-sync ticks skipped on every tile");
  m->Sample(node, v.shown.skipped);
  m->Family("tilestream_receiver_fps", "gauge", "frames shown in the last second");
  m->Sample(node, v.fps);
}

}  // namespace

std::string NodeMetricsText(const NodeMetricsView& v) {
  MetricsText m;
  for (const TileCounter& k : TileCounters()) {
    m.Family(k.name, "counter", k.help);
    for (size_t i = 0; i < v.tiles.size(); ++i)
      m.Sample({{"tile", v.tile_names[i]}, {"node", v.node}}, k.value(v.tiles[i]));
  }
  m.Family("tilestream_receiver_malformed_packets_total", "counter",
           "packets refused as malformed, by reason");
  for (size_t i = 0; i < v.tiles.size(); ++i) {
    for (size_t r = 1; r < static_cast<size_t>(ParseError::kCount); ++r) {
      m.Sample({{"tile", v.tile_names[i]},
                {"node", v.node},
                {"reason", ParseErrorName(static_cast<ParseError>(r))}},
               v.tiles[i].assembler.malformed[r]);
    }
  }
  NodeCounters(v, &m);
  return m.text();
}

Result<std::unique_ptr<NodeMetrics>> NodeMetrics::Start(
    const WallConfig& c, uint32_t node, const std::vector<std::unique_ptr<TileReceiver>>* tiles,
    std::vector<std::string> names) {
  const uint16_t port = c.http.node_port(node);
  if (port == 0) return std::unique_ptr<NodeMetrics>();
  auto o =
      HttpListenerOptions(c, fmt::format("metrics listener (http.node_port_base in {})", c.source),
                          c.http.node_listen_address, port);
  if (!o.ok()) return o.status();
  std::unique_ptr<NodeMetrics> m(new NodeMetrics(c.nodes[node].name, tiles, std::move(names)));
  NodeMetrics* self = m.get();
  o->counters = &m->counters_;
  auto service = HttpService::Start(
      *o, {{"GET", "/metrics", [self](const HttpRequest&) {
              return HttpReply{200, std::string(MetricsText::kContentType), self->Text()};
            }}});
  if (!service.ok()) return service.status();
  m->service_ = std::move(service).value();
  return m;
}

void NodeMetrics::SetShown(const PresentCounts& counts, uint64_t fps) {
  std::lock_guard lock(mu_);
  shown_ = counts;
  fps_ = fps;
}

std::string NodeMetrics::Text() const {
  NodeMetricsView v;
  v.node = node_;
  v.tile_names = names_;
  for (const auto& t : tiles_) v.tiles.push_back(t->Snapshot());
  {
    std::lock_guard lock(mu_);
    v.shown = shown_;
    v.fps = fps_;
  }
  std::string text = NodeMetricsText(v);
  MetricsText listener;
  AppendHttpMetrics(counters_, {{"listener", "node"}, {"node", node_}}, &listener);
  return text + listener.text();
}

}  // namespace tilestream
