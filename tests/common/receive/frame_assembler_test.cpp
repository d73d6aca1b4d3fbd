#include "common/receive/frame_assembler.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "common/wire/packetizer.h"
#include "common/wire/rtcp_feedback.h"
#include "tests/common/receive/assembler_harness.h"
#include "tests/support/packet_builder.h"

namespace tilestream {
namespace {

using testing::Craft;
using testing::CraftedPacket;
using testing::PatternFrame;

TEST(FrameAssembler, AssemblesACompleteFrame) {
  FrameAssembler a = Make();
  const auto f = PatternFrame(kTile, 1);
  AddAll(a, FramePackets(f, 1000, 0));
  auto r = a.TakeReady();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->complete);
  EXPECT_EQ(r->timestamp, 1000u);
  EXPECT_TRUE(Shows(*r, f));
  EXPECT_EQ(a.stats().frames_complete, 1u);
  EXPECT_EQ(a.stats().lost, 0u);
  EXPECT_EQ(a.stats().bytes, kTile.frame_bytes());
  EXPECT_FALSE(a.TakeReady().has_value());  // once
}

// A live source's frame of YCbCr 4:2:2 (docs/live.md), as another sender
// packs it: a line a packet, the marker on the last.
TEST(FrameAssembler, AssemblesAYCbCr422FrameOfAnotherSendersPackets) {
  for (const Sampling sampling : {Sampling::kYCbCr422_8, Sampling::kYCbCr422_10}) {
    const TileGeometry tile{100, 20, sampling};
    AssemblerOptions o;
    o.tile = tile;
    FrameAssembler a(o);
    const auto f = PatternFrame(tile, 4);
    const auto line_packets = [&](uint32_t timestamp, uint32_t first_sequence) {
      Packets out;
      for (uint16_t line = 0; line < tile.height; ++line) {
        CraftedPacket p;
        p.sequence = first_sequence + line;
        p.timestamp = timestamp;
        p.marker = line + 1u == tile.height;
        p.segments = {{line, 0, static_cast<uint16_t>(tile.row_bytes())}};
        out.push_back(Craft(p, tile, f));
      }
      return out;
    };
    AddAll(a, line_packets(1000, 0));
    auto r = a.TakeReady();
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(r->complete);
    EXPECT_TRUE(Shows(*r, f));
    Packets second = line_packets(4000, 20);
    second.erase(second.begin() + 7);
    AddAll(a, second);
    EXPECT_FALSE(a.TakeReady().has_value());
    EXPECT_EQ(a.stats().frames_incomplete, 1u);
    EXPECT_EQ(a.stats().lost, 1u);
    EXPECT_EQ(a.stats().frames_wrong_geometry, 0u);
  }
}

TEST(FrameAssembler, HoldsPreviousFrameWhenPacketLost) {
  FrameAssembler a = Make();
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  AddAll(a, FramePackets(f1, 1000, 0));
  auto first = a.TakeReady();
  Packets p2 = FramePackets(f2, 4600, 5);
  p2.erase(p2.begin() + 2);
  AddAll(a, p2);
  EXPECT_FALSE(a.TakeReady().has_value());  // nothing new to show
  EXPECT_TRUE(Shows(*first, f1));           // the previous picture is intact
  EXPECT_EQ(a.stats().frames_incomplete, 1u);
  EXPECT_EQ(a.stats().lost, 1u);
}

TEST(FrameAssembler, ShowsPartialFramesOverThePreviousPictureByPolicy) {
  FrameAssembler a = Make(/*partial=*/true);
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  AddAll(a, FramePackets(f1, 1000, 0));
  a.TakeReady();
  Packets p2 = FramePackets(f2, 4600, 5);
  p2.erase(p2.begin() + 1);  // packet 1 of 5 missing
  AddAll(a, p2);
  auto r = a.TakeReady();
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->pixels[0], f2[0]);        // from packet 0 of the new frame
  EXPECT_EQ(r->pixels[1500], f1[1500]);  // packet 1's region: the old picture
}

