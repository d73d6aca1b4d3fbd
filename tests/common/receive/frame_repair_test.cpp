// The frame assembler's repairs (RFC 4588 retransmissions): frames held in
// repair, tails and heads asked for, the queue kept in timestamp order.
#include <gtest/gtest.h>

#include <vector>

#include "common/receive/frame_assembler.h"
#include "common/wire/rtcp_feedback.h"
#include "tests/common/receive/assembler_harness.h"
#include "tests/support/packet_builder.h"

namespace tilestream {
namespace {

using testing::PatternFrame;

constexpr uint8_t kRtxPt = 97;

FrameAssembler MakeRepairing() {
  AssemblerOptions o;
  o.tile = kTile;
  o.queue_depth = 3;
  o.rtx_payload_type = kRtxPt;
  return FrameAssembler(o);
}

std::vector<std::byte> Rtx(const std::vector<std::byte>& original, uint16_t rtx_sequence = 1) {
  return testing::MakeRtx(original, kRtxPt, 0x74720000, rtx_sequence);
}

TEST(FrameAssemblerRetransmission, AFrameMissingAPacketIsRepairedWhileTheNextOneArrives) {
  FrameAssembler a = MakeRepairing();
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  Packets p1 = FramePackets(f1, 1000, 0), p2 = FramePackets(f2, 4600, 5);
  for (size_t i = 0; i < p1.size(); ++i)
    if (i != 2) a.Add(p1[i]);
  EXPECT_EQ(a.loss()->missing(), 1u);
  a.Add(p2[0]);
  a.Add(p2[1]);
  EXPECT_EQ(a.Add(Rtx(p1[2])), AddResult::kOk);
  ASSERT_NE(a.just_finished(), nullptr);
  EXPECT_EQ(a.just_finished()->timestamp, 1000u);
  AddAll(a, {p2.begin() + 2, p2.end()});
  auto r1 = a.TakeFrame(1000, false);
  ASSERT_TRUE(r1.has_value());
  EXPECT_TRUE(Shows(*r1, f1));
  auto r2 = a.TakeFrame(4600, false);
  ASSERT_TRUE(r2.has_value());
  EXPECT_TRUE(Shows(*r2, f2));
  EXPECT_EQ(a.stats().frames_complete, 2u);
  EXPECT_EQ(a.stats().frames_repaired, 1u);
  EXPECT_EQ(a.stats().frames_incomplete, 0u);
  EXPECT_EQ(a.stats().lost, 1u);  // what the network did
  EXPECT_EQ(a.stats().recovered, 1u);
}

// A path that reorders: a frame's last packets passed by the next frame's
// first ones. The frame waits for repair, and they complete it as a
// retransmission would: it is shown whole, nothing counts as lost.
TEST(FrameAssemblerRetransmission, PacketsPassedByTheNextFramesCompleteTheFrameTheyBelongTo) {
  FrameAssembler a = MakeRepairing();
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  Packets p1 = FramePackets(f1, 1000, 0), p2 = FramePackets(f2, 4600, 5);
  for (size_t i = 0; i + 2 < p1.size(); ++i) a.Add(p1[i]);
  a.Add(p2[0]);
  a.Add(p2[1]);
  EXPECT_EQ(a.Add(p1[p1.size() - 1]), AddResult::kOk);  // the marker first
  EXPECT_EQ(a.Add(p1[p1.size() - 2]), AddResult::kOk);
  ASSERT_NE(a.just_finished(), nullptr);
  EXPECT_EQ(a.just_finished()->timestamp, 1000u);
  AddAll(a, {p2.begin() + 2, p2.end()});
  auto r1 = a.TakeFrame(1000, false);
  ASSERT_TRUE(r1.has_value());
  EXPECT_TRUE(Shows(*r1, f1));
  EXPECT_EQ(a.stats().frames_complete, 2u);
  EXPECT_EQ(a.stats().frames_incomplete, 0u);
  EXPECT_EQ(a.stats().lost, 0u);
  EXPECT_EQ(a.stats().late, 0u);
  EXPECT_EQ(a.stats().reordered, 2u);
  EXPECT_EQ(a.loss()->stats().reordered, 2u);  // never asked for
  EXPECT_EQ(a.loss()->missing(), 0u);
}

// Found by the wall's simulation (swarm seed 61): a frame's second packet
// passes its first. The second waits, a new timestamp after a gap; the
// first comes and opens the frame; the second follows it then, and is
// neither lost nor asked for (it was dropped, counted lost and asked for
// four times).
TEST(FrameAssemblerRetransmission, AFramesSecondPacketBeforeItsFirstIsNeitherLostNorAskedFor) {
  FrameAssembler a = MakeRepairing();
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  const Packets p1 = FramePackets(f1, 1000, 0), p2 = FramePackets(f2, 4600, 5);
  AddAll(a, p1);
  EXPECT_EQ(a.Add(p2[1]), AddResult::kTimestampOutOfSequence);  // held
  EXPECT_EQ(a.Add(p2[0]), AddResult::kOk);
  AddAll(a, {p2.begin() + 2, p2.end()});
  auto r2 = a.TakeFrame(4600, false);
  ASSERT_TRUE(r2.has_value());
  EXPECT_TRUE(r2->complete && Shows(*r2, f2));
  EXPECT_EQ(a.stats().lost, 0u);
  EXPECT_EQ(a.stats().timestamp_out_of_sequence, 0u);
  EXPECT_EQ(a.loss()->missing(), 0u);
  EXPECT_EQ(a.stats().frames_complete, 2u);
}

TEST(FrameAssemblerRetransmission, ALostPacketOfTheFrameBeingAssembledGoesToItsPlace) {
  FrameAssembler a = MakeRepairing();
  const auto f = PatternFrame(kTile, 3);
  AddAll(a, FramePackets(PatternFrame(kTile, 1), 1000, 0));  // the stream is believed
  Packets p = FramePackets(f, 4600, 5);
  a.Add(p[0]);
  a.Add(p[2]);
  EXPECT_EQ(a.Add(Rtx(p[1])), AddResult::kOk);
  AddAll(a, {p.begin() + 3, p.end()});
  auto r = a.TakeReady();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->complete);
  EXPECT_TRUE(Shows(*r, f));
  EXPECT_EQ(a.stats().frames_repaired, 0u);  // whole at its marker
}

TEST(FrameAssemblerRetransmission, ALostMarkerPacketIsRepairedOnceTheNextFrameRevealsIt) {
  FrameAssembler a = MakeRepairing();
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  Packets p1 = FramePackets(f1, 1000, 0), p2 = FramePackets(f2, 4600, 5);
  AddAll(a, {p1.begin(), p1.end() - 1});
  EXPECT_EQ(a.loss()->missing(), 0u);  // nothing says it is lost yet
  a.Add(p2[0]);
  a.Add(p2[1]);  // the next frame starts: packet 4 was lost
  EXPECT_EQ(a.loss()->missing(), 1u);
  EXPECT_EQ(a.Add(Rtx(p1.back())), AddResult::kOk);
  auto r = a.TakeFrame(1000, false);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(Shows(*r, f1));
}

std::vector<std::byte> Bye(uint32_t ssrc = 7) {
  std::vector<std::byte> bye(kByeSize);
  WriteBye(ssrc, bye);
  return bye;
}

// The show's last frame: no later packet reveals that its last two were
// lost, but its sender's BYE does: the rest of the plan's packets after
// the newest are lost, and asked for.
TEST(FrameAssemblerRetransmission, ALostTailIsAskedForWhenTheSenderSaysBye) {
  FrameAssembler a = MakeRepairing();
  const Packetizer plan = Plan();
  a.ExpectPlan(&plan);
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  Packets p1 = FramePackets(f1, 1000, 0), p2 = FramePackets(f2, 4600, 5);
  AddAll(a, {p1.begin(), p1.end() - 2});
  EXPECT_EQ(a.loss()->missing(), 0u);
  EXPECT_EQ(a.Add(Bye(8)), AddResult::kRtcp);  // another stream's
  EXPECT_EQ(a.loss()->missing(), 0u);
  EXPECT_EQ(a.Add(Bye()), AddResult::kRtcp);
  EXPECT_EQ(a.Add(Bye()), AddResult::kRtcp);  // sent twice: counted once as lost
  EXPECT_EQ(a.stats().byes, 2u);
  std::array<uint16_t, 8> due{};
  ASSERT_EQ(a.loss()->TakeDue(due), 2u);
  EXPECT_EQ(due[0], 3u);
  EXPECT_EQ(due[1], 4u);
  EXPECT_EQ(a.Add(Rtx(p1[3])), AddResult::kOk);
  EXPECT_EQ(a.Add(Rtx(p1[4])), AddResult::kOk);
  ASSERT_NE(a.just_finished(), nullptr);  // whole: it ends without its marker
  EXPECT_TRUE(a.just_finished()->complete);
  EXPECT_TRUE(Shows(*a.just_finished(), f1));
  AddAll(a, p2);  // a new show on the same stream, in sequence: nothing more lost
  EXPECT_EQ(a.stats().frames_complete, 2u);
  EXPECT_EQ(a.stats().lost, 2u);
  EXPECT_EQ(a.stats().recovered, 2u);
  EXPECT_EQ(a.loss()->missing(), 0u);
}

// A whole frame, then BYE: nothing is lost.
TEST(FrameAssemblerRetransmission, AByeAfterAWholeFrameLosesNothing) {
  FrameAssembler a = MakeRepairing();
  const Packetizer plan = Plan();
  a.ExpectPlan(&plan);
  AddAll(a, FramePackets(PatternFrame(kTile, 1), 1000, 0));
  EXPECT_EQ(a.Add(Bye()), AddResult::kRtcp);
  EXPECT_EQ(a.stats().lost, 0u);
  EXPECT_EQ(a.loss()->missing(), 0u);
  EXPECT_EQ(a.stats().frames_complete, 1u);
}

// The stream's first two packets lost (or a receiver that joined mid-frame):
// with the plan, the first packet seen says how many came before it in its
// frame, and they are asked for like any gap.
TEST(FrameAssemblerRetransmission, AStreamPickedUpMidFrameAsksForTheFramesHead) {
  FrameAssembler a = MakeRepairing();
  const Packetizer plan = Plan();
  a.ExpectPlan(&plan);
  const auto f = PatternFrame(kTile, 1);
  Packets p = FramePackets(f, 1000, 100);
  a.loss()->SetNow(0);
  AddAll(a, {p.begin() + 2, p.end()});
  EXPECT_EQ(a.stats().lost, 2u);
  std::array<uint16_t, 8> due{};
  ASSERT_EQ(a.loss()->TakeDue(due), 2u);
  EXPECT_EQ(due[0], 100u);
  EXPECT_EQ(due[1], 101u);
  EXPECT_EQ(a.Add(Rtx(p[0])), AddResult::kOk);
  EXPECT_EQ(a.Add(Rtx(p[1])), AddResult::kOk);
  auto r = a.TakeFrame(1000, false);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(Shows(*r, f));
  EXPECT_EQ(a.stats().frames_repaired, 1u);
}

// Without the sender's plan (a third-party stream) a tail is not guessed.
TEST(FrameAssemblerRetransmission, WithoutThePlanNoTailIsGuessed) {
  FrameAssembler a = MakeRepairing();
  Packets p = FramePackets(PatternFrame(kTile, 1), 1000, 0);
  AddAll(a, {p.begin(), p.end() - 2});
  a.Add(Bye());
  EXPECT_EQ(a.loss()->missing(), 0u);
  EXPECT_EQ(a.stats().lost, 0u);
}

TEST(FrameAssemblerRetransmission, AFrameIsGivenUpOnceTheNextOneEnds) {
  FrameAssembler a = MakeRepairing();
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  Packets p1 = FramePackets(f1, 1000, 0), p2 = FramePackets(f2, 4600, 5);
  for (size_t i = 0; i < p1.size(); ++i)
    if (i != 2) a.Add(p1[i]);
  AddAll(a, p2);
  EXPECT_EQ(a.stats().frames_incomplete, 1u);
  EXPECT_EQ(a.Add(Rtx(p1[2])), AddResult::kLate);  // too late: never written
  EXPECT_EQ(a.stats().retransmit_late, 1u);
  auto r = a.TakeReady();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->timestamp, 4600u);
  EXPECT_TRUE(Shows(*r, f2));
}

