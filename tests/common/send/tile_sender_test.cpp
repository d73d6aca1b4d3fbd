// A tile stream over loopback: packets reassemble to the frame, sequence
// numbers run on across frames, pacing spreads the frame, and a hurry sends
// the rest at once.
#include "common/send/tile_sender.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <thread>

#include "common/base/bytes.h"
#include "tests/support/packet_builder.h"
#include "tests/support/wait_for.h"

namespace tilestream {
namespace {

using testing::PatternFrame;

const TileGeometry kTile{200, 60};

struct Collected {
  std::vector<std::byte> frame = std::vector<std::byte>(kTile.frame_bytes());
  std::vector<uint32_t> sequences;
  std::vector<uint32_t> timestamps;
  size_t markers = 0;
};

class Loopback : public ::testing::Test {
 protected:
  void SetUp() override {
    UdpReceiverOptions ro;
    ro.bind_address = "127.0.0.1";
    ro.receive_buffer = 8 << 20;
    ro.timeout_ms = 20;
    auto r = UdpReceiver::Open(ro);
    ASSERT_TRUE(r.ok());
    receiver_ = std::make_unique<UdpReceiver>(std::move(r).value());
  }

  std::unique_ptr<TileSender> MakeSender(bool pacing, uint32_t mtu = 1500,
                                         uint64_t burst_bytes = 4 * 1500, TileGeometry tile = kTile,
                                         Clock* clock = nullptr) {
    TileSenderOptions o;
    o.packetizer.tile = tile;
    o.packetizer.max_payload = MaxUdpPayloadForMtu(mtu);
    o.packetizer.ssrc = 77;
    o.socket.destination = "127.0.0.1";
    o.socket.port = receiver_->port();
    o.pacing = pacing;
    o.max_burst_bytes = burst_bytes;  // several bursts per frame, to see the pacing
    auto s = TileSender::Create(o, clock ? clock : &clock_);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::move(s).value();
  }

  Collected Receive(size_t packets) {
    Collected c;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (c.sequences.size() < packets && std::chrono::steady_clock::now() < give_up) {
      if (receiver_->ReceiveBatch().messages == 0) continue;
      receiver_->ForEachDatagram([&](std::span<const std::byte> d, const sockaddr_storage&) {
        Rfc4175View v;
        ASSERT_EQ(ParseRfc4175(d, kTile, &v), ParseError::kOk);
        CopySegmentsToFrame(v, kTile, c.frame);
        c.sequences.push_back(v.sequence32());
        c.timestamps.push_back(v.rtp.timestamp);
        c.markers += v.rtp.marker;
      });
    }
    return c;
  }

  // The frame arrives whole, unless a datagram was counted lost on the
  // way: refused to the sender, or dropped by the receiving socket's
  // kernel. Then what arrived is what was not counted lost. These tests
  // share the machine's loopback with the live tests CI runs beside them
  // (scripts/test.sh); a paced frame once arrived short there.
  void ExpectWholeUnlessCountedLost(const TileSender& sender, const std::vector<std::byte>& f) {
    const uint32_t n = sender.packetizer().packet_count();
    const Collected c = Receive(n);
    receiver_->UpdateKernelDrops();
    const uint64_t lost = sender.socket().stats().dropped + receiver_->stats().kernel_drops;
    if (lost == 0)
      EXPECT_TRUE(c.frame == f) << c.sequences.size() << " of " << n << " packets arrived, none "
                                << "counted lost (sender's no_buffer "
                                << sender.socket().stats().no_buffer << ")";
    else
      EXPECT_EQ(c.sequences.size() + lost, n);
  }