TEST(FrameAssembler, CountsReorderedPacketsNotAsLoss) {
  FrameAssembler a = Make();
  const auto f = PatternFrame(kTile, 3);
  Packets p = FramePackets(f, 1000, 0);
  std::swap(p[2], p[3]);  // once the stream is believed (its start is on probation)
  AddAll(a, p);
  EXPECT_EQ(a.stats().reordered, 1u);
  EXPECT_EQ(a.stats().lost, 0u);
  EXPECT_TRUE(a.TakeReady()->complete);
}

TEST(FrameAssembler, DropsDuplicates) {
  FrameAssembler a = Make();
  const auto f = PatternFrame(kTile, 4);
  Packets p = FramePackets(f, 1000, 0);
  p.insert(p.begin() + 2, p[1]);
  std::vector<AddResult> results;
  for (const auto& q : p) results.push_back(a.Add(q));
  EXPECT_EQ(results[2], AddResult::kDuplicate);
  EXPECT_EQ(a.stats().duplicate, 1u);
  EXPECT_EQ(a.stats().bytes, kTile.frame_bytes());
  EXPECT_TRUE(a.TakeReady()->complete);
}

// Regression (fuzz_assembler, tests/fuzz/corpus/assembler/crash-overlap-
// counts-complete): a repeat of packet 1 under a fresh sequence number in
// place of the lost packet 2 brings the pixel bytes up to the frame's size,
// but packet 2's region was never written: the frame is not complete.
TEST(FrameAssembler, ARepeatedRegionUnderAFreshSequenceDoesNotCompleteAFrame) {
  FrameAssembler a = Make();
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  AddAll(a, FramePackets(f1, 1000, 0));
  auto first = a.TakeReady();
  Packets p2 = FramePackets(f2, 4600, 5);
  p2[2] = p2[1];
  p2[2][3] = std::byte{5 + 2};  // the sequence number packet 2 had
  AddAll(a, p2);
  EXPECT_EQ(a.stats().duplicate, 0u);
  EXPECT_EQ(a.stats().bytes, 2 * kTile.frame_bytes());  // as many bytes as two whole frames
  EXPECT_EQ(a.stats().frames_incomplete, 1u);
  EXPECT_FALSE(a.TakeReady().has_value());
  EXPECT_TRUE(Shows(*first, f1));
}

TEST(FrameAssembler, FrameWhoseMarkerIsLostEndsAtTheNextTimestamp) {
  FrameAssembler a = Make();
  const auto f1 = PatternFrame(kTile, 5), f2 = PatternFrame(kTile, 6);
  Packets p1 = FramePackets(f1, 1000, 0);
  p1.pop_back();  // the marker packet
  AddAll(a, p1);
  EXPECT_FALSE(a.TakeReady().has_value());
  AddAll(a, FramePackets(f2, 4600, 5));
  EXPECT_EQ(a.stats().frames_incomplete, 1u);
  EXPECT_EQ(a.stats().frames_complete, 1u);
  EXPECT_EQ(a.stats().lost, 1u);
  auto r = a.TakeReady();
  EXPECT_TRUE(Shows(*r, f2));
}

TEST(FrameAssembler, LatePacketOfAnEarlierFrameIsNeverWritten) {
  FrameAssembler a = Make();
  const auto f1 = PatternFrame(kTile, 7), f2 = PatternFrame(kTile, 8);
  Packets p1 = FramePackets(f1, 1000, 0), p2 = FramePackets(f2, 4600, 5);
  const auto straggler = p1[3];
  p1.erase(p1.begin() + 3);
  AddAll(a, p1);
  a.Add(p2[0]);
  EXPECT_EQ(a.Add(straggler), AddResult::kLate);
  for (size_t i = 1; i < p2.size(); ++i) a.Add(p2[i]);
  auto r = a.TakeReady();
  EXPECT_TRUE(Shows(*r, f2));
  EXPECT_EQ(a.stats().late, 1u);
  EXPECT_EQ(a.stats().lost, 0u);  // it arrived, late
}

