// A tile's sender as the wall's config sets it up (docs/streamer.md): the
// socket from the tile's NIC to its display node, the packetizer, pacing,
// retransmission and the history the playout latency needs. The streamer's
// tile streams and the wall's simulation (sim/) both build their senders
// with these, so that the simulation plays what the streamer would.
#pragma once

#include <cstdint>

#include "common/send/tile_sender.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// Tile's socket to its receiver, from NIC `nic_index` of c.nics.
UdpSenderOptions WallSocketOptions(const WallConfig& c, uint32_t tile, uint32_t nic_index);

// Frames a tile keeps retrievable for retransmission, the one being sent
// included: those begun within a frame interval and the playout latency
// (at most) before now, which may still be asked for; 3 without one.
uint32_t HistoryFrames(const WallConfig& c);

// Tile's sender, sending from its route's NIC; `phase` (0 to 1) spreads
// the tiles' bursts over the pacing quantum.
TileSenderOptions WallSenderOptions(const WallConfig& c, uint32_t tile, double phase);

}  // namespace tilestream
