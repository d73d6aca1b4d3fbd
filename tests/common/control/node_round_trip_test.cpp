#include "common/control/node_round_trip.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

using Via = NodeRoundTrip::Via;
constexpr int64_t kMs = 1'000'000, kS = 1'000'000'000;

// Joined, its datagrams known, a pong that way after 40 ms.
NodeRoundTrip MeasuredByDatagram() {
  NodeRoundTrip r;
  r.Joined();
  r.DatagramsKnown();
  r.Pong(Via::kDatagram, 0, 40 * kMs);
  return r;
}

// Until the node's datagrams are known, pings go and come by line: three
// on joining, each after the last one's pong.
TEST(NodeRoundTrip, ByLineThreeOnJoiningUntilDatagramsAreKnown) {
  NodeRoundTrip r;
  EXPECT_EQ(r.Joined(), Via::kLine);
  EXPECT_EQ(r.Pong(Via::kLine, 0, 40 * kMs).ping, Via::kLine);
  EXPECT_EQ(r.Pong(Via::kLine, 40 * kMs, 81 * kMs).ping, Via::kLine);
  const NodeRoundTrip::Answer third = r.Pong(Via::kLine, 81 * kMs, 121 * kMs);
  EXPECT_TRUE(third.sampled);
  EXPECT_EQ(third.ping, Via::kNone);
  EXPECT_EQ(r.estimate().samples, 3u);
  EXPECT_EQ(r.way(), Via::kLine);
  EXPECT_TRUE(r.settled());
}

// The join's ping by line loses a segment: its pong comes a
// retransmission timeout late. The node's first datagram brings a ping by
// datagram; its pong starts the estimate over, and the late line's pong
// is not taken.
TEST(NodeRoundTrip, ADatagramsPongStartsTheEstimateOverAndLinesAreNoLongerTaken) {
  NodeRoundTrip r;
  r.Joined();
  EXPECT_EQ(r.DatagramsKnown(), Via::kDatagram);
  EXPECT_EQ(r.DatagramsKnown(), Via::kNone);  // once
  EXPECT_EQ(r.way(), Via::kDatagram);
  const NodeRoundTrip::Answer first = r.Pong(Via::kDatagram, 1 * kMs, 41 * kMs);
  EXPECT_TRUE(first.sampled);
  EXPECT_EQ(first.ping, Via::kDatagram);
  EXPECT_FALSE(r.Pong(Via::kLine, 0, 280 * kMs).sampled);
  EXPECT_EQ(r.estimate().rtt_ns, 40 * kMs);
  EXPECT_EQ(r.estimate().rttvar_ns, 0);
  // A line's pong taken before a datagram's is forgotten by it: until
  // then the estimate is not settled.
  NodeRoundTrip s;
  s.Joined();
  EXPECT_FALSE(s.settled());
  EXPECT_TRUE(s.Pong(Via::kLine, 0, 280 * kMs).sampled);
  EXPECT_FALSE(s.settled());
  s.DatagramsKnown();
  // Its datagram ping is under way: no second one for the line's pong.
  EXPECT_EQ(s.Pong(Via::kLine, 0, 281 * kMs).ping, Via::kNone);
  EXPECT_FALSE(s.settled());
  EXPECT_TRUE(s.Pong(Via::kDatagram, 281 * kMs, 321 * kMs).sampled);
  EXPECT_EQ(s.estimate().rtt_ns, 40 * kMs);
  EXPECT_EQ(s.estimate().samples, 1u);
  EXPECT_TRUE(s.settled());
}

// A node that joins again is measured afresh, by line until its new
// datagrams come; a pong stamped in the future is nobody's.
TEST(NodeRoundTrip, JoiningAgainStartsOver) {
  NodeRoundTrip r;
  r.Joined();
  r.DatagramsKnown();
  r.Pong(Via::kDatagram, 0, 40 * kMs);
  EXPECT_EQ(r.Joined(), Via::kLine);
  EXPECT_EQ(r.way(), Via::kLine);
  EXPECT_EQ(r.estimate().samples, 0u);
  EXPECT_FALSE(r.Pong(Via::kLine, 50 * kMs, 40 * kMs).sampled);
  EXPECT_TRUE(r.Pong(Via::kLine, 10 * kMs, 50 * kMs).sampled);
}

