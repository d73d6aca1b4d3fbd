#include "common/packet_placement.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "tests/support/packet_builder.h"

namespace tilestream {
namespace {

using testing::PatternFrame;
using Bytes = std::vector<std::byte>;

const TileGeometry kTile{160, 30};  // 14,400 bytes: 10 packets of <= 1460
constexpr size_t kPayload = 1460;
constexpr uint32_t kBatch = 3;

// A message as the kernel hands it over: GRO segments of one size (the last
// may be shorter), or one plain datagram (segment size 0).
struct Message {
  Bytes bytes;
  uint16_t segment = 0;
};

struct Stream {
  std::map<uint32_t, uint64_t> sums;  // timestamp -> checksum of the frame sent
  std::vector<Message> messages;
};

uint64_t Sum(const std::byte* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(p[i])) * 1099511628211ull;
  return h;
}

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
Stream MakeStream(uint64_t seed, uint32_t frames, const PacketizerOptions& plan, uint32_t per_message,
                  bool damage) {
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
    const Bytes frame = PatternFrame(kTile, f + 1);
    const uint32_t ts = 1000 + 3000 * f;
    s.sums[ts] = Sum(frame.data(), frame.size());
    for (uint32_t i = 0; i < packetizer.packet_count(); ++i) {
      Bytes p(packetizer.packet_size(i));
      packetizer.Build(i, frame, ts, sequence++, p);
      if (damage && chance(0.04)) continue;                  // lost
      if (damage && chance(0.02)) {                          // another sender's packet first
        Bytes q(foreign.packet_size(i));
        foreign.Build(i, PatternFrame(kTile, 1000 + f), ts, sequence, q);
        packets.push_back(q);
      }
      if (damage && chance(0.02)) p[0] = std::byte{0x40};    // version 1: malformed
      if (damage && chance(0.02)) p.resize(p.size() / 2);   // truncated
      packets.push_back(p);
      if (damage && chance(0.03)) packets.push_back(p);     // duplicate
    }
  }
  for (size_t i = 0; damage && i + 1 < packets.size(); ++i)
    if (chance(0.04)) std::swap(packets[i], packets[i + 1]);  // reordered
  for (size_t i = 0; i < packets.size();) {
    Message m;
    const size_t size = packets[i].size();
    const uint32_t want = damage ? std::uniform_int_distribution<uint32_t>(1, per_message)(rng) : per_message;
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

struct Outcome {
  std::vector<std::pair<uint32_t, uint64_t>> frames;  // complete frames in order: timestamp, checksum
  AssemblerStats stats;
};

void OnFrame(const FrameAssembler& a, Outcome* out) {
  if (const ReadyFrame* f = a.just_finished(); f && f->complete)
    out->frames.emplace_back(f->timestamp, Sum(f->pixels, kTile.frame_bytes()));
}

// Every packet copied into the frame (the plain receive).
Outcome Plain(const Stream& s) {
  AssemblerOptions o;
  o.tile = kTile;
  o.ssrc = 7;
  FrameAssembler a(o);
  Outcome out;
  for (const Message& m : s.messages) {
    const size_t seg = m.segment ? m.segment : m.bytes.size();
    for (size_t at = 0; at < m.bytes.size(); at += seg) {
      if (a.Add({m.bytes.data() + at, std::min(seg, m.bytes.size() - at)}) == AddResult::kOk) OnFrame(a, &out);
    }
  }
  out.stats = a.stats();
  return out;
}

// The same messages received as the kernel would into PacketPlacement's
// iovecs, batch by batch.
Outcome Placed(const Stream& s, const PacketizerOptions& plan, size_t message_bytes, PlacementStats* placement) {
  AssemblerOptions o;
  o.tile = kTile;
  o.ssrc = 7;
  FrameAssembler a(o);
  PacketPlacement pp(Packetizer::Create(plan).value(), kBatch, message_bytes, true);
  std::vector<Bytes> buffers(kBatch, Bytes(message_bytes));
  std::vector<std::byte*> pointers;
  for (Bytes& b : buffers) pointers.push_back(b.data());
  Outcome out;
  for (size_t first = 0; first < s.messages.size(); first += kBatch) {
    const auto target = a.PlacementTarget();
    pp.Prepare(target.frame, target.high_water, pointers);
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(kBatch, s.messages.size() - first));
    std::vector<size_t> lengths(n);
    std::vector<uint16_t> segments(n);
    for (uint32_t m = 0; m < n; ++m) {  // the kernel: scatter the bytes over the iovecs
      const Message& msg = s.messages[first + m];
      size_t at = 0;
      for (const iovec& v : pp.message_iov(m)) {
        const size_t k = std::min(v.iov_len, msg.bytes.size() - at);
        std::memcpy(v.iov_base, msg.bytes.data() + at, k);
        at += k;
      }
      EXPECT_EQ(at, msg.bytes.size());
      lengths[m] = msg.bytes.size();
      segments[m] = msg.segment;
    }
    pp.Resolve(n, lengths, segments);
    pp.Admit(a, [](uint32_t) { return nullptr; }, [&](AddResult r) {
      if (r == AddResult::kOk) OnFrame(a, &out);
    });
  }
  out.stats = a.stats();
  *placement = pp.stats();
  return out;
}

void ExpectSameOutcome(const Outcome& placed, const Outcome& plain, const Stream& s) {
  EXPECT_EQ(placed.frames, plain.frames);
  for (const auto& [ts, sum] : placed.frames) EXPECT_EQ(sum, s.sums.at(ts)) << "frame " << ts << " is not the one sent";
  const AssemblerStats &a = placed.stats, &b = plain.stats;
  EXPECT_EQ(a.packets, b.packets);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.lost, b.lost);
  EXPECT_EQ(a.reordered, b.reordered);
  EXPECT_EQ(a.duplicate, b.duplicate);
  EXPECT_EQ(a.late, b.late);
  EXPECT_EQ(a.foreign_ssrc, b.foreign_ssrc);
  EXPECT_EQ(a.malformed, b.malformed);
  EXPECT_EQ(a.frames_complete, b.frames_complete);
  EXPECT_EQ(a.frames_incomplete, b.frames_incomplete);
}

