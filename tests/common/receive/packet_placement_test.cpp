#include "common/receive/packet_placement.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "common/net/udp_socket.h"
#include "tests/support/packet_builder.h"
#include "tests/support/placement_harness.h"

namespace tilestream {
namespace {

using testing::Message;
using testing::Outcome;
using testing::PatternFrame;
using testing::ReceivePlaced;
using testing::ReceivePlain;
using testing::SameCounts;
using Bytes = std::vector<std::byte>;

const TileGeometry kTile{160, 30};  // 14,400 bytes: 10 packets of <= 1460
constexpr size_t kPayload = 1460;
constexpr uint32_t kBatch = 3;

struct Stream {
  std::map<uint32_t, uint64_t> sums;  // timestamp -> checksum of the frame sent
  std::vector<Message> messages;
};

PacketizerOptions Plan(Packing packing = Packing::kPacked, size_t payload = kPayload) {
  PacketizerOptions o;
  o.tile = kTile;
  o.max_payload = payload;
  o.packing = packing;
  o.ssrc = 7;
  return o;
}

// `frames` frames of our streamer's packets, damaged as a network and other
// senders would (losses, duplicates, reordering, foreign and broken
// packets), grouped into messages of at most `per_message` packets.
Stream MakeStream(uint64_t seed, uint32_t frames, const PacketizerOptions& plan,
                  uint32_t per_message, bool damage) {
  std::mt19937_64 rng(seed);
  auto chance = [&](double p) { return std::uniform_real_distribution<>(0, 1)(rng) < p; };
  auto packetizer = Packetizer::Create(plan).value();
  PacketizerOptions foreign_plan = plan;
  foreign_plan.ssrc = 99;
  auto foreign = Packetizer::Create(foreign_plan).value();
  Stream s;
  std::vector<Bytes> packets;
  uint32_t sequence = 65500;  // wraps
  for (uint32_t f = 0; f < frames; ++f) {
    const Bytes frame = PatternFrame(plan.tile, f + 1);
    const uint32_t ts = 1000 + 3000 * f;
    s.sums[ts] = testing::Fnv(frame.data(), frame.size());
    for (uint32_t i = 0; i < packetizer.packet_count(); ++i) {
      Bytes p(packetizer.packet_size(i));
      packetizer.Build(i, frame, ts, sequence++, p);
      if (damage && chance(0.04)) continue;  // lost
      if (damage && chance(0.02)) {          // another sender's packet first
        Bytes q(foreign.packet_size(i));
        foreign.Build(i, PatternFrame(plan.tile, 1000 + f), ts, sequence, q);
        packets.push_back(q);
      }
      if (damage && chance(0.02)) p[0] = std::byte{0x40};  // version 1: malformed
      if (damage && chance(0.02)) p.resize(p.size() / 2);  // truncated
      packets.push_back(p);
      if (damage && chance(0.03)) packets.push_back(p);  // duplicate
    }
  }
  for (size_t i = 0; damage && i + 1 < packets.size(); ++i)
    if (chance(0.04)) std::swap(packets[i], packets[i + 1]);  // reordered
  for (size_t i = 0; i < packets.size();) {
    Message m;
    const size_t size = packets[i].size();
    const uint32_t want =
        damage ? std::uniform_int_distribution<uint32_t>(1, per_message)(rng) : per_message;
    uint32_t n = 0;
    while (i < packets.size() && n < want && packets[i].size() <= size) {
      m.bytes.insert(m.bytes.end(), packets[i].begin(), packets[i].end());
      ++n;
      if (packets[i++].size() < size) break;  // a shorter segment ends a GRO message
    }
    m.segment = n > 1 || !damage ? static_cast<uint16_t>(size) : 0;
    s.messages.push_back(std::move(m));
  }
  return s;
}

Outcome Plain(const Stream& s, const TileGeometry& tile = kTile) {
  return ReceivePlain(s.messages, tile, 7);
}

Outcome Placed(const Stream& s, const PacketizerOptions& plan, size_t message_bytes) {
  return ReceivePlaced(s.messages, plan, 7, kBatch, message_bytes);
}

void ExpectSameOutcome(const Outcome& placed, const Outcome& plain, const Stream& s) {
  EXPECT_EQ(placed.frames, plain.frames);
  for (const auto& [ts, sum] : placed.frames)
    EXPECT_EQ(sum, s.sums.at(ts)) << "frame " << ts << " is not the one sent";
  EXPECT_TRUE(SameCounts(placed.stats, plain.stats))
      << "placed: " << placed.stats.packets << " packets, " << placed.stats.lost
      << " lost; plain: " << plain.stats.packets << ", " << plain.stats.lost;
}

constexpr size_t kFourPackets = 4 * kPayload + 100;  // messages of up to 4 packets

TEST(PacketPlacement, ACleanStreamIsReceivedInPlaceFrameExact) {
  const Stream s = MakeStream(1, 20, Plan(), 4, false);
  const Outcome placed = Placed(s, Plan(), kFourPackets);
  ExpectSameOutcome(placed, Plain(s), s);
  EXPECT_EQ(placed.frames.size(), 20u);
  // Each frame's last packet is shorter (never predicted), and the message
  // after a frame's short last one is mispredicted once.
  EXPECT_GE(placed.placement.placed, placed.stats.packets * 7 / 10);
}

TEST(PacketPlacement, LossReorderDuplicatesAndForeignPacketsGiveTheFramesAndCountsOfAPlainReceive) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    const Stream s = MakeStream(seed, 12, Plan(), 4, true);
    ExpectSameOutcome(Placed(s, Plan(), kFourPackets), Plain(s), s);
    if (HasFailure()) break;
  }
}

TEST(PacketPlacement, LinePackingIsPlacedToo) {
  const Stream s = MakeStream(3, 10, Plan(Packing::kLine), 4, true);
  const Outcome placed = Placed(s, Plan(Packing::kLine), kFourPackets);
  ExpectSameOutcome(placed, Plain(s), s);
  EXPECT_GT(placed.placement.placed, 0u);
}

TEST(PacketPlacement, AStreamOfAnotherPlanIsGatheredBackAndAssembledAsUsual) {
  // The receiver expects 1000-byte packets; the sender's are 1460 bytes, so
  // no packet is where predicted.
  const Stream s = MakeStream(4, 10, Plan(), 4, true);
  const Outcome placed = Placed(s, Plan(Packing::kPacked, 1000), kFourPackets);
  ExpectSameOutcome(placed, Plain(s), s);
  EXPECT_EQ(placed.placement.placed, 0u);
  EXPECT_GT(placed.placement.gathered, 0u);
}

TEST(PacketPlacement, AMessageIsPredictedAsOneGsoSendWhereTheBufferWouldHoldMore) {
  // Packets of about 8,190 bytes (MTU 8,218): a GSO send groups 7 of them
  // (65,507 bytes at most), a 64 KiB receive buffer would hold 8.
  PacketizerOptions plan = Plan(Packing::kPacked, 8192);
  plan.tile = {640, 240};
  const size_t packet = Packetizer::Create(plan).value().packet_size(0);
  const uint32_t per_send = GsoSegmentsPerSend(packet);
  ASSERT_NE(per_send, 65536 / packet) << "packet of " << packet << " bytes";
  const Stream s = MakeStream(5, 10, plan, per_send, false);
  const Outcome placed = Placed(s, plan, 65536);
  ExpectSameOutcome(placed, Plain(s, plan.tile), s);
  EXPECT_EQ(placed.frames.size(), 10u);
  EXPECT_GE(placed.placement.placed, placed.stats.packets * 8 / 10);
}

}  // namespace
}  // namespace tilestream
