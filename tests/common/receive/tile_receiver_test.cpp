#include "common/receive/tile_receiver.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "common/base/bytes.h"
#include "common/base/clock.h"
#include "common/send/tile_sender.h"
#include "common/wire/rtcp_feedback.h"
#include "tests/support/packet_builder.h"
#include "tests/support/udp_port.h"
#include "tests/support/wait_for.h"

namespace tilestream {
namespace {

int BrokenReceive(int, mmsghdr*, unsigned, int, timespec*) {
  errno = ENOMEM;
  return -1;
}

// A socket that fails hard (here ENOMEM from recvmmsg, through the socket's
// seam) ends the tile's network thread after one call instead of spinning
// on it, and the error is in the tile's statistics for the report to say.
TEST(TileReceiver, AHardReceiveErrorEndsTheTilesThreadAndIsReported) {
  TileReceiverOptions o;
  o.assembler.tile = {64, 16};
  o.socket.bind_address = "127.0.0.1";
  o.socket.calls.recvmmsg = BrokenReceive;
  auto r = TileReceiver::Open(std::move(o));
  ASSERT_TRUE(r.ok()) << r.status().message();
  TileReceiver& tile = **r;
  EXPECT_TRUE(tile.Snapshot().receive_error.ok());
  tile.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return !tile.Snapshot().receive_error.ok(); }));
  const TileReceiverStats st = tile.Snapshot();
  EXPECT_EQ(st.receive_error.error, ENOMEM);
  EXPECT_EQ(st.socket.syscalls, 1u);  // one call, no retries: the thread ended
  tile.Stop();
  EXPECT_EQ(tile.Snapshot().socket.syscalls, 1u);
}

// Our sender's plan of a tile, at an MTU.
PacketizerOptions Plan(TileGeometry tile, uint32_t mtu) {
  PacketizerOptions plan;
  plan.tile = tile;
  plan.max_payload = MaxUdpPayloadForMtu(mtu);
  plan.ssrc = 77;
  return plan;
}

// The checksums of the frames a receiver completed, by RTP timestamp.
struct CompleteFrames {
  std::mutex mu;
  std::map<uint32_t, uint64_t> sums;
};

// A receiver on loopback of `plan`'s tile that records what it completes.
TileReceiverOptions Receiving(const PacketizerOptions& plan, CompleteFrames* complete) {
  TileReceiverOptions o;
  o.assembler.tile = plan.tile;
  o.socket.bind_address = "127.0.0.1";
  o.plan = plan;
  o.on_frame = [complete](uint32_t, uint32_t timestamp, uint64_t checksum) {
    std::lock_guard lock(complete->mu);
    complete->sums[timestamp] = checksum;
  };
  return o;
}

// Bytes waiting in the socket bound to `port`, as the kernel charges them
// (its rx_queue in /proc/net/udp).
size_t QueuedBytes(uint16_t port) {
  size_t queued = 0;
  testing::ForEachUdpSocket(port, [&](const std::string& queues) {
    queued = std::stoull(queues.substr(9), nullptr, 16);
    return false;
  });
  return queued;
}