// A wall whose latency spans several frames (60 fps, a far node) holds as
// many in repair at once (here 3): the older frame, repaired after newer
// ones ended, is queued before them, and a frame is given up once three
// newer ones have ended.
TEST(FrameAssemblerRetransmission, SeveralFramesWaitForTheirRepairsAtOnce) {
  AssemblerOptions o;
  o.tile = kTile;
  o.queue_depth = 4;
  o.rtx_payload_type = kRtxPt;
  o.repair_frames = 3;
  FrameAssembler a(o);
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2), f3 = PatternFrame(kTile, 3),
             f4 = PatternFrame(kTile, 4);
  const Packets p1 = FramePackets(f1, 1000, 0), p2 = FramePackets(f2, 4600, 5),
                p3 = FramePackets(f3, 8200, 10), p4 = FramePackets(f4, 11800, 15);
  for (const Packets* p : {&p1, &p2})  // each misses its third packet
    for (size_t i = 0; i < p->size(); ++i)
      if (i != 2) a.Add((*p)[i]);
  AddAll(a, p3);  // whole; both still wait
  EXPECT_EQ(a.stats().frames_incomplete, 0u);
  EXPECT_EQ(a.Add(Rtx(p2[2], 1)), AddResult::kOk);
  EXPECT_EQ(a.Add(Rtx(p1[2], 2)), AddResult::kOk);  // older, repaired last
  EXPECT_EQ(a.stats().frames_repaired, 2u);
  for (const auto& [ts, f] : {std::pair{1000u, &f1}, {4600u, &f2}, {8200u, &f3}}) {
    auto r = a.TakeFrame(ts, false);
    ASSERT_TRUE(r.has_value()) << ts;
    EXPECT_TRUE(Shows(*r, *f)) << ts;
  }
  for (size_t i = 0; i < p4.size(); ++i)
    if (i != 2) a.Add(p4[i]);
  for (uint32_t k = 0; k < 3; ++k) {
    EXPECT_EQ(a.stats().frames_incomplete, 0u) << k;
    AddAll(a, FramePackets(PatternFrame(kTile, 5 + k), 15400 + 3600 * k, 20 + 5 * k));
  }
  EXPECT_EQ(a.stats().frames_incomplete, 1u);
  EXPECT_EQ(a.Add(Rtx(p4[2], 3)), AddResult::kLate);
}