TEST(FrameAssembler, CountsForeignSsrcAndSource) {
  AssemblerOptions o;
  o.tile = kTile;
  o.ssrc = 7;
  FrameAssembler a(o);
  const SocketAddress source = *SocketAddress::Resolve("127.0.0.1", 0);
  a.ExpectSources({&source, 1});
  const auto f = PatternFrame(kTile, 9);
  const Packets mine = FramePackets(f, 1000, 0), theirs = FramePackets(f, 1000, 0, 99);
  const sockaddr_storage good = SocketAddress::Resolve("127.0.0.1", 4000)->storage;
  const sockaddr_storage bad = SocketAddress::Resolve("127.0.0.2", 4000)->storage;
  EXPECT_EQ(a.Add(theirs[0], &good), AddResult::kForeignSsrc);
  EXPECT_EQ(a.Add(mine[0], &bad), AddResult::kForeignSource);
  EXPECT_EQ(a.Add(mine[0], &good), AddResult::kProbation);  // held until the next one follows
  for (size_t i = 1; i < mine.size(); ++i) EXPECT_EQ(a.Add(mine[i], &good), AddResult::kOk);
  EXPECT_EQ(a.stats().foreign_ssrc, 1u);
  EXPECT_EQ(a.stats().foreign_source, 1u);
  EXPECT_TRUE(Shows(*a.TakeReady(), f));
}

// A tile stream moves to another of the server's NICs while its own is
// down (NIC failover): its packets come from either address, mid-frame too.
TEST(FrameAssembler, TakesTheStreamFromAnyOfTheServersAddresses) {
  AssemblerOptions o;
  o.tile = kTile;
  o.ssrc = 7;
  FrameAssembler a(o);
  const std::array<SocketAddress, 2> nics{*SocketAddress::Resolve("127.0.0.1", 0),
                                          *SocketAddress::Resolve("127.0.0.3", 0)};
  a.ExpectSources(nics);
  const auto f = PatternFrame(kTile, 9);
  const Packets p = FramePackets(f, 1000, 0);
  const sockaddr_storage one = SocketAddress::Resolve("127.0.0.1", 4000)->storage;
  const sockaddr_storage other = SocketAddress::Resolve("127.0.0.3", 5000)->storage;
  const sockaddr_storage stranger = SocketAddress::Resolve("127.0.0.2", 4000)->storage;
  for (size_t i = 0; i < p.size(); ++i) a.Add(p[i], i < p.size() / 2 ? &one : &other);
  EXPECT_EQ(a.Add(p[0], &stranger), AddResult::kForeignSource);
  EXPECT_EQ(a.stats().foreign_source, 1u);
  const auto r = a.TakeReady();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(Shows(*r, f));
}

TEST(FrameAssembler, CountsMalformedPacketsByReason) {
  FrameAssembler a = Make();
  const auto p = FramePackets(PatternFrame(kTile, 10), 1000, 0);
  EXPECT_EQ(a.Add(std::span(p[0]).first(5)), AddResult::kMalformed);
  EXPECT_EQ(a.stats().malformed[static_cast<size_t>(ParseError::kTooShort)], 1u);
  EXPECT_EQ(a.stats().malformed_total(), 1u);
}

// GStreamer's rtpvrawpay: 0 in the extended sequence, several segments per
// packet; the 16-bit sequence wraps mid-frame.
TEST(FrameAssembler, FollowsA16BitSequenceThroughItsWrap) {
  FrameAssembler a = Make();
  const auto f = PatternFrame(kTile, 11);
  CraftedPacket p;
  std::vector<std::vector<std::byte>> packets;
  uint32_t seq = 0xfffe;
  for (uint16_t line = 0; line < kTile.height; line += 4) {
    p.segments = {{line, 0, 300},
                  {uint16_t(line + 1), 0, 300},
                  {uint16_t(line + 2), 0, 300},
                  {uint16_t(line + 3), 0, 150}};
    p.sequence = seq++ & 0xffff;  // extended half stays 0
    p.timestamp = 1234;
    p.ssrc = 5;
    packets.push_back(Craft(p, kTile, f));
    p.segments = {{uint16_t(line + 3), 50, 150}};
    p.sequence = seq++ & 0xffff;
    p.marker = line + 4u >= kTile.height;
    packets.push_back(Craft(p, kTile, f));
  }
  AddAll(a, packets);
  EXPECT_EQ(a.stats().lost, 0u);
  EXPECT_EQ(a.stats().duplicate, 0u);
  auto r = a.TakeReady();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->complete);
  EXPECT_TRUE(Shows(*r, f));
}

