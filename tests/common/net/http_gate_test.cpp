#include "common/net/http_gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/base/clock.h"

namespace tilestream {
namespace {

constexpr int64_t kMs = kNsPerMs;
constexpr int64_t kS = kNsPerSecond;

HttpLimits Small() {
  HttpLimits l;
  l.max_connections = 3;
  l.max_connections_per_address = 2;
  l.header_timeout_ms = 2000;
  l.timeout_s = 5;
  l.keep_alive_s = 10;
  return l;
}

std::vector<uint64_t> ExpiredAt(const HttpGate& g, int64_t now) {
  std::vector<uint64_t> out;
  g.Expired(now, &out);
  std::sort(out.begin(), out.end());
  return out;
}

HttpGate::Verdict Admit(HttpGate& g, uint64_t id, const char* address, int64_t now,
                        uint64_t* evicted = nullptr) {
  uint64_t ignored = 0;
  return g.Admit(id, address, now, evicted ? evicted : &ignored);
}

// The head has header_timeout_ms from the request's start, however the
// bytes dribble in: the deadline does not move with each read.
TEST(HttpGate, TheHeadsDeadlineCountsFromTheRequestsStart) {
  HttpGate g(Small());
  ASSERT_EQ(Admit(g, 7, "a", 0), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(g.NextDeadline(), 2000 * kMs);
  EXPECT_TRUE(ExpiredAt(g, 1999 * kMs).empty());
  EXPECT_EQ(ExpiredAt(g, 2000 * kMs), std::vector<uint64_t>{7});
}

// The body's deadline is timeout_s from the request's start, not from the
// end of its headers.
TEST(HttpGate, TheWholeRequestHasTimeoutFromItsStart) {
  HttpGate g(Small());
  Admit(g, 7, "a", 0);
  g.Enter(7, HttpPhase::kBody, 1500 * kMs);
  EXPECT_EQ(g.NextDeadline(), 5 * kS);
  EXPECT_TRUE(ExpiredAt(g, 5 * kS - 1).empty());
  EXPECT_EQ(ExpiredAt(g, 5 * kS), std::vector<uint64_t>{7});
}

// Served: no deadline of ours. Written: timeout_s from when the reply was
// ready. Idle between requests: keep_alive_s from the reply's end; the next
// request's head counts from its first byte.
TEST(HttpGate, ServedWrittenIdleAndTheNextRequest) {
  HttpGate g(Small());
  Admit(g, 7, "a", 0);
  g.Enter(7, HttpPhase::kServing, 100 * kMs);
  EXPECT_EQ(g.NextDeadline(), HttpGate::kNever);
  EXPECT_TRUE(ExpiredAt(g, 3600 * kS).empty());
  g.Enter(7, HttpPhase::kWriting, 60 * kS);
  EXPECT_EQ(g.NextDeadline(), 65 * kS);
  g.Enter(7, HttpPhase::kIdle, 61 * kS);
  EXPECT_EQ(g.NextDeadline(), 71 * kS);
  g.Enter(7, HttpPhase::kHead, 70 * kS);
  EXPECT_EQ(g.NextDeadline(), 72 * kS);
  g.Enter(7, HttpPhase::kDraining, 71 * kS);
  EXPECT_EQ(g.NextDeadline(), 71 * kS + HttpGate::kDrainNs);
}

// A timeout_s shorter than the head's bound bounds the head too.
TEST(HttpGate, TheHeadNeverOutlastsTheWholeRequest) {
  HttpLimits l = Small();
  l.header_timeout_ms = 10'000;
  l.timeout_s = 3;
  HttpGate g(l);
  Admit(g, 7, "a", 0);
  EXPECT_EQ(g.NextDeadline(), 3 * kS);
}

// At its cap an address's stalest connection gives its place to the
// newcomer from the same address (a NAT: a good client behind it gets in
// past a flood of slow ones); other addresses keep theirs.
TEST(HttpGate, OneAddressHoldsAtMostItsShareItsStalestGivingWay) {
  HttpGate g(Small());
  uint64_t evicted = 0;
  EXPECT_EQ(Admit(g, 2, "a", 0), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(Admit(g, 5, "b", 0), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(Admit(g, 3, "a", 1), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(Admit(g, 4, "a", 2, &evicted), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 2u) << "a's stalest, not b's older one";
  g.Enter(3, HttpPhase::kServing, 3);
  g.Enter(4, HttpPhase::kWriting, 3);
  EXPECT_EQ(Admit(g, 6, "a", 4, &evicted), HttpGate::Verdict::kAddressFull);
  EXPECT_EQ(evicted, 0u) << "every place of a's served or written to";
  g.Remove(3);
  EXPECT_EQ(Admit(g, 7, "a", 5, &evicted), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 0u);
  EXPECT_EQ(g.open(), 3u);
}

// Accepted in one batch (one moment), the last accepted gives way first:
// the first, whose request is read next, is not pushed out by the burst.
TEST(HttpGate, OfABurstAcceptedAtOnceTheLastGivesWayFirst) {
  HttpGate g(Small());
  uint64_t evicted = 0;
  Admit(g, 2, "a", 0);
  Admit(g, 3, "a", 5);
  Admit(g, 4, "a", 5, &evicted);
  EXPECT_EQ(evicted, 2u) << "an older start goes first";
  Admit(g, 5, "a", 5, &evicted);
  EXPECT_EQ(evicted, 4u) << "then the last accepted of the moment, not 3";
}

// Full: the newcomer takes the place of the connection waiting longest for
// its request (or its next one); one whose reply is out and that only
// drains goes first; one being served or written to is never taken.
TEST(HttpGate, WhenFullTheStalestGivesItsPlaceUp) {
  HttpGate g(Small());
  Admit(g, 2, "a", 0 * kMs);    // a dribbler since 0
  Admit(g, 3, "b", 100 * kMs);  // idle since 900
  Admit(g, 4, "c", 200 * kMs);  // served
  g.Enter(3, HttpPhase::kIdle, 900 * kMs);
  g.Enter(4, HttpPhase::kServing, 300 * kMs);
  uint64_t evicted = 0;
  EXPECT_EQ(Admit(g, 5, "d", 1000 * kMs, &evicted), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 2u) << "the longest waiting for its request";
  EXPECT_EQ(Admit(g, 6, "e", 1100 * kMs, &evicted), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 3u) << "idle since 900 before the newcomer of 1000";
  g.Enter(5, HttpPhase::kWriting, 1200 * kMs);
  g.Enter(6, HttpPhase::kDraining, 1300 * kMs);
  EXPECT_EQ(Admit(g, 7, "f", 1400 * kMs, &evicted), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 6u) << "a draining connection first";
  g.Enter(7, HttpPhase::kServing, 1500 * kMs);
  EXPECT_EQ(Admit(g, 8, "g", 1600 * kMs, &evicted), HttpGate::Verdict::kFull);
  EXPECT_EQ(evicted, 0u) << "every place served or written to: the newcomer is refused";
  EXPECT_EQ(g.open(), 3u);
}

// An evicted connection's address has its place back.
TEST(HttpGate, AnEvictedConnectionFreesItsAddressesPlace) {
  HttpLimits l = Small();
  l.max_connections = 2;
  HttpGate g(l);
  Admit(g, 2, "a", 0);
  Admit(g, 3, "a", 1);
  uint64_t evicted = 0;
  EXPECT_EQ(Admit(g, 4, "b", 2, &evicted), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 2u);
  EXPECT_EQ(Admit(g, 5, "a", 3, &evicted), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 3u);
  EXPECT_EQ(Admit(g, 6, "a", 4, &evicted), HttpGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 4u);
}

TEST(HttpGate, ForgettingAnUnknownConnectionDoesNothing) {
  HttpGate g(Small());
  g.Remove(42);
  g.Enter(42, HttpPhase::kIdle, 0);
  EXPECT_EQ(g.open(), 0u);
  EXPECT_EQ(g.NextDeadline(), HttpGate::kNever);
}

// Two seconds' worth at once (a page's burst), then the rate; other
// addresses have their own; 0 is no limit.
TEST(HttpGate, RequestsFromOneAddressAreHeldToTheirRate) {
  HttpLimits l = Small();
  l.requests_per_second_per_address = 10;
  HttpGate g(l);
  int taken = 0;
  while (g.TakeRequest("flood", 0)) ++taken;
  EXPECT_EQ(taken, 20);
  EXPECT_TRUE(g.TakeRequest("other", 0));
  EXPECT_FALSE(g.TakeRequest("flood", 99 * kMs));
  EXPECT_TRUE(g.TakeRequest("flood", 100 * kMs)) << "one more after a tenth of a second";
  EXPECT_FALSE(g.TakeRequest("flood", 100 * kMs));
  taken = 0;
  while (g.TakeRequest("flood", 1100 * kMs)) ++taken;
  EXPECT_EQ(taken, 10) << "a second refilled 10";
  l.requests_per_second_per_address = 0;
  HttpGate unlimited(l);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(unlimited.TakeRequest("a", 0));
}

// Thousands of addresses that asked once and went: their buckets are
// dropped once refilled, and a newcomer still gets its burst.
TEST(HttpGate, BucketsOfAddressesGoneAreDropped) {
  HttpLimits l = Small();
  l.requests_per_second_per_address = 10;
  HttpGate g(l);
  for (int i = 0; i < 100'000; ++i)
    ASSERT_TRUE(g.TakeRequest("a" + std::to_string(i), int64_t{i} * kMs));
  int taken = 0;
  while (g.TakeRequest("new", 200 * kS)) ++taken;
  EXPECT_EQ(taken, 20);
}

}  // namespace
}  // namespace tilestream