// A tile far behind (docs/decisions.md, "A receiver far behind catches
// up"): with 100 MiB waiting when its thread starts, it throws the
// oldest away unread instead of copying frames that
// are late already, counts nothing of that as lost, and the frames sent
// after arrive whole, pixel for pixel.
TEST(TileReceiver, AReceiverFarBehindCatchesUpAndTheFramesAfterArriveWhole) {
  if (geteuid() != 0) GTEST_SKIP() << "a 64-MiB receive buffer needs root (SO_RCVBUFFORCE)";
  const TileGeometry tile{1280, 800};  // 3 MB frames
  const PacketizerOptions plan = Plan(tile, 9000);
  CompleteFrames frames;
  std::mutex& mu = frames.mu;
  std::map<uint32_t, uint64_t>& complete = frames.sums;
  TileReceiverOptions o = Receiving(plan, &frames);
  o.socket.receive_buffer = 64 << 20;  // the default: the kernel queues up to twice that
  auto r = TileReceiver::Open(std::move(o));
  ASSERT_TRUE(r.ok()) << r.status().message();
  TileReceiver& receiver = **r;

  MonotonicClock clock;
  TileSenderOptions so;
  so.packetizer = plan;
  so.socket.destination = "127.0.0.1";
  so.socket.port = receiver.port();
  so.pacing = false;
  auto sender = TileSender::Create(so, &clock);
  ASSERT_TRUE(sender.ok()) << sender.status().message();
  const auto frame = testing::PatternFrame(tile, 5);
  uint32_t timestamp = 0;
  const auto send = [&] {
    timestamp += 3600;
    return (*sender)->SendFrame(frame.data(), timestamp, clock.NowNs(), 1'000'000, nullptr).ok();
  };
  // Before its thread runs, so that nothing is read: past 100 MiB (the
  // catch-up starts past 64: half the buffer plus 32 MiB), short of the
  // 128 that would overflow.
  for (int i = 0; i < 60 && QueuedBytes(receiver.port()) < (size_t{100} << 20); ++i)
    ASSERT_TRUE(send());
  ASSERT_GE(QueuedBytes(receiver.port()), size_t{100} << 20) << "the kernel queued less";
  const uint32_t queued_up_to = timestamp;
  receiver.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return testing::UdpQueueEmpty(receiver.port()); }));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(send());
  ASSERT_TRUE(testing::WaitFor([&] {
    std::lock_guard lock(mu);
    return complete.count(timestamp) > 0;
  })) << "the last frame never arrived whole";
  receiver.Stop();

  const TileReceiverStats st = receiver.Snapshot();
  EXPECT_GE(st.socket.catch_ups, 1u);
  EXPECT_GE(st.socket.discarded_bytes, size_t{16} << 20) << "a 36-MiB excess at least";
  EXPECT_EQ(st.socket.kernel_drops, 0u) << "the queue never overflowed";
  EXPECT_EQ(st.assembler.lost, 0u) << "what was thrown away is not lost";
  const uint64_t sum = FrameChecksum(frame.data(), frame.size());
  std::lock_guard lock(mu);
  for (uint32_t ts = queued_up_to + 3600; ts <= timestamp; ts += 3600) {
    ASSERT_TRUE(complete.count(ts)) << "frame " << ts << " sent after the catch-up";
    EXPECT_EQ(complete[ts], sum);
  }
  EXPECT_LT(complete.size(), (queued_up_to / 3600) + 3) << "some queued frames were thrown away";
}

// The kernel refusing the stream's datagrams of RTP sequence numbers in
// [g_refused_from, g_refused_to), not its retransmissions (a firewall rule
// on the sender's output), as it does: the messages before go out, the
// call returns their count.
uint32_t g_refused_from = 0, g_refused_to = 0;

int Refuse(int fd, mmsghdr* messages, unsigned count, int flags) {
  for (unsigned i = 0; i < count; ++i) {
    const auto* rtp = static_cast<const std::byte*>(messages[i].msg_hdr.msg_iov[0].iov_base);
    const bool original = (static_cast<uint8_t>(rtp[1]) & 0x7f) == kDefaultPayloadType;
    const uint16_t sequence = LoadBE16(rtp + 2);
    if (!original || sequence < g_refused_from || sequence >= g_refused_to) continue;
    if (i > 0) return ::sendmmsg(fd, messages, i, flags);
    errno = EPERM;
    return -1;
  }
  return ::sendmmsg(fd, messages, count, flags);
}

// Our sender of `plan` to a receiver on loopback, unpaced, answering
// NACKs when asked to, its kernel refusing what Refuse says.
TileSenderOptions RefusingSender(const PacketizerOptions& plan, uint16_t port) {
  TileSenderOptions so;
  so.packetizer = plan;
  so.socket.destination = "127.0.0.1";
  so.socket.port = port;
  so.socket.gso = false;  // a message per datagram: each refusal is of one
  so.socket.calls.sendmmsg = Refuse;
  so.pacing = false;
  so.retransmission = true;
  so.retransmission_share = 1.0;
  so.rtx_payload_type = 97;
  so.rtx_ssrc = 78;
  return so;
}