// Unsynced, the newest frame is shown: one repaired after a newer one was
// taken is not shown backwards.
TEST(FrameAssemblerRetransmission, AFrameRepairedAfterANewerWasTakenIsNotShownBackwards) {
  AssemblerOptions o;
  o.tile = kTile;
  o.rtx_payload_type = kRtxPt;
  o.repair_frames = 2;
  FrameAssembler a(o);
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  const Packets p1 = FramePackets(f1, 1000, 0), p2 = FramePackets(f2, 4600, 5);
  for (size_t i = 0; i < p1.size(); ++i)
    if (i != 2) a.Add(p1[i]);
  AddAll(a, p2);
  auto r = a.TakeReady();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->timestamp, 4600u);
  EXPECT_EQ(a.Add(Rtx(p1[2])), AddResult::kOk);
  EXPECT_EQ(a.stats().frames_repaired, 1u);
  EXPECT_FALSE(a.TakeReady().has_value());
}

TEST(FrameAssemblerRetransmission, ARetransmissionOfWhatIsNotMissingIsNeverWritten) {
  FrameAssembler a = MakeRepairing();
  const auto f1 = PatternFrame(kTile, 1), f2 = PatternFrame(kTile, 2);
  AddAll(a, FramePackets(f2, 1000, 0));
  Packets p1 = FramePackets(f1, 4600, 5);
  a.Add(p1[0]);
  a.Add(p1[2]);
  // Packet 0 again, but with frame 2's pixels: a stranger, or a second copy.
  EXPECT_EQ(a.Add(Rtx(FramePackets(f2, 4600, 5)[0])), AddResult::kLate);
  EXPECT_EQ(a.Add(Rtx(p1[1])), AddResult::kOk);
  EXPECT_EQ(a.Add(Rtx(p1[1], 2)), AddResult::kLate);  // a duplicate retransmission
  AddAll(a, {p1.begin() + 3, p1.end()});
  auto r = a.TakeReady();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(Shows(*r, f1));
  EXPECT_EQ(a.stats().retransmit_late, 2u);
}

