#include "common/control/node_round_trip.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

using Via = NodeRoundTrip::Via;
constexpr int64_t kMs = 1'000'000;

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

}  // namespace
}  // namespace tilestream