TEST(FrameAssembler, ARestartedSenderIsANewStreamNotAMillionLostPackets) {
  FrameAssembler a = Make();
  AddAll(a, FramePackets(PatternFrame(kTile, 12), 1000, 40000));
  AddAll(a, FramePackets(PatternFrame(kTile, 13), 500000, 0));  // sequence back to 0
  EXPECT_LT(a.stats().lost, 100u);
  EXPECT_EQ(a.stats().frames_complete, 2u);
}

// ffmpeg restarted: a new SSRC, and a timestamp that starts anywhere, here
// behind the last frame taken. After the streak that proves the new stream
// its frames are handed on; the old stream's timestamps are forgotten.
TEST(FrameAssembler, AThirdPartySenderRestartedWithAnEarlierTimestampIsShown) {
  FrameAssembler a = Make();  // no SSRC configured: locks onto the first
  AddAll(a, FramePackets(PatternFrame(kTile, 12), 9'000'000, 100, /*ssrc=*/1));
  ASSERT_TRUE(a.TakeReady().has_value());
  const auto f = PatternFrame(kTile, 13);
  for (uint32_t frame = 0; frame * 5 < 1010; ++frame)  // the streak: 1,000 packets in a row
    AddAll(a, FramePackets(f, 90 + frame * 3000, frame * 5, /*ssrc=*/2));
  const auto r = a.TakeReady();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(Shows(*r, f));
  EXPECT_EQ(a.ssrc(), 2u);
}

// A packet with the tile's own SSRC, random sequence and timestamp: what a
// spoofer or a stray sender on the port looks like.
std::vector<std::byte> Spoofed(uint32_t sequence, uint32_t timestamp, uint8_t payload_type = 96) {
  CraftedPacket p;
  p.ssrc = 7;
  p.sequence = sequence & 0xffff;
  p.timestamp = timestamp;
  p.payload_type = payload_type;
  p.marker = (sequence & 1) != 0;
  p.segments = {{0, 0, 300}};
  return Craft(p, kTile, std::vector<std::byte>(kTile.frame_bytes(), std::byte{0x66}));
}

TEST(FrameAssembler, SpoofedSequencesAndTimestampsNeitherEndFramesNorCountAsLoss) {
  AssemblerOptions o;
  o.tile = kTile;
  o.ssrc = 7;
  o.payload_type = 96;
  FrameAssembler a(o);
  uint32_t random = 12345;
  auto next = [&random] { return random = random * 1103515245u + 12345u; };
  uint64_t spoofed = 0;
  for (uint32_t frame = 0; frame < 200; ++frame) {
    const auto f = PatternFrame(kTile, 20 + frame % 5);
    const Packets p = FramePackets(f, 1000 + frame * 3600, 100 + frame * 5);
    for (size_t i = 0; i < p.size(); ++i) {
      a.Add(p[i]);
      // Between every two packets: random, a constant sequence, a wrong type.
      for (const auto& bad : {Spoofed(next() >> 8, next()), Spoofed(4242, next()),
                              Spoofed(next() >> 8, next(), 97)}) {
        a.Add(bad);
        ++spoofed;
      }
    }
    auto r = a.TakeReady();
    ASSERT_TRUE(r.has_value()) << "frame " << frame;
    ASSERT_TRUE(r->complete && Shows(*r, f)) << "frame " << frame;
  }
  const AssemblerStats& s = a.stats();
  EXPECT_EQ(s.lost, 0u);
  EXPECT_EQ(s.frames_complete, 200u);
  EXPECT_EQ(s.frames_incomplete, 0u);
  EXPECT_EQ(s.wrong_payload_type, spoofed / 3);
  EXPECT_EQ(s.duplicate + s.late + s.probation + s.sequence_jump + s.timestamp_out_of_sequence +
                s.wrong_payload_type,
            spoofed)
      << "every spoofed packet refused under a reason of its own";
}