// The last frame of a show whose last two packets (its marker among them)
// the kernel refused: no later packet shows that they are missing, but the
// sender's BYE ends the stream, and the receiver, which knows our sender's
// plan, asks for them: the frame arrives whole.
TEST(TileReceiver, TheLastFrameOfAShowWhoseTailWasRefusedArrivesWhole) {
  const TileGeometry tile{320, 40};
  const PacketizerOptions plan = Plan(tile, 1500);
  CompleteFrames frames;
  std::mutex& mu = frames.mu;
  std::map<uint32_t, uint64_t>& complete = frames.sums;
  TileReceiverOptions o = Receiving(plan, &frames);
  o.assembler.rtx_payload_type = 97;
  auto r = TileReceiver::Open(std::move(o));
  ASSERT_TRUE(r.ok()) << r.status().message();
  TileReceiver& receiver = **r;
  receiver.Start();

  MonotonicClock clock;
  auto sender = TileSender::Create(RefusingSender(plan, receiver.port()), &clock);
  ASSERT_TRUE(sender.ok()) << sender.status().message();
  const uint32_t n = (*sender)->packetizer().packet_count();
  ASSERT_GE(n, 4u);
  g_refused_from = n - 2;
  g_refused_to = n;
  const auto frame = testing::PatternFrame(tile, 3);
  ASSERT_TRUE((*sender)->SendFrame(frame.data(), 1000, clock.NowNs(), 1'000'000, nullptr).ok());
  EXPECT_EQ((*sender)->socket().stats().refusals.of(EPERM), 2u);
  (*sender)->EndStream();
  ASSERT_TRUE(testing::WaitFor([&] {
    (*sender)->AnswerFeedback();
    std::lock_guard lock(mu);
    return complete.count(1000) > 0;
  })) << "the last frame never arrived whole";
  receiver.Stop();
  EXPECT_EQ(complete[1000], FrameChecksum(frame.data(), frame.size()));
  const TileReceiverStats st = receiver.Snapshot();
  EXPECT_EQ(st.assembler.lost, 2u);
  EXPECT_EQ(st.assembler.recovered, 2u);
  EXPECT_EQ(st.assembler.byes, 2u);
  // Asked again every few ms until answered (here as often as WaitFor looks).
  EXPECT_GE((*sender)->stats().retransmitted, 2u);
}

// A packet never answered is asked for with `first_copies` NACKs, then
// each time again with two (docs/decisions.md, "A request asked again goes
// twice"): what reaches the sender's socket is counted there, not taken
// from the receiver's word.
void ExpectNacksOnTheWire(int first_copies) {
  const TileGeometry tile{320, 40};
  const PacketizerOptions plan = Plan(tile, 1500);
  CompleteFrames frames;
  TileReceiverOptions o = Receiving(plan, &frames);
  o.assembler.rtx_payload_type = 97;
  o.assembler.loss.window_ns = 60'000'000'000;  // every retry goes, however late its thread
  const uint32_t requests = o.assembler.loss.max_requests;
  ASSERT_GE(requests, 2u);
  auto r = TileReceiver::Open(std::move(o));
  ASSERT_TRUE(r.ok()) << r.status().message();
  TileReceiver& receiver = **r;
  receiver.SetFirstNackCopies(first_copies);
  receiver.Start();

  MonotonicClock clock;
  auto sender = TileSender::Create(RefusingSender(plan, receiver.port()), &clock);
  ASSERT_TRUE(sender.ok()) << sender.status().message();
  g_refused_from = 1;
  g_refused_to = 2;
  const auto frame = testing::PatternFrame(tile, 3);
  ASSERT_TRUE((*sender)->SendFrame(frame.data(), 1000, clock.NowNs(), 1'000'000, nullptr).ok());
  // The sender never answers: the receiver asks until its last request.
  ASSERT_TRUE(testing::WaitFor([&] { return receiver.Snapshot().loss.requested >= requests; }))
      << "asked " << receiver.Snapshot().loss.requested << " times";
  receiver.Stop();

  const uint32_t nacks = static_cast<uint32_t>(first_copies) + 2 * (requests - 1);
  std::vector<std::byte> datagram(1500);
  uint32_t got = 0;
  for (;;) {
    const ssize_t n =
        recv((*sender)->socket().fd(), datagram.data(), datagram.size(), MSG_DONTWAIT);
    if (n < 0) break;
    std::array<NackRequest, 4> asked;
    size_t count = 0;
    ASSERT_EQ(ParseGenericNacks({datagram.data(), static_cast<size_t>(n)}, asked, &count),
              RtcpError::kOk);
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(asked[0].entry.pid, 1);
    EXPECT_EQ(asked[0].entry.blp, 0);
    EXPECT_EQ(asked[0].media_ssrc, plan.ssrc);
    ++got;
  }
  EXPECT_EQ(got, nacks);
  const TileReceiverStats st = receiver.Snapshot();
  EXPECT_EQ(st.loss.requested, requests);
  EXPECT_EQ(st.loss.asked_again, requests - 1);
  EXPECT_EQ(st.loss.nacks, nacks);
}

TEST(TileReceiver, ARequestAskedAgainGoesTwiceOnTheWire) { ExpectNacksOnTheWire(1); }

// The wall said "nack_copies 2": the first request goes twice too.
TEST(TileReceiver, AFirstRequestGoesTwiceOnTheWireWhereTheWallSays) { ExpectNacksOnTheWire(2); }

}  // namespace
}  // namespace tilestream
