#include "receiver/node_setup.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "common/receive/wall_assembler_options.h"
#include "common/wall/token_file.h"
#include "receiver/tile_source.h"

namespace tilestream {
namespace {

int FindNode(const WallConfig& c, const std::string& name, NodeParts* p) {
  for (uint32_t n = 0; n < c.nodes.size(); ++n)
    if (c.nodes[n].name == name) p->node = &c.nodes[n], p->node_index = n;
  if (p->node) return 0;
  std::string names;
  for (const DisplayNode& n : c.nodes) names += (names.empty() ? "" : ", ") + n.name;
  spdlog::error("{}: no display node '{}' (the nodes are: {})", c.source, name, names);
  return 2;
}

int OpenLog(const std::string& path, std::unique_ptr<std::FILE, int (*)(std::FILE*)>* log) {
  if (path.empty()) return 0;
  log->reset(std::fopen(path.c_str(), "w"));
  if (*log) return 0;
  spdlog::error("cannot write {}", path);
  return 2;
}

int MakeSyncClient(const WallConfig& c, const NodeReceiverOptions& o, NodeParts* p) {
  if (!c.sync.enabled || !o.sync) return 0;
  SyncClientOptions so;
  so.address = c.control.client_address();
  so.port = c.control.port;
  so.node = p->node->name;
  so.tile = c.wall.tile;
  if (!c.control.token_file.empty()) {
    auto token = ReadToken(c.control.token_file);
    if (!token.ok()) {
      spdlog::error("{}", token.status().message());
      return 2;
    }
    so.token = *token;
  }
  p->sync = std::make_unique<SyncClient>(std::move(so));
  return 0;
}

// Where tile t's stream is received and what is done with each frame.
TileReceiverOptions TileOptions(const WallConfig& c, const NodeReceiverOptions& o, uint32_t t,
                                const TileSource& source, NodeParts* p) {
  TileReceiverOptions to;
  to.tile_index = t;
  to.assembler = WallAssemblerOptions(
      c, t, p->sync != nullptr, o.retransmission && source.ours && c.routes[t].retransmission);
  to.assembler.ssrc = source.ssrc;  // ours, or a third party's
  to.assembler.payload_type = source.payload_type;
  to.assembler.show_partial = to.assembler.show_partial || o.show_partial;
  if (p->sync) {
    to.on_complete = [s = p->sync.get()](uint32_t tile, uint32_t ts) {
      s->ReportComplete(tile, ts);
    };
    to.rtt_hint = p->sync->rtt();
  }
  PacketizerOptions plan;  // what our streamer sends: pixels go straight to their place
  plan.tile = c.wall.tile;
  plan.max_payload = c.max_udp_payload();
  plan.packing = c.stream.packing;
  if (o.placement && source.ours) to.plan = plan;
  to.socket.bind_address = p->node->address;
  to.socket.port = c.routes[t].port;
  to.socket.receive_buffer = c.stream.receive_buffer;
  // Our stream comes from its server's NICs: its own, or another while
  // that one is down (docs/streamer.md, "NIC failover"). A NIC without an
  // address lets any host send.
  for (const Nic& nic : c.nics) {
    if (nic.server != c.routes[t].server || !source.ours) continue;
    auto from = SocketAddress::Resolve(nic.address, 0);
    if (nic.address.empty() || !from.ok()) {
      to.expected_sources.clear();
      break;
    }
    to.expected_sources.push_back(*from);
  }
  if (p->frame_log) {
    to.on_frame = [mu = &p->frame_log_mu, f = p->frame_log.get()](uint32_t tile, uint32_t ts,
                                                                  uint64_t sum) {
      std::lock_guard lock(*mu);
      fmt::print(f, "{} {} {:016x}\n", tile, ts, sum);
      std::fflush(f);  // a line per frame: readable while it runs
    };
  }
  return to;
}

int OpenTiles(const WallConfig& c, const NodeReceiverOptions& o, NodeParts* p) {
  for (uint32_t t = 0; t < c.tile_count(); ++t) {
    if (c.routes[t].node != p->node_index) continue;
    auto source = ResolveTileSource(c, t);
    if (!source.ok()) {
      spdlog::error("{}", source.status().message());
      return 2;
    }
    auto r = TileReceiver::Open(TileOptions(c, o, t, *source, p));
    if (!r.ok()) {
      spdlog::error("tile {}: {}:{}: {}", TileId::FromIndex(t, c.wall.layout).Name(),
                    p->node->address, c.routes[t].port, r.status().message());
      return 1;
    }
    p->tiles.push_back(std::move(r).value());
    p->indices.push_back(t);
  }
  return 0;
}

int OpenDisplay(const WallConfig& c, const NodeReceiverOptions& o, NodeParts* p) {
  if (o.display.mode == DisplayMode::kHeadless) return 0;
  auto d = NodeDisplay::Create(c, p->node_index, p->indices, o.display);
  if (!d.ok()) {
    spdlog::error("{}", d.status().message());
    return 1;
  }
  p->display = std::move(d).value();
  return 0;
}

}  // namespace

int SetUpNode(const WallConfig& c, const NodeReceiverOptions& o, NodeParts* p) {
  int code = FindNode(c, o.node, p);
  if (code == 0) code = OpenLog(o.frame_log, &p->frame_log);
  if (code == 0) code = OpenLog(o.present_log, &p->present_log);
  if (code == 0) code = MakeSyncClient(c, o, p);
  if (code == 0) code = OpenTiles(c, o, p);
  if (code == 0) code = OpenDisplay(c, o, p);
  return code;
}

void PrintNodeStart(const WallConfig& c, const NodeParts& p) {
  fmt::print("receiver: node {} ({}), {} tiles of {}x{}, {}, {}\n", p.node->name, p.node->address,
             p.tiles.size(), c.wall.tile.width, c.wall.tile.height,
             p.display ? p.display->Describe() : "headless",
             p.sync ? fmt::format("swap sync via {}:{}", c.control.client_address(), c.control.port)
                    : "no swap sync");
  for (size_t i = 0; i < p.tiles.size(); ++i)
    fmt::print("  tile {:<6} <- {}:{}\n", TileId::FromIndex(p.indices[i], c.wall.layout).Name(),
               p.node->address, c.routes[p.indices[i]].port);
  std::fflush(stdout);
}

}  // namespace tilestream
