#include "common/net/connection_gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/base/clock.h"

namespace tilestream {
namespace {

constexpr int64_t kMs = kNsPerMs;
constexpr int64_t kS = kNsPerSecond;

AdmissionLimits Small() {
  AdmissionLimits l;
  l.max_connections = 3;
  l.max_per_address = 2;
  return l;
}

std::vector<uint64_t> ExpiredAt(const ConnectionGate& g, int64_t now) {
  std::vector<uint64_t> out;
  g.Expired(now, &out);
  std::sort(out.begin(), out.end());
  return out;
}

ConnectionGate::Verdict Admit(ConnectionGate& g, uint64_t id, const char* address, int64_t now,
                              uint64_t* evicted = nullptr, bool reserved = false) {
  uint64_t ignored = 0;
  return g.Admit(id, address, now, reserved, evicted ? evicted : &ignored);
}

Standing Serving(int64_t since) { return {Yield::kKept, since, kNoDeadline}; }
Standing Waiting(int64_t since) { return {Yield::kStale, since, since + 10 * kS}; }

// A connection is closed at the deadline its protocol gave it, not before;
// a new one has none until then.
TEST(ConnectionGate, AConnectionExpiresAtTheDeadlineItStands) {
  ConnectionGate g(Small());
  ASSERT_EQ(Admit(g, 7, "a", 0), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(g.NextDeadline(), kNoDeadline);
  g.Stand(7, {Yield::kStale, 0, 2000 * kMs});
  EXPECT_EQ(g.NextDeadline(), 2000 * kMs);
  EXPECT_TRUE(ExpiredAt(g, 1999 * kMs).empty());
  EXPECT_EQ(ExpiredAt(g, 2000 * kMs), std::vector<uint64_t>{7});
}

// At its cap an address's stalest connection gives its place to the
// newcomer from the same address (a NAT: a good client behind it gets in
// past a flood of slow ones); other addresses keep theirs.
TEST(ConnectionGate, OneAddressHoldsAtMostItsShareItsStalestGivingWay) {
  ConnectionGate g(Small());
  uint64_t evicted = 0;
  EXPECT_EQ(Admit(g, 2, "a", 0), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(Admit(g, 5, "b", 0), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(Admit(g, 3, "a", 1), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(Admit(g, 4, "a", 2, &evicted), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 2u) << "a's stalest, not b's older one";
  g.Stand(3, Serving(3));
  g.Stand(4, Serving(3));
  EXPECT_EQ(Admit(g, 6, "a", 4, &evicted), ConnectionGate::Verdict::kAddressFull);
  EXPECT_EQ(evicted, 0u) << "every place of a's kept";
  g.Remove(3);
  EXPECT_EQ(Admit(g, 7, "a", 5, &evicted), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 0u);
  EXPECT_EQ(g.open(), 3u);
}

// Accepted in one batch (one moment), the last accepted gives way first:
// the first, whose request is read next, is not pushed out by the burst.
TEST(ConnectionGate, OfABurstAcceptedAtOnceTheLastGivesWayFirst) {
  ConnectionGate g(Small());
  uint64_t evicted = 0;
  Admit(g, 2, "a", 0);
  Admit(g, 3, "a", 5);
  Admit(g, 4, "a", 5, &evicted);
  EXPECT_EQ(evicted, 2u) << "an older start goes first";
  Admit(g, 5, "a", 5, &evicted);
  EXPECT_EQ(evicted, 4u) << "then the last accepted of the moment, not 3";
}

// Full: the newcomer takes the place of the stalest (the earliest `since`);
// one that stands kFirst (a draining reply, a line under way) goes before
// any stale one; one kept (served, a node's sync) is never taken.
TEST(ConnectionGate, WhenFullTheStalestGivesItsPlaceUp) {
  ConnectionGate g(Small());
  Admit(g, 2, "a", 0 * kMs);    // a dribbler since 0
  Admit(g, 3, "b", 100 * kMs);  // idle since 900
  Admit(g, 4, "c", 200 * kMs);  // served
  g.Stand(3, Waiting(900 * kMs));
  g.Stand(4, Serving(300 * kMs));
  uint64_t evicted = 0;
  EXPECT_EQ(Admit(g, 5, "d", 1000 * kMs, &evicted), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 2u) << "the longest waiting for its request";
  EXPECT_EQ(Admit(g, 6, "e", 1100 * kMs, &evicted), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 3u) << "idle since 900 before the newcomer of 1000";
  g.Stand(5, Serving(1200 * kMs));
  g.Stand(6, {Yield::kFirst, 1300 * kMs, 2300 * kMs});
  EXPECT_EQ(Admit(g, 7, "f", 1400 * kMs, &evicted), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 6u) << "one that yields first before any stale one";
  g.Stand(7, Serving(1500 * kMs));
  EXPECT_EQ(Admit(g, 8, "g", 1600 * kMs, &evicted), ConnectionGate::Verdict::kFull);
  EXPECT_EQ(evicted, 0u) << "every place kept: the newcomer is refused";
  EXPECT_EQ(g.open(), 3u);
}

// An evicted connection's address has its place back.
TEST(ConnectionGate, AnEvictedConnectionFreesItsAddressesPlace) {
  AdmissionLimits l = Small();
  l.max_connections = 2;
  ConnectionGate g(l);
  Admit(g, 2, "a", 0);
  Admit(g, 3, "a", 1);
  uint64_t evicted = 0;
  EXPECT_EQ(Admit(g, 4, "b", 2, &evicted), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 2u);
  EXPECT_EQ(Admit(g, 5, "a", 3, &evicted), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 3u);
  EXPECT_EQ(Admit(g, 6, "a", 4, &evicted), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 4u);
}

TEST(ConnectionGate, ForgettingAnUnknownConnectionDoesNothing) {
  ConnectionGate g(Small());
  g.Remove(42);
  g.Stand(42, Waiting(0));
  EXPECT_EQ(g.open(), 0u);
  EXPECT_EQ(g.NextDeadline(), kNoDeadline);
}

// Two seconds' worth at once (a page's burst), then the rate; other
// addresses have their own; 0 is no limit.
TEST(ConnectionGate, RequestsFromOneAddressAreHeldToTheirRate) {
  AdmissionLimits l = Small();
  l.requests_per_second_per_address = 10;
  ConnectionGate g(l);
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
  ConnectionGate unlimited(l);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(unlimited.TakeRequest("a", 0));
}

// The reserved places are for the reserved addresses only (the control
// port's display nodes); past them, even those evict.
TEST(ConnectionGate, ReservedAddressesHaveThePlacesBeyondTheCap) {
  AdmissionLimits l = Small();
  l.max_connections = 2;
  l.max_per_address = 10;
  l.reserved = 2;
  ConnectionGate g(l);
  uint64_t evicted = 0;
  Admit(g, 2, "a", 0);
  Admit(g, 3, "b", 1);
  g.Stand(2, Serving(0));
  g.Stand(3, Serving(1));
  EXPECT_EQ(Admit(g, 4, "c", 2, &evicted), ConnectionGate::Verdict::kFull);
  EXPECT_EQ(Admit(g, 5, "node", 3, &evicted, true), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(Admit(g, 6, "node", 4, &evicted, true), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 0u);
  EXPECT_EQ(Admit(g, 7, "node", 5, &evicted, true), ConnectionGate::Verdict::kAdmitted);
  EXPECT_EQ(evicted, 5u) << "past the reserved places the stalest yields";
  EXPECT_EQ(g.open(), 4u);
}

// Thousands of addresses that asked once and went: their buckets are
// dropped once refilled, and a newcomer still gets its burst.
TEST(ConnectionGate, BucketsOfAddressesGoneAreDropped) {
  AdmissionLimits l = Small();
  l.requests_per_second_per_address = 10;
  ConnectionGate g(l);
  for (int i = 0; i < 100'000; ++i)
    ASSERT_TRUE(g.TakeRequest("a" + std::to_string(i), int64_t{i} * kMs));
  int taken = 0;
  while (g.TakeRequest("new", 200 * kS)) ++taken;
  EXPECT_EQ(taken, 20);
}

}  // namespace
}  // namespace tilestream
