#include "testbed/path_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace tilestream {
namespace {

constexpr int64_t kMs = 1'000'000;

PathSpec Spec(const std::string& text) {
  auto s = ParsePathSpec(text);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : PathSpec{};
}

PacketInfo Udp(uint32_t bytes = 9000, uint32_t to = 0x0a0a000b) {
  return {.direction = Direction::kOut, .udp = true, .destination = to, .bytes = bytes};
}

TEST(PathSpec, ReadsEveryKey) {
  const PathSpec s = Spec(
      "rtt=20ms,jitter=2ms,jitter_period=15ms,loss=0.5%,tcp_loss=yes,burst=50,burst_at=3s,"
      "burst_to=10.10.0.11,reorder=0.01,reorder_by=500us,rate=2.5gbit,seed=7");
  EXPECT_EQ(s.delay_ns, 10 * kMs);
  EXPECT_EQ(s.jitter_ns, 2 * kMs);
  EXPECT_EQ(s.jitter_period_ns, 15 * kMs);
  EXPECT_DOUBLE_EQ(s.loss, 0.005);
  EXPECT_TRUE(s.tcp_loss);
  EXPECT_EQ(s.burst, 50u);
  EXPECT_EQ(s.burst_at_ns, 3000 * kMs);
  EXPECT_EQ(s.burst_to, 0x0a0a000bu);
  EXPECT_DOUBLE_EQ(s.reorder, 0.01);
  EXPECT_EQ(s.reorder_by_ns, 500'000);
  EXPECT_DOUBLE_EQ(s.rate_bps, 2.5e9);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(Spec("delay=40ms").delay_ns, 40 * kMs);
  EXPECT_EQ(Spec("").delay_ns, 0);
}

TEST(PathSpec, RefusesWhatItCannotMeanNamingTheKey) {
  for (const char* bad : {"rtt=20", "rtt=-5ms", "rtt=11s", "loss=150%", "loss=2", "rate=0gbit",
                          "rate=5gbps", "burst_to=10.10.0.300", "burst=x", "tcp_loss=maybe",
                          "colour=blue", "rtt", "jitter=nanms", "reorder_by=0ms", "rtt=1e400ms"}) {
    auto s = ParsePathSpec(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_NE(s.status().message().find("path:"), std::string::npos) << bad;
    }
  }
  EXPECT_FALSE(ParsePathSpec(std::string(2000, 'a')).ok());
}

TEST(PathModel, DelaysEachWayByHalfTheRoundTrip) {
  PathModel m(Spec("rtt=20ms"), 0);
  EXPECT_EQ(m.Judge(Udp(), 5 * kMs).release_ns, 15 * kMs);
  PacketInfo in = Udp();
  in.direction = Direction::kIn;
  in.udp = false;
  EXPECT_EQ(m.Judge(in, 6 * kMs).release_ns, 16 * kMs);
  EXPECT_EQ(m.counts(Direction::kOut).packets, 1u);
  EXPECT_EQ(m.counts(Direction::kIn).packets, 1u);
}

// The delay's spread is the normal distribution asked for, in order.
TEST(PathModel, JitterIsNormalOfTheDeviationAskedAndKeepsOrder) {
  PathModel m(Spec("delay=10ms,jitter=2ms"), 0);
  std::vector<int64_t> delays;
  int64_t last = 0;
  for (int64_t t = 0; t < 200'000 * kMs; t += kMs / 10) {  // 2M packets over 200 s
    const PathVerdict v = m.Judge(Udp(), t);
    ASSERT_GE(v.release_ns, last);
    last = v.release_ns;
    delays.push_back(v.release_ns - t);
  }
  std::sort(delays.begin(), delays.end());
  auto ms = [&](double p) { return delays[static_cast<size_t>(p * (delays.size() - 1))] / 1e6; };
  EXPECT_NEAR(ms(0.5), 10.0, 0.3);
  EXPECT_NEAR(ms(0.99), 10 + 2.326 * 2, 0.4);
  EXPECT_NEAR(ms(0.01), 10 - 2.326 * 2, 0.4);
  EXPECT_GE(ms(0), 10 - 3 * 2 - 0.01);
  EXPECT_LE(ms(1), 10 + 3 * 2 + 0.01);
}

TEST(PathModel, LosesUdpAtTheShareAskedAndTcpOnlyWhenAsked) {
  PathModel m(Spec("loss=1%,seed=3"), 0);
  PacketInfo tcp = Udp();
  tcp.udp = false;
  uint64_t lost = 0, tcp_lost = 0;
  for (int i = 0; i < 100'000; ++i) {
    lost += m.Judge(Udp(), i).drop;
    tcp_lost += m.Judge(tcp, i).drop;
  }
  EXPECT_NEAR(lost, 1000.0, 150);
  EXPECT_EQ(tcp_lost, 0u);
  EXPECT_EQ(m.counts(Direction::kOut).lost, lost);
  PathModel both(Spec("loss=1%,tcp_loss=yes"), 0);
  for (int i = 0; i < 100'000; ++i) tcp_lost += both.Judge(tcp, i).drop;
  EXPECT_NEAR(tcp_lost, 1000.0, 150);
}

TEST(PathModel, ABurstTakesThatManyInARowToItsAddressFromItsTime) {
  PathModel m(Spec("burst=50,burst_at=1s,burst_to=10.10.0.12"), 0);
  EXPECT_FALSE(m.Judge(Udp(9000, 0x0a0a000c), 999 * kMs).drop);  // before its time
  int dropped = 0;
  for (int i = 0; i < 200; ++i) {
    EXPECT_FALSE(m.Judge(Udp(9000, 0x0a0a000b), 1000 * kMs + i).drop);  // another address
    const bool drop = m.Judge(Udp(9000, 0x0a0a000c), 1000 * kMs + i).drop;
    EXPECT_EQ(drop, i < 50) << i;
    dropped += drop;
  }
  EXPECT_EQ(dropped, 50);
  EXPECT_EQ(m.counts(Direction::kOut).burst_lost, 50u);
}

TEST(PathModel, AReorderedPacketIsPassedByLaterOnesWithinItsBound) {
  PathModel m(Spec("delay=5ms,reorder=10%,reorder_by=1ms,seed=5"), 0);
  uint64_t reordered = 0;
  for (int64_t i = 0; i < 10'000; ++i) {
    const int64_t now = i * 10'000;  // every 10 us
    const PathVerdict v = m.Judge(Udp(), now);
    if (!v.reordered) {
      EXPECT_EQ(v.release_ns, now + 5 * kMs);
      continue;
    }
    ++reordered;
    EXPECT_GT(v.release_ns, now + 5 * kMs);  // later ones, 10 us behind, go first
    EXPECT_LE(v.release_ns, now + 6 * kMs);
  }
  EXPECT_NEAR(reordered, 1000.0, 150);
  EXPECT_EQ(m.counts(Direction::kOut).reordered, reordered);
}

TEST(PathModel, ARateCapSpacesTheBytesOut) {
  PathModel m(Spec("rate=1gbit"), 0);
  int64_t last = 0;
  for (int i = 0; i < 100; ++i) {  // all at once: 9000 bytes are 72 us at 1 Gbit/s
    const int64_t release = m.Judge(Udp(9000), 0).release_ns;
    if (i > 0) {
      EXPECT_EQ(release - last, 72'000);
    }
    last = release;
  }
}

}  // namespace
}  // namespace tilestream