TEST(FrameAssembler, ANewStreamIsHeldOnProbationAndItsFirstPacketKept) {
  FrameAssembler a = Make();
  const auto f = PatternFrame(kTile, 30);
  const Packets p = FramePackets(f, 1000, 500);
  EXPECT_EQ(a.Add(p[0]), AddResult::kProbation);
  EXPECT_EQ(a.stats().probation, 1u);
  for (size_t i = 1; i < p.size(); ++i) EXPECT_EQ(a.Add(p[i]), AddResult::kOk);
  EXPECT_EQ(a.stats().probation, 0u) << "admitted after all";
  EXPECT_EQ(a.stats().packets, p.size());
  EXPECT_TRUE(Shows(*a.TakeReady(), f));
}

TEST(FrameAssembler, AJumpIsHeldUntilThePacketAfterItFollows) {
  FrameAssembler a = Make();
  AddAll(a, FramePackets(PatternFrame(kTile, 31), 1000, 0));
  EXPECT_EQ(a.Add(Spoofed(30000, 4600)), AddResult::kSequenceJump);
  EXPECT_EQ(a.Add(Spoofed(30002, 4600)), AddResult::kSequenceJump) << "not the next one";
  EXPECT_EQ(a.stats().lost, 0u);
  const auto f = PatternFrame(kTile, 32);
  const Packets restarted = FramePackets(f, 900000, 40000);  // a sender that restarted
  EXPECT_EQ(a.Add(restarted[0]), AddResult::kSequenceJump);
  for (size_t i = 1; i < restarted.size(); ++i) EXPECT_EQ(a.Add(restarted[i]), AddResult::kOk);
  EXPECT_EQ(a.stats().sequence_jump, 2u);
  EXPECT_EQ(a.stats().lost, 0u);
  EXPECT_TRUE(Shows(*a.TakeReady(), f));
}

TEST(FrameAssembler, ANewTimestampOutOfSequenceOrTooFarAheadIsRefused) {
  FrameAssembler a = Make();
  const auto f = PatternFrame(kTile, 33);
  const Packets p = FramePackets(f, 1000, 0);
  a.Add(p[0]);
  a.Add(p[1]);
  EXPECT_EQ(a.Add(Spoofed(3, 1000 + FrameAssembler::kMaxTimestampAdvance + 1)),
            AddResult::kTimestampOutOfSequence);  // in sequence, too far ahead
  EXPECT_EQ(a.Add(Spoofed(2000, 0x40000000)),
            AddResult::kTimestampOutOfSequence);                          // ahead, far ahead
  EXPECT_EQ(a.Add(Spoofed(5, 500)), AddResult::kTimestampOutOfSequence);  // ahead, older timestamp
  for (size_t i = 2; i < p.size(); ++i) EXPECT_EQ(a.Add(p[i]), AddResult::kOk);
  EXPECT_EQ(a.stats().lost, 0u);
  EXPECT_TRUE(Shows(*a.TakeReady(), f));
}

// One spoofed packet whose sequence number lands ahead of the stream (not
// the next) and whose timestamp lands in the 10 s ahead: it would end the
// frame and, believed, make every real packet after it look out of date
// for seconds. A new timestamp from a packet that is not the next in
// sequence is held until the packet after it follows it.
TEST(FrameAssembler, ANewTimestampAfterAGapWaitsForThePacketAfterIt) {
  FrameAssembler a = Make();
  AddAll(a, FramePackets(PatternFrame(kTile, 40), 1000, 0));
  const auto first = a.TakeReady();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(a.Add(Spoofed(20, 1000 + 90000 * 4)), AddResult::kTimestampOutOfSequence);
  EXPECT_EQ(a.Add(Spoofed(1000, 1000 + 90000 * 9)), AddResult::kTimestampOutOfSequence);
  for (uint32_t frame = 1; frame < 20; ++frame) {
    const auto f = PatternFrame(kTile, 40 + frame);
    AddAll(a, FramePackets(f, 1000 + frame * 3600, frame * 5));
    auto r = a.TakeReady();
    ASSERT_TRUE(r.has_value()) << "frame " << frame;
    ASSERT_TRUE(r->complete && Shows(*r, f)) << "frame " << frame;
  }
  EXPECT_EQ(a.stats().lost, 0u);
  EXPECT_EQ(a.stats().frames_complete, 20u);
  EXPECT_EQ(a.stats().timestamp_out_of_sequence, 2u);
}