TEST(FrameAssemblerRetransmission, AMalformedRetransmissionIsCountedAndChangesNothing) {
  FrameAssembler a = MakeRepairing();
  const auto f = PatternFrame(kTile, 1);
  Packets p = FramePackets(f, 1000, 0);
  a.Add(p[0]);
  auto rtx = Rtx(p[1]);
  rtx.resize(20);
  EXPECT_EQ(a.Add(rtx), AddResult::kMalformed);
  EXPECT_EQ(a.stats().malformed_total(), 1u);
  AddAll(a, {p.begin() + 1, p.end()});
  EXPECT_EQ(a.stats().frames_complete, 1u);
}

TEST(FrameAssemblerRetransmission, OffItIsJustAnotherPayloadType) {
  AssemblerOptions o;
  o.tile = kTile;
  o.payload_type = 96;
  FrameAssembler a(o);
  const auto f = PatternFrame(kTile, 1);
  Packets p = FramePackets(f, 1000, 0);
  EXPECT_EQ(a.loss(), nullptr);
  a.Add(p[0]);
  EXPECT_NE(a.Add(Rtx(p[1])), AddResult::kOk);  // not RFC 4175 as it stands
  AddAll(a, {p.begin() + 1, p.end()});
  EXPECT_EQ(a.stats().frames_complete, 1u);
  EXPECT_EQ(a.stats().retransmitted, 0u);
}

}  // namespace
}  // namespace tilestream