// A firewall starts dropping UDP mid-run: the pings by datagram go
// unanswered. A lost ping or two changes nothing; unanswered for 3 s (and
// more than three), the pings go by line again and the estimate is the
// lines' from then on: it follows a path that changed while UDP was
// blocked, where it kept the last datagram's before.
TEST(NodeRoundTrip, PingsByDatagramUnansweredForThreeSecondsGoByLineAgain) {
  NodeRoundTrip r = MeasuredByDatagram();
  EXPECT_EQ(r.Ping(1 * kS), Via::kDatagram);  // lost
  EXPECT_EQ(r.Ping(2 * kS), Via::kDatagram);  // lost
  EXPECT_EQ(r.Ping(3 * kS), Via::kDatagram);
  EXPECT_TRUE(r.Pong(Via::kDatagram, 3 * kS, 3 * kS + 40 * kMs).sampled);  // answered: all well
  for (int64_t s = 4; s <= 6; ++s) EXPECT_EQ(r.Ping(s * kS), Via::kDatagram) << s;  // blocked now
  EXPECT_EQ(r.Ping(7 * kS), Via::kLine);  // the fourth, 3 s after the first
  EXPECT_EQ(r.way(), Via::kLine);
  EXPECT_EQ(r.estimate().samples, 0u);
  EXPECT_FALSE(r.settled());
  // The path grew to 90 ms meanwhile: three pongs by line, one after another.
  NodeRoundTrip::Answer a = r.Pong(Via::kLine, 7 * kS, 7 * kS + 90 * kMs);
  EXPECT_TRUE(a.sampled);
  EXPECT_EQ(a.ping, Via::kLine);
  r.Pong(Via::kLine, 7 * kS + 90 * kMs, 7 * kS + 180 * kMs);
  a = r.Pong(Via::kLine, 7 * kS + 180 * kMs, 7 * kS + 270 * kMs);
  EXPECT_EQ(a.ping, Via::kNone);
  EXPECT_TRUE(r.settled());
  EXPECT_EQ(r.estimate().rtt_ns, 90 * kMs);
  EXPECT_EQ(r.Ping(8 * kS), Via::kLine);
}

// UDP gets through again: the node's next datagram brings a ping that
// way, and its pong starts the estimate over from the datagrams'. Where
// only the way to the node is blocked, its datagrams keep coming, the
// pings by datagram keep going unanswered, and each time the estimate the
// lines measured stays.
TEST(NodeRoundTrip, DatagramsThatComeAgainAreTriedAgainAndTheLinesEstimateStaysMeanwhile) {
  NodeRoundTrip r = MeasuredByDatagram();
  for (int64_t s = 1; s <= 3; ++s) r.Ping(s * kS);
  EXPECT_EQ(r.Ping(4 * kS), Via::kLine);
  for (int i = 0; i < 3; ++i) r.Pong(Via::kLine, 5 * kS, 5 * kS + 60 * kMs);
  ASSERT_TRUE(r.settled());
  // A datagram of the node's: tried again, once.
  EXPECT_EQ(r.DatagramsKnown(), Via::kDatagram);
  EXPECT_EQ(r.DatagramsKnown(), Via::kNone);
  for (int64_t s = 6; s <= 8; ++s) EXPECT_EQ(r.Ping(s * kS), Via::kDatagram) << s;
  EXPECT_EQ(r.Ping(9 * kS), Via::kLine);  // unanswered again
  EXPECT_TRUE(r.settled());
  EXPECT_EQ(r.estimate().rtt_ns, 60 * kMs);
  EXPECT_EQ(r.estimate().samples, 3u);
  // Now both ways get through.
  EXPECT_EQ(r.DatagramsKnown(), Via::kDatagram);
  EXPECT_TRUE(r.Pong(Via::kDatagram, 10 * kS, 10 * kS + 41 * kMs).sampled);
  EXPECT_EQ(r.estimate().rtt_ns, 41 * kMs);
  EXPECT_EQ(r.estimate().samples, 1u);
  EXPECT_EQ(r.way(), Via::kDatagram);
  EXPECT_FALSE(r.Pong(Via::kLine, 10 * kS, 10 * kS + 300 * kMs).sampled);
  // A pong by datagram that comes late, after the pings went by line,
  // brings the datagrams back as well.
  for (int64_t s = 11; s <= 13; ++s) r.Ping(s * kS);
  EXPECT_EQ(r.Ping(14 * kS), Via::kLine);
  EXPECT_TRUE(r.Pong(Via::kDatagram, 14 * kS, 14 * kS + 400 * kMs).sampled);
  EXPECT_EQ(r.way(), Via::kDatagram);
}

}  // namespace
}  // namespace tilestream