constexpr size_t kFourPackets = 4 * kPayload + 100;  // messages of up to 4 packets

TEST(PacketPlacement, ACleanStreamIsReceivedInPlaceFrameExact) {
  const Stream s = MakeStream(1, 20, Plan(), 4, false);
  PlacementStats placement;
  const Outcome placed = Placed(s, Plan(), kFourPackets, &placement);
  ExpectSameOutcome(placed, Plain(s), s);
  EXPECT_EQ(placed.frames.size(), 20u);
  // Each frame's last packet is shorter (never predicted), and the message
  // after a frame's short last one is mispredicted once.
  EXPECT_GE(placement.placed, placed.stats.packets * 7 / 10);
}

TEST(PacketPlacement, LossReorderDuplicatesAndForeignPacketsGiveTheFramesAndCountsOfAPlainReceive) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    const Stream s = MakeStream(seed, 12, Plan(), 4, true);
    PlacementStats placement;
    ExpectSameOutcome(Placed(s, Plan(), kFourPackets, &placement), Plain(s), s);
    if (HasFailure()) break;
  }
}

TEST(PacketPlacement, LinePackingIsPlacedToo) {
  const Stream s = MakeStream(3, 10, Plan(Packing::kLine), 4, true);
  PlacementStats placement;
  ExpectSameOutcome(Placed(s, Plan(Packing::kLine), kFourPackets, &placement), Plain(s), s);
  EXPECT_GT(placement.placed, 0u);
}

TEST(PacketPlacement, AStreamOfAnotherPlanIsGatheredBackAndAssembledAsUsual) {
  // The sender uses MTU 1500, the receiver expects 9000-byte packets' plan
  // at a smaller size: no packet is where predicted.
  const Stream s = MakeStream(4, 10, Plan(), 4, true);
  PlacementStats placement;
  ExpectSameOutcome(Placed(s, Plan(Packing::kPacked, 1000), kFourPackets, &placement), Plain(s), s);
  EXPECT_EQ(placement.placed, 0u);
}

}  // namespace
}  // namespace tilestream
