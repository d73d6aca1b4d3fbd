#include "common/send/wall_sender_options.h"

#include <algorithm>
#include <cmath>

namespace tilestream {

UdpSenderOptions WallSocketOptions(const WallConfig& c, uint32_t tile, uint32_t nic_index) {
  const TileRoute& route = c.routes[tile];
  const Nic& nic = c.nics[nic_index];
  UdpSenderOptions so;
  so.destination = c.nodes[route.node].address;
  so.port = route.port;
  so.source_address = nic.address;
  if (nic.name != "default") so.device = nic.name;
  so.send_buffer = c.stream.send_buffer;
  return so;
}

uint32_t HistoryFrames(const WallConfig& c) {
  if (!c.sync.timed()) return 3;
  const double intervals = 1 + static_cast<double>(c.sync.latency_bound_ns()) * c.wall.fps / 1e9;
  return std::clamp<uint32_t>(static_cast<uint32_t>(std::ceil(intervals)) + 1, 3, 32);
}

TileSenderOptions WallSenderOptions(const WallConfig& c, uint32_t tile, double phase) {
  const TileRoute& route = c.routes[tile];
  TileSenderOptions so;
  so.packetizer.tile = c.wall.tile;
  so.packetizer.max_payload = c.max_udp_payload();
  so.packetizer.packing = c.stream.packing;
  so.packetizer.payload_type = c.stream.payload_type;
  so.packetizer.ssrc = TileSsrc(tile);
  so.socket = WallSocketOptions(c, tile, route.nic);
  so.pacing = c.stream.pacing;
  so.pacing_quantum_ns = int64_t{c.stream.pacing_quantum_us} * 1000;
  so.max_burst_bytes = c.stream.max_burst_bytes;
  so.pacing_phase = phase;
  so.retransmission = route.retransmission;
  so.retransmission_share = c.stream.retransmission_share;
  so.rtx_payload_type = c.stream.rtx_payload_type;
  so.rtx_ssrc = TileRtxSsrc(tile);
  so.history_frames = HistoryFrames(c);
  return so;
}

}  // namespace tilestream