  MonotonicClock clock_;
  std::unique_ptr<UdpReceiver> receiver_;
};

TEST_F(Loopback, FramesReassembleWithSequenceRunningOn) {
  auto sender = MakeSender(false);
  const uint32_t n = sender->packetizer().packet_count();
  const auto f0 = PatternFrame(kTile, 1), f1 = PatternFrame(kTile, 2);
  ASSERT_TRUE(sender->SendFrame(f0.data(), 1000, clock_.NowNs(), 1'000'000, nullptr).ok());
  Collected a = Receive(n);
  ASSERT_TRUE(sender->SendFrame(f1.data(), 4600, clock_.NowNs(), 1'000'000, nullptr).ok());
  Collected b = Receive(n);
  EXPECT_TRUE(a.frame == f0);
  EXPECT_TRUE(b.frame == f1);
  ASSERT_EQ(a.sequences.size(), n);
  ASSERT_EQ(b.sequences.size(), n);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(a.sequences[i], i);
    EXPECT_EQ(b.sequences[i], n + i);
    EXPECT_EQ(a.timestamps[i], 1000u);
    EXPECT_EQ(b.timestamps[i], 4600u);
  }
  EXPECT_EQ(a.markers, 1u);
  EXPECT_EQ(sender->stats().frames, 2u);
  EXPECT_LT(sender->socket().stats().syscalls, 2u * n);  // GSO batches
}

// A burst of many packets, more than one GSO message holds (64), of two
// sizes (the frame's last packet is shorter): one system call.
TEST_F(Loopback, ABurstIsOneSystemCallWhateverItHolds) {
  auto sender = MakeSender(false, 500, 1 << 20);
  const uint32_t n = sender->packetizer().packet_count();
  ASSERT_GT(n, 64u);
  const auto f = PatternFrame(kTile, 5);
  ASSERT_TRUE(sender->SendFrame(f.data(), 1, clock_.NowNs(), 1'000'000, nullptr).ok());
  EXPECT_EQ(sender->socket().stats().syscalls, 1u);
  EXPECT_EQ(sender->socket().stats().datagrams, n);
  const Collected c = Receive(n);
  EXPECT_TRUE(c.frame == f);
  for (uint32_t i = 0; i < c.sequences.size(); ++i) EXPECT_EQ(c.sequences[i], i);
}

// The receiver predicts where a GRO message's pixels go from whole GSO
// sends (common/receive/packet_placement.h): a burst that ended inside one
// (58 packets in sends of 7) made the next send's prediction wrong, and
// 14% of the reference wall's bytes were copied twice more.
TEST_F(Loopback, EveryBurstIsWholeGsoSendsSoEveryGroMessageButTheFramesTailIsFull) {
  const TileGeometry wide{2560, 100};  // 86 packets at MTU 9000, 7 per GSO send
  auto sender = MakeSender(false, 9000, 150'000, wide);
  if (!sender->socket().gso() || !receiver_->gro()) GTEST_SKIP() << "no UDP GSO/GRO here";
  const uint32_t n = sender->packetizer().packet_count();
  const auto f = PatternFrame(wide, 5);
  ASSERT_TRUE(sender->SendFrame(f.data(), 1, clock_.NowNs(), 1'000'000, nullptr).ok());
  EXPECT_EQ(sender->pacer().burst_packets(), 14u);  // 16 by the byte bound
  std::vector<uint32_t> segments;                   // per GRO message
  uint32_t received = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (received < n && std::chrono::steady_clock::now() < give_up) {
    const int messages = receiver_->ReceiveBatch().messages;
    for (int m = 0; m < messages; ++m) {
      const size_t length = receiver_->message_length(m), seg = receiver_->segment_size(m);
      segments.push_back(static_cast<uint32_t>(seg ? (length + seg - 1) / seg : 1));
      received += segments.back();
    }
  }
  ASSERT_EQ(received, n);
  // The frame's tail: its last full-size packet (86 = 12 x 7 + 2), then its
  // last packet, which is shorter and so a GSO send of its own.
  ASSERT_EQ(segments.size(), 14u);
  for (size_t m = 0; m < 12; ++m) EXPECT_EQ(segments[m], 7u) << "message " << m;
}

TEST_F(Loopback, PacingSpreadsTheFrameOverTheInterval) {
  auto sender = MakeSender(true);
  const auto f = PatternFrame(kTile, 3);
  const int64_t start = clock_.NowNs();
  ASSERT_TRUE(sender->SendFrame(f.data(), 1, start, 100'000'000, nullptr).ok());  // 100 ms
  const int64_t took = clock_.NowNs() - start;
  // The last burst's slot is just under 95% of 100 ms; pacing never sends early.
  const uint32_t n = sender->packetizer().packet_count();
  EXPECT_GE(took, 95'000'000LL * (n - 4) / n);
  EXPECT_GT(sender->pacer().stats().sleeps, 0u);
  ExpectWholeUnlessCountedLost(*sender, f);
}

TEST_F(Loopback, HurrySendsTheRestAtOnceAndCountsALateFrame) {
  auto sender = MakeSender(true);
  const auto f = PatternFrame(kTile, 4);
  int asked = 0;
  const std::function<bool()> hurry = [&] { return ++asked > 1; };
  const int64_t start = clock_.NowNs();
  ASSERT_TRUE(sender->SendFrame(f.data(), 1, start, 10'000'000'000LL, hurry).ok());  // a 10 s frame
  EXPECT_LT(clock_.NowNs() - start, 5'000'000'000LL);
  EXPECT_EQ(sender->stats().late_frames, 1u);
  ExpectWholeUnlessCountedLost(*sender, f);
}

// A clock the test sets: time is the test's, not the VM host's.
class SetClock final : public Clock {
 public:
  int64_t NowNs() override { return now_; }
  void SleepUntilNs(int64_t deadline_ns) override { now_ = std::max(now_, deadline_ns); }
  void Set(int64_t ns) { now_ = ns; }

 private:
  int64_t now_ = 1'000'000'000;
};

// The stepwise API a rank serving several tiles uses: bursts due one after
// the other over the interval, the frame whole, ended by its last burst.
// Each burst goes at its slot on a clock the test moves (on the real one a
// preempted test saw the rest of the frame squeezed past the interval).
TEST_F(Loopback, InStepsEachBurstIsDueInTurnAndTheFrameArrivesWhole) {
  SetClock clock;
  auto sender = MakeSender(true, 1500, 4 * 1500, kTile, &clock);
  const auto f = PatternFrame(kTile, 6);
  const int64_t start = clock.NowNs();
  sender->BeginFrame(f.data(), 9, start, 20'000'000);  // 20 ms
  int64_t last_due = start - 1;
  int bursts = 0;
  while (sender->sending()) {
    const int64_t due = sender->NextBurstNs();
    EXPECT_GT(due, last_due);
    EXPECT_LT(due, start + 19'000'000);  // within 95% of the interval
    last_due = due;
    clock.Set(due);
    ASSERT_TRUE(sender->SendBurst(false).ok());
    ++bursts;
  }
  const uint32_t n = sender->packetizer().packet_count();
  const uint32_t per_burst = sender->pacer().burst_packets();
  EXPECT_GT(bursts, 1);
  EXPECT_EQ(bursts, static_cast<int>((n + per_burst - 1) / per_burst));
  EXPECT_EQ(sender->stats().frames, 1u);
  EXPECT_EQ(sender->stats().late_frames, 0u);
  const Collected c = Receive(n);
  EXPECT_TRUE(c.frame == f);
  for (uint32_t i = 0; i < c.sequences.size(); ++i) EXPECT_EQ(c.sequences[i], i);

  auto unpaced = MakeSender(false);
  unpaced->BeginFrame(f.data(), 9, start, 20'000'000);
  EXPECT_EQ(unpaced->NextBurstNs(), std::numeric_limits<int64_t>::min()) << "due at once";
}

// The kernel refusing the message that starts with RTP sequence number
// g_refused_sequence (a firewall rule on the sender's output), as the
// kernel does: the messages before it go out, the call returns their count.
uint16_t g_refused_sequence = 0;
int g_refused_errno = 0;

int RefuseSequence(int fd, mmsghdr* messages, unsigned count, int flags) {
  for (unsigned i = 0; i < count; ++i) {
    const auto* rtp = static_cast<const std::byte*>(messages[i].msg_hdr.msg_iov[0].iov_base);
    if (LoadBE16(rtp + 2) != g_refused_sequence) continue;
    if (i > 0) return ::sendmmsg(fd, messages, i, flags);
    errno = g_refused_errno;
    return -1;
  }
  return ::sendmmsg(fd, messages, count, flags);
}

class Refusing : public Loopback {
 protected:
  std::unique_ptr<TileSender> MakeRefusingSender(uint16_t sequence, int e) {
    g_refused_sequence = sequence;
    g_refused_errno = e;
    TileSenderOptions o;
    o.packetizer.tile = kTile;
    o.packetizer.max_payload = MaxUdpPayloadForMtu(1500);
    o.packetizer.ssrc = 77;
    o.socket.destination = "127.0.0.1";
    o.socket.port = receiver_->port();
    o.socket.gso = false;  // a message per datagram: the refusal is of one
    o.socket.calls.sendmmsg = RefuseSequence;
    o.pacing = false;
    auto s = TileSender::Create(o, &clock_);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::move(s).value();
  }
};

TEST_F(Refusing, ARefusedDatagramCostsItOnlyAndTheFramesKeepTheirSequenceNumbers) {
  auto sender = MakeRefusingSender(5, EPERM);
  const uint32_t n = sender->packetizer().packet_count();
  const auto f0 = PatternFrame(kTile, 1), f1 = PatternFrame(kTile, 2);
  ASSERT_TRUE(sender->SendFrame(f0.data(), 1000, clock_.NowNs(), 1'000'000, nullptr).ok());
  ASSERT_TRUE(sender->SendFrame(f1.data(), 4600, clock_.NowNs(), 1'000'000, nullptr).ok());
  const Collected c = Receive(2 * n - 1);
  ASSERT_EQ(c.sequences.size(), 2 * n - 1);
  for (uint32_t i = 0, k = 0; i < 2 * n; ++i) {
    if (i == 5) continue;
    EXPECT_EQ(c.sequences[k++], i);
  }
  EXPECT_EQ(c.markers, 2u);
  EXPECT_EQ(sender->stats().frames, 2u);
  EXPECT_TRUE(sender->ended().ok());
  EXPECT_EQ(sender->socket().stats().refusals.of(EPERM), 1u);
  EXPECT_EQ(sender->socket().stats().dropped, 1u);
}

TEST_F(Refusing, AnErrorAfterWhichTheSocketCannotSendEndsTheSenderWithIt) {
  auto sender = MakeRefusingSender(5, EBADF);
  const auto f = PatternFrame(kTile, 1);
  EXPECT_EQ(sender->SendFrame(f.data(), 1000, clock_.NowNs(), 1'000'000, nullptr).error, EBADF);
  EXPECT_EQ(sender->ended().error, EBADF);
  EXPECT_EQ(sender->socket().stats().datagrams, 5u);
  EXPECT_EQ(sender->SendFrame(f.data(), 4600, clock_.NowNs(), 1'000'000, nullptr).error, EBADF);
  EXPECT_FALSE(sender->sending());
  EXPECT_EQ(sender->socket().stats().datagrams, 5u) << "nothing more after the end";
  EXPECT_EQ(sender->stats().frames, 0u);
}

// Retransmission: the receiver's Generic NACK comes back on the stream's
// socket; the sender answers with RFC 4588 packets of the last two frames.
class Retransmitting : public Loopback {
 protected:
  // `calls`: the socket's system calls (a refusing kernel), without GSO.
  std::unique_ptr<TileSender> MakeSender(double share, std::optional<SocketCalls> calls = {},
                                         uint32_t history = 3) {
    TileSenderOptions o;
    o.history_frames = history;
    o.packetizer.tile = kTile;
    o.packetizer.max_payload = MaxUdpPayloadForMtu(1500);
    o.packetizer.ssrc = 77;
    o.socket.destination = "127.0.0.1";
    o.socket.port = receiver_->port();
    if (calls) {
      o.socket.calls = *calls;
      o.socket.gso = false;
    }
    o.pacing = false;
    o.retransmission = true;
    o.retransmission_share = share;
    o.rtx_payload_type = 97;
    o.rtx_ssrc = 78;
    auto s = TileSender::Create(o, &clock_);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::move(s).value();
  }

  // Every datagram that arrives, by its (RTP or original) sequence number,
  // and where the stream comes from.
  void Collect(size_t datagrams) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    size_t got = 0;
    while (got < datagrams && std::chrono::steady_clock::now() < give_up) {
      if (receiver_->ReceiveBatch().messages == 0) continue;
      receiver_->ForEachDatagram([&](std::span<const std::byte> d, const sockaddr_storage& from) {
        ++got;
        from_ = from;
        const bool rtx = (static_cast<uint8_t>(d[1]) & 0x7f) == 97;
        (rtx ? rtx_ : original_)[LoadBE16(d.data() + (rtx ? kRtpHeaderSize : 2))] =
            std::vector<std::byte>(d.begin(), d.end());
      });
    }
  }

  void Nack(TileSender& sender, std::vector<uint16_t> lost) {
    std::vector<std::byte> nack(1500);
    size_t taken = 0;
    nack.resize(WriteGenericNack(1, 77, lost, nack, &taken));
    const uint64_t before = sender.stats().nacks;
    receiver_->SendTo(nack, from_);
    EXPECT_TRUE(testing::WaitFor([&] {
      sender.AnswerFeedback();
      return sender.stats().nacks > before;
    }));
  }

  sockaddr_storage from_{};
  std::map<uint16_t, std::vector<std::byte>> original_, rtx_;
};

TEST_F(Retransmitting, AnswersANackWithTheAskedPacketsOfTheLastTwoFrames) {
  auto sender = MakeSender(1.0);
  const uint32_t n = sender->packetizer().packet_count();
  const auto f0 = PatternFrame(kTile, 1), f1 = PatternFrame(kTile, 2);
  ASSERT_TRUE(sender->SendFrame(f0.data(), 1000, clock_.NowNs(), 1'000'000, nullptr).ok());
  ASSERT_TRUE(sender->SendFrame(f1.data(), 4600, clock_.NowNs(), 1'000'000, nullptr).ok());
  Collect(2 * n);
  ASSERT_EQ(original_.size(), 2 * n);
  const auto packet_of_f1 = static_cast<uint16_t>(n + 2),
             never_sent = static_cast<uint16_t>(2 * n + 5);
  Nack(*sender, {1, packet_of_f1, never_sent});
  Collect(2);
  ASSERT_EQ(rtx_.size(), 2u);
  for (uint16_t sequence : {uint16_t{1}, packet_of_f1}) {
    ASSERT_TRUE(rtx_.count(sequence)) << sequence;
    Rfc4175View r, o;
    uint16_t rtx_sequence = 0;
    ASSERT_EQ(ParseRtx(rtx_[sequence], kTile, &r, &rtx_sequence), ParseError::kOk);
    ASSERT_EQ(ParseRfc4175(original_[sequence], kTile, &o), ParseError::kOk);
    EXPECT_EQ(r.rtp.payload_type, 97);
    EXPECT_EQ(r.rtp.ssrc, 78u);
    EXPECT_EQ(r.rtp.timestamp, o.rtp.timestamp);
    EXPECT_EQ(r.sequence32(), o.sequence32());
    EXPECT_TRUE(std::equal(r.pixels.begin(), r.pixels.end(), o.pixels.begin(), o.pixels.end()));
    // Byte for byte what any RFC 4588 sender makes of the original.
    EXPECT_EQ(rtx_[sequence], testing::MakeRtx(original_[sequence], 97, 78, rtx_sequence));
  }
  EXPECT_EQ(sender->stats().retransmitted, 2u);
  EXPECT_EQ(sender->stats().refused_old, 1u);
  // Once the ring has the older frame's buffer back, only the last frame is.
  sender->ForgetOlderFrames();
  Nack(*sender, {1});
  EXPECT_EQ(sender->stats().refused_old, 2u);
}

// A playout latency keeps more frames retrievable (streamer/tile_stream.cpp,
// HistoryFrames): the one being sent and history - 1 before it; the ring
// gives back what it no longer keeps.
TEST_F(Retransmitting, KeepsAsManyFramesRetrievableAsItsHistory) {
  auto sender = MakeSender(1.0, {}, 5);
  const uint32_t n = sender->packetizer().packet_count();
  std::vector<std::vector<std::byte>> frames;
  for (int k = 0; k < 6; ++k) {
    frames.push_back(PatternFrame(kTile, k + 1));
    ASSERT_TRUE(
        sender->SendFrame(frames.back().data(), 1000 + 3600 * k, clock_.NowNs(), 1'000'000, nullptr)
            .ok());
  }
  Collect(6 * n);
  // Frames 1..5 are the last five; frame 0 is not.
  Nack(*sender, {static_cast<uint16_t>(n + 3), 3});
  Collect(1);
  EXPECT_EQ(rtx_.size(), 1u);
  EXPECT_TRUE(rtx_.count(static_cast<uint16_t>(n + 3)));
  EXPECT_EQ(sender->stats().refused_old, 1u);
  sender->ForgetFramesFrom(3);  // a ring that keeps 3 released: frames 1 and 2 are gone
  Nack(*sender, {static_cast<uint16_t>(n + 3), static_cast<uint16_t>(3 * n + 3)});
  Collect(1);  // only the second: the first is refused
  EXPECT_EQ(sender->stats().refused_old, 2u);
  EXPECT_EQ(sender->stats().retransmitted, 2u);
  EXPECT_TRUE(rtx_.count(static_cast<uint16_t>(3 * n + 3)));
}

// The cap: a bucket of at least 128 KiB (here: two frames' share is less),
// full at the start, filled by a tenth of every byte sent; a burst beyond
// it borrows as much again, counted, and no more.
TEST_F(Retransmitting, RetransmitsNoMoreThanItsBucketAndShareOfTheBytesSent) {
  auto sender = MakeSender(0.1);
  const uint32_t n = sender->packetizer().packet_count();
  const auto f = PatternFrame(kTile, 1);
  ASSERT_TRUE(sender->SendFrame(f.data(), 1000, clock_.NowNs(), 1'000'000, nullptr).ok());
  Collect(n);
  std::vector<uint16_t> all(n);
  for (uint16_t k = 0; k < n; ++k) all[k] = k;
  for (int round = 0; round < 8; ++round) Nack(*sender, all);  // 8 x 36 KB asked for
  const TileSenderStats& st = sender->stats();
  const double stream_bytes =
      static_cast<double>(sender->socket().stats().bytes - st.retransmitted_bytes);
  EXPECT_GT(st.retransmitted, 0u);
  EXPECT_GT(st.refused_cap, 0u);
  EXPECT_EQ(st.retransmitted + st.refused_cap, 8u * n);
  EXPECT_GT(static_cast<double>(st.retransmitted_bytes), 128 * 1024 + 0.1 * stream_bytes);
  EXPECT_LE(static_cast<double>(st.retransmitted_bytes), 2 * 128 * 1024 + 0.1 * stream_bytes);
  EXPECT_GT(st.borrowed, 0u);
  EXPECT_LT(st.borrowed, st.retransmitted);  // the bucket's own first
}

TEST_F(Retransmitting, ARefusedDatagramIsRepairedLikeAnyLoss) {
  g_refused_sequence = 3;
  g_refused_errno = EPERM;
  SocketCalls refusing;
  refusing.sendmmsg = RefuseSequence;
  auto sender = MakeSender(1.0, refusing);
  const auto f = PatternFrame(kTile, 1);
  ASSERT_TRUE(sender->SendFrame(f.data(), 1000, clock_.NowNs(), 1'000'000, nullptr).ok());
  Collect(sender->packetizer().packet_count() - 1);
  EXPECT_EQ(original_.count(3), 0u);
  Nack(*sender, {3});
  Collect(1);
  ASSERT_EQ(rtx_.count(3), 1u) << "the refused packet, sent again";
  EXPECT_EQ(sender->stats().retransmitted, 1u);
}

TEST_F(Retransmitting, TakesWhatIsNotRtcpOrBrokenWithoutAnAnswer) {
  auto sender = MakeSender(1.0);
  const auto f = PatternFrame(kTile, 1);
  ASSERT_TRUE(sender->SendFrame(f.data(), 1000, clock_.NowNs(), 1'000'000, nullptr).ok());
  Collect(sender->packetizer().packet_count());
  const std::vector<std::byte> junk(40, std::byte{0x80});
  receiver_->SendTo(junk, from_);
  EXPECT_TRUE(testing::WaitFor([&] {
    sender->AnswerFeedback();
    return sender->stats().feedback_malformed > 0;
  }));
  EXPECT_EQ(sender->stats().retransmitted, 0u);
}

}  // namespace
}  // namespace tilestream
