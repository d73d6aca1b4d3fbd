// Test helper: one stream of messages received two ways, by a plain
// receive (every packet copied into the frame) and by direct placement
// (PacketPlacement's iovecs filled as the kernel would scatter a message
// into them, batch by batch), with what each assembled. The unit test and
// the fuzz target hold the two to the same frames and counters.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "common/receive/frame_assembler.h"
#include "common/receive/packet_placement.h"

namespace tilestream::testing {

// A message as the kernel hands it over: GRO segments of one size (the last
// may be shorter), or one plain datagram (segment size 0).
struct Message {
  std::vector<std::byte> bytes;
  uint16_t segment = 0;
};

struct Outcome {
  std::vector<std::pair<uint32_t, uint64_t>>
      frames;  // complete frames in order: timestamp, checksum
  AssemblerStats stats;
  PlacementStats placement;
};

inline uint64_t Fnv(const std::byte* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(p[i])) * 1099511628211ull;
  return h;
}

inline void RecordFrame(const FrameAssembler& a, const TileGeometry& tile, Outcome* out) {
  if (const ReadyFrame* f = a.just_finished(); f && f->complete)
    out->frames.emplace_back(f->timestamp, Fnv(f->pixels, tile.frame_bytes()));
}

// `rtx`: retransmissions of payload type kHarnessRtxPt are taken.
inline constexpr uint8_t kHarnessRtxPt = 97;
inline AssemblerOptions Options(const TileGeometry& tile, uint32_t ssrc, bool rtx) {
  AssemblerOptions o;
  o.tile = tile;
  o.ssrc = ssrc;
  if (rtx) o.rtx_payload_type = kHarnessRtxPt;
  return o;
}

// Every packet copied into the frame.
inline Outcome ReceivePlain(const std::vector<Message>& messages, const TileGeometry& tile,
                            uint32_t ssrc, bool rtx = false) {
  FrameAssembler a(Options(tile, ssrc, rtx));
  Outcome out;
  for (const Message& m : messages) {
    const size_t seg = m.segment ? m.segment : m.bytes.size();
    for (size_t at = 0; at < m.bytes.size(); at += seg) {
      if (a.Add({m.bytes.data() + at, std::min(seg, m.bytes.size() - at)}) == AddResult::kOk)
        RecordFrame(a, tile, &out);
    }
  }
  out.stats = a.stats();
  return out;
}

// The same messages received into PacketPlacement's iovecs, `batch` per
// receive, each message at most `message_bytes` (longer ones are cut, as
// the kernel would truncate them: callers keep them shorter).
inline Outcome ReceivePlaced(const std::vector<Message>& messages, const PacketizerOptions& plan,
                             uint32_t ssrc, uint32_t batch, size_t message_bytes,
                             bool rtx = false) {
  FrameAssembler a(Options(plan.tile, ssrc, rtx));
  PacketPlacement pp(Packetizer::Create(plan).value(), batch, message_bytes, true);
  std::vector<std::vector<std::byte>> buffers(batch, std::vector<std::byte>(message_bytes));
  std::vector<std::byte*> pointers;
  for (auto& b : buffers) pointers.push_back(b.data());
  std::vector<size_t> lengths(batch);
  std::vector<uint16_t> segments(batch);
  Outcome out;
  for (size_t first = 0; first < messages.size(); first += batch) {
    const auto target = a.PlacementTarget();
    pp.Prepare(target.frame, target.high_water, pointers);
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(batch, messages.size() - first));
    for (uint32_t m = 0; m < n; ++m) {  // the kernel: scatter the bytes over the iovecs
      const Message& msg = messages[first + m];
      size_t at = 0;
      for (const iovec& v : pp.message_iov(m)) {
        const size_t k = std::min(v.iov_len, msg.bytes.size() - at);
        if (k > 0)
          std::memcpy(v.iov_base, msg.bytes.data() + at, k);  // an empty message has no data()
        at += k;
      }
      lengths[m] = at;
      segments[m] = msg.segment;
    }
    pp.Resolve(n, lengths, segments);
    pp.Admit(
        a, [](uint32_t) { return nullptr; },
        [&](AddResult r) {
          if (r == AddResult::kOk) RecordFrame(a, plan.tile, &out);
        });
  }
  out.stats = a.stats();
  out.placement = pp.stats();
  return out;
}

inline bool SameCounts(const AssemblerStats& a, const AssemblerStats& b) {
  return a.packets == b.packets && a.bytes == b.bytes && a.lost == b.lost &&
         a.reordered == b.reordered && a.duplicate == b.duplicate && a.late == b.late &&
         a.foreign_ssrc == b.foreign_ssrc && a.foreign_source == b.foreign_source &&
         a.malformed == b.malformed && a.frames_complete == b.frames_complete &&
         a.frames_incomplete == b.frames_incomplete && a.retransmitted == b.retransmitted &&
         a.recovered == b.recovered && a.retransmit_late == b.retransmit_late &&
         a.frames_repaired == b.frames_repaired;
}

}  // namespace tilestream::testing