// After loss a real stream's new frame starts with a gap: held, and
// believed as soon as the next packet follows it, even when that packet is
// a frame of its own (a frame of one packet).
TEST(FrameAssembler, AfterLossTheNextFrameStartsOnceItsSecondPacketFollows) {
  FrameAssembler a = Make();
  const auto f0 = PatternFrame(kTile, 50), f1 = PatternFrame(kTile, 51),
             f2 = PatternFrame(kTile, 52);
  AddAll(a, FramePackets(f0, 1000, 0));
  Packets p1 = FramePackets(f1, 4600, 5);
  p1.pop_back();  // frame 1's marker lost
  AddAll(a, p1);
  const Packets p2 = FramePackets(f2, 8200, 10);  // its first packet lost too
  EXPECT_EQ(a.Add(p2[1]), AddResult::kTimestampOutOfSequence) << "held: a gap and a new timestamp";
  EXPECT_EQ(a.Add(p2[2]), AddResult::kOk);
  EXPECT_EQ(a.stats().timestamp_out_of_sequence, 0u) << "admitted after all";
  EXPECT_EQ(a.stats().frames_incomplete, 1u) << "frame 1 ended by frame 2";
  // Frames of one packet each, after a lost one: the one after the gap is
  // believed when the next frame's packet follows it.
  CraftedPacket one;
  one.ssrc = 7;
  one.marker = true;
  one.segments = {{0, 0, 300}};
  const std::vector<std::byte> pixels(kTile.frame_bytes(), std::byte{1});
  auto single = [&](uint32_t sequence, uint32_t timestamp) {
    one.sequence = static_cast<uint16_t>(sequence);
    one.timestamp = timestamp;
    return a.Add(Craft(one, kTile, pixels));
  };
  for (size_t i = 3; i < p2.size(); ++i) a.Add(p2[i]);
  EXPECT_EQ(single(16, 11800), AddResult::kTimestampOutOfSequence);  // one lost before
  EXPECT_EQ(single(17, 15400), AddResult::kOk);
  EXPECT_EQ(single(18, 19000), AddResult::kOk);
  EXPECT_EQ(a.stats().packets, 5u + 4u + 4u + 3u);
  EXPECT_EQ(a.stats().lost, 3u);
}

// A conformant sender of another size: a smaller stream's frames end at
// their marker short of the tile's edges, a larger one's lines fall beyond
// it; both say what arrives.
TEST(FrameAssembler, AStreamOfAnotherSizeIsCountedAndMeasured) {
  FrameAssembler a = Make();
  const TileGeometry small{50, 10};
  for (uint32_t frame = 0; frame < 3; ++frame) {
    PacketizerOptions o;
    o.tile = small;
    o.max_payload = 1460;
    o.ssrc = 7;
    auto p = Packetizer::Create(o);
    const auto pixels = PatternFrame(small, frame);
    for (uint32_t i = 0; i < p->packet_count(); ++i) {
      std::vector<std::byte> packet(p->packet_size(i));
      p->Build(i, pixels, 1000 + frame * 3600, frame * p->packet_count() + i, packet);
      a.Add(packet);
    }
  }
  EXPECT_EQ(a.stats().frames_complete, 0u);
  EXPECT_EQ(a.stats().frames_wrong_geometry, 3u);
  EXPECT_EQ(a.stats().arriving, small);
  CraftedPacket big;
  big.ssrc = 7;
  big.sequence = 100;
  big.timestamp = 20000;
  big.segments = {{25, 0, 300}};  // line 25 of a 20-line tile
  FrameAssembler b = Make();
  b.Add(Craft(big, {100, 40}, PatternFrame({100, 40}, 1)));
  EXPECT_EQ(b.stats().malformed[static_cast<size_t>(ParseError::kLineBeyondHeight)], 1u);
  EXPECT_EQ(b.stats().arriving, (TileGeometry{100, 26}));
}

