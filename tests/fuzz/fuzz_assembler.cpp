// The frame assembler on any stream: the fuzzer's bytes edit a valid stream
// of our streamer (drop, repeat, swap, corrupt, cut, foreign packets, GRO
// message boundaries, RFC 4588 retransmissions of packets sent earlier),
// which is then received two ways: plain (every packet
// copied) and by direct placement (the kernel's scatter simulated). Neither
// may read or write outside its buffers (ASan), and both must assemble the
// same frames with the same counters. (A changed pixel byte still makes a valid packet, so a
// complete frame need not be one that was sent; the unit test checks that
// on streams damaged without editing pixels.)
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/wire/packetizer.h"
#include "tests/support/packet_builder.h"
#include "tests/support/placement_harness.h"

using namespace tilestream;
using tilestream::testing::Message;

namespace {

constexpr TileGeometry kTile{64, 16};  // 3072 bytes: 11 packets of <= 300
constexpr uint32_t kSsrc = 7, kFrames = 4, kBatch = 3;

PacketizerOptions Plan() {
  PacketizerOptions o;
  o.tile = kTile;
  o.max_payload = 300;  // the Packetizer takes 256 and up
  o.ssrc = kSsrc;
  return o;
}

std::vector<std::byte> FrameOf(uint32_t f) {
  std::vector<std::byte> frame(kTile.frame_bytes());
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = std::byte((i * 7 + f * 31) >> 2);
  return frame;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Packetizer plan = Packetizer::Create(Plan()).value();
  static const size_t kMessageBytes = 4 * plan.max_packet_size() + 50;
  static std::vector<std::vector<std::byte>> sent;  // every packet of kFrames frames
  if (sent.empty()) {
    for (uint32_t f = 0; f < kFrames; ++f) {
      const auto frame = FrameOf(f);
      for (uint32_t i = 0; i < plan.packet_count(); ++i) {
        std::vector<std::byte> p(plan.packet_size(i));
        plan.Build(i, frame, 1000 + 3000 * f, f * plan.packet_count() + i, p);
        sent.push_back(std::move(p));
      }
    }
  }
  // The fuzzer's bytes as edits of the stream.
  std::vector<std::vector<std::byte>> packets;
  std::vector<size_t> ends;  // message boundaries (packet counts)
  size_t next = 0;
  for (size_t i = 0; i < size && packets.size() < 400;) {
    const uint8_t op = data[i++];
    const uint8_t arg = i < size ? data[i] : 0;
    switch (op % 9) {
      case 0:
      case 1:  // the next packet
        if (next < sent.size()) packets.push_back(sent[next++]);
        break;
      case 2:  // lost
        next = std::min(sent.size(), next + 1);
        break;
      case 3:  // repeated
        if (!packets.empty()) packets.push_back(packets.back());
        break;
      case 4:  // swapped
        if (packets.size() >= 2)
          std::swap(packets[packets.size() - 1], packets[packets.size() - 2]);
        break;
      case 5:  // a byte changed
        if (!packets.empty() && i + 1 < size) {
          auto& p = packets.back();
          p[data[i] % p.size()] = std::byte(data[i + 1]);
          i += 2;
        }
        break;
      case 6:  // cut short, or a message ends here
        if (!packets.empty() && (arg & 1))
          packets.back().resize(1 + arg % packets.back().size());
        else
          ends.push_back(packets.size());
        ++i;
        break;
      case 8:  // a retransmission of a packet sent before (lost or not)
        if (next > 0)
          packets.push_back(testing::MakeRtx(sent[arg % next], testing::kHarnessRtxPt, 9, arg));
        ++i;
        break;
      case 7:  // a packet of raw bytes
        if (i < size) {
          const size_t n = std::min<size_t>(1 + arg % 220, size - i - 1);
          packets.emplace_back(reinterpret_cast<const std::byte*>(data + i + 1),
                               reinterpret_cast<const std::byte*>(data + i + 1 + n));
          i += 1 + n;
        }
        break;
    }
  }
  // Messages as GRO makes them: up to 4 packets of one size, the last of a
  // message may be shorter; a boundary from the input ends one too.
  std::vector<Message> messages;
  size_t boundary = 0;
  for (size_t p = 0; p < packets.size();) {
    Message m;
    const size_t seg = packets[p].size();
    uint32_t n = 0;
    while (p < packets.size() && n < 4 && packets[p].size() <= seg) {
      if (n > 0 && boundary < ends.size() && ends[boundary] == p) break;
      m.bytes.insert(m.bytes.end(), packets[p].begin(), packets[p].end());
      ++n;
      if (packets[p++].size() < seg) break;
    }
    while (boundary < ends.size() && ends[boundary] <= p) ++boundary;
    m.segment = n > 1 ? static_cast<uint16_t>(seg) : 0;
    messages.push_back(std::move(m));
  }
  const auto plain = testing::ReceivePlain(messages, kTile, kSsrc, /*rtx=*/true);
  const auto placed =
      testing::ReceivePlaced(messages, Plan(), kSsrc, kBatch, kMessageBytes, /*rtx=*/true);
  if (placed.frames != plain.frames || !testing::SameCounts(placed.stats, plain.stats))
    __builtin_trap();
  return 0;
}
