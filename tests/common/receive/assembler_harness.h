// What the frame assembler's tests share: a small tile, our streamer's
// packets of it, an assembler to feed them to.
#pragma once

#include <algorithm>
#include <vector>

#include "common/receive/frame_assembler.h"
#include "common/wire/packetizer.h"

namespace tilestream {

inline const TileGeometry kTile{100, 20};  // 6000 bytes: 5 packets of 1460 at MTU 1500

using Packets = std::vector<std::vector<std::byte>>;

// Our streamer's plan of the tile.
inline Packetizer Plan(uint32_t ssrc = 7) {
  PacketizerOptions o;
  o.tile = kTile;
  o.max_payload = 1460;
  o.ssrc = ssrc;
  return Packetizer::Create(o).value();
}

// The packets of one frame as our streamer sends them.
inline Packets FramePackets(const std::vector<std::byte>& frame, uint32_t timestamp,
                            uint32_t first_sequence, uint32_t ssrc = 7) {
  const Packetizer plan = Plan(ssrc);
  Packets out;
  for (uint32_t i = 0; i < plan.packet_count(); ++i) {
    std::vector<std::byte> packet(plan.packet_size(i));
    plan.Build(i, frame, timestamp, first_sequence + i, packet);
    out.push_back(std::move(packet));
  }
  return out;
}

inline void AddAll(FrameAssembler& a, const Packets& packets) {
  for (const auto& p : packets) a.Add(p);
}

inline bool Shows(const ReadyFrame& r, const std::vector<std::byte>& frame) {
  return std::equal(frame.begin(), frame.end(), r.pixels);
}

inline FrameAssembler Make(bool partial = false) {
  AssemblerOptions o;
  o.tile = kTile;
  o.show_partial = partial;
  return FrameAssembler(o);
}

}  // namespace tilestream