TEST(FrameAssembler, TheTakenFrameStaysIntactWhileNewerFramesArrive) {
  FrameAssembler a = Make();
  const auto f1 = PatternFrame(kTile, 14);
  AddAll(a, FramePackets(f1, 1000, 0));
  auto taken = a.TakeReady();
  for (uint32_t k = 1; k <= 5; ++k)
    AddAll(a, FramePackets(PatternFrame(kTile, 14 + k), 1000 + 3600 * k, 5 * k));
  EXPECT_TRUE(Shows(*taken, f1));  // never overwritten while held
  auto newest = a.TakeReady();
  EXPECT_TRUE(Shows(*newest, PatternFrame(kTile, 19)));  // older untaken ones were replaced
  EXPECT_EQ(a.stats().frames_complete, 6u);
}

TEST(FrameAssembler, HoldsQueuedFramesUntilTheirTickIsTaken) {
  FrameAssembler a = Make();
  for (uint32_t k = 0; k < 3; ++k)
    AddAll(a, FramePackets(PatternFrame(kTile, 20 + k), 1000 + 3600 * k, 5 * k));
  EXPECT_FALSE(a.TakeFrame(999, false).has_value());  // never had it
  auto second = a.TakeFrame(4600, false);             // drops the older 1000
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(Shows(*second, PatternFrame(kTile, 21)));
  AddAll(a, FramePackets(PatternFrame(kTile, 23), 1000 + 3600 * 3, 15));
  EXPECT_TRUE(Shows(*second, PatternFrame(kTile, 21))) << "the held frame is never written";
  EXPECT_FALSE(a.TakeFrame(1000, false).has_value()) << "dropped when a newer one was taken";
  auto third = a.TakeFrame(8200, false);
  ASSERT_TRUE(third.has_value());
  EXPECT_TRUE(Shows(*third, PatternFrame(kTile, 22)));
}

TEST(FrameAssembler, AFullQueueDropsItsOldestFrame) {
  FrameAssembler a = Make();
  for (uint32_t k = 0; k < 5; ++k)
    AddAll(a, FramePackets(PatternFrame(kTile, 30 + k), 1000 + 3600 * k, 5 * k));
  EXPECT_FALSE(a.TakeFrame(1000, false).has_value());
  EXPECT_FALSE(a.TakeFrame(4600, false).has_value());
  for (uint32_t k = 2; k < 5; ++k) {
    auto f = a.TakeFrame(1000 + 3600 * k, false);
    ASSERT_TRUE(f.has_value()) << k;
    EXPECT_TRUE(Shows(*f, PatternFrame(kTile, 30 + k)));
  }
}

TEST(FrameAssembler, TakesAnIncompleteFrameOnlyWhenAskedTo) {
  Packets p = FramePackets(PatternFrame(kTile, 40), 1000, 0);
  p.erase(p.begin() + 1);
  FrameAssembler a = Make(/*partial=*/true);
  AddAll(a, p);
  EXPECT_FALSE(a.TakeFrame(1000, false).has_value());
  FrameAssembler b = Make(/*partial=*/true);
  AddAll(b, p);
  auto f = b.TakeFrame(1000, true);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->complete);
}

TEST(FrameAssembler, SaysWhichAddFinishedAFrame) {
  FrameAssembler a = Make();
  const Packets p = FramePackets(PatternFrame(kTile, 50), 1000, 0);
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    a.Add(p[i]);
    EXPECT_EQ(a.just_finished(), nullptr);
  }
  a.Add(p.back());
  ASSERT_NE(a.just_finished(), nullptr);
  EXPECT_EQ(a.just_finished()->timestamp, 1000u);
  EXPECT_TRUE(Shows(*a.just_finished(), PatternFrame(kTile, 50)));
  a.Add(p.back());  // a duplicate finishes nothing
  EXPECT_EQ(a.just_finished(), nullptr);
}

}  // namespace
}  // namespace tilestream
