#include "common/control/sync_datagram.h"

#include <gtest/gtest.h>

#include <string>

namespace tilestream {
namespace {

TEST(SyncDatagram, CarriesItsKeyAndLinesAndBackAgain) {
  const std::string d = FormatSyncDatagram(0x0123456789abcdefULL, "complete 1 90000\nshown 1 2 3");
  EXPECT_EQ(d, "tsync 0123456789abcdef\ncomplete 1 90000\nshown 1 2 3");
  const auto p = ParseSyncDatagram(d);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->key, 0x0123456789abcdefULL);
  ASSERT_EQ(p->count, 2u);
  EXPECT_EQ(p->lines[0], "complete 1 90000");
  EXPECT_EQ(p->lines[1], "shown 1 2 3");
  // A key alone: the node saying where its datagrams come from.
  const std::string alone = FormatSyncDatagram(7, "");
  const auto hello = ParseSyncDatagram(alone);
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->key, 7u);
  EXPECT_EQ(hello->count, 0u);
}

// From anyone: refused whole unless exactly the form above.
TEST(SyncDatagram, AnythingElseIsRefusedWhole) {
  const std::string many = [] {
    std::string s = "tsync 0000000000000001";
    for (size_t i = 0; i <= kMaxSyncDatagramLines; ++i) s += "\ncomplete 0 1";
    return s;
  }();
  for (const std::string& bad :
       {std::string(""), std::string("tsync"), std::string("tsync 123"),
        std::string("tsync 0123456789abcdeg\ncomplete 0 1"),
        std::string("tsync 0123456789abcdef0\ncomplete 0 1"),
        std::string("TSYNC 0123456789abcdef\ncomplete 0 1"),
        std::string("tsync 0123456789abcdef\n\ncomplete 0 1"), many,
        std::string("tsync 0123456789abcdef\n") + std::string(kMaxSyncDatagram, 'x')})
    EXPECT_FALSE(ParseSyncDatagram(bad)) << bad.substr(0, 80);
  EXPECT_FALSE(ParseSyncKey("-123456789abcdef"));
  EXPECT_EQ(ParseSyncKey(FormatSyncKey(~0ULL)), ~0ULL);
}

// Each datagram carries the last kCarried decisions: one lost on its way
// comes with the next.
TEST(DecisionCarrier, CarriesTheLastDecisionsOldestFirst) {
  DecisionCarrier carrier;
  for (uint64_t tick = 0; tick < DecisionCarrier::kCarried + 3; ++tick)
    carrier.Add({SyncDecision::kPresent, tick, static_cast<uint32_t>(1000 + tick), 5});
  const std::string d = carrier.Datagram(42);
  ASSERT_LE(d.size(), kMaxSyncDatagram);
  const auto p = ParseSyncDatagram(d);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->count, DecisionCarrier::kCarried);
  for (size_t i = 0; i < p->count; ++i) EXPECT_EQ(ParseSyncEvent(p->lines[i])->tick, 3 + i);
  // The longest decisions there are still fit.
  for (uint64_t tick = 0; tick < DecisionCarrier::kCarried; ++tick)
    carrier.Add({SyncDecision::kPartial, ~0ULL - tick, ~0U, INT64_MAX});
  EXPECT_LE(carrier.Datagram(~0ULL).size(), kMaxSyncDatagram);
}

// Whichever way a decision came first, it is taken once, in tick order.
TEST(SyncEventFilter, TakesEachTickOnceInOrderUntilANewSession) {
  SyncEventFilter f;
  const auto tick = [](uint64_t t) { return SyncEvent{SyncDecision::kPresent, t, 0, 0}; };
  EXPECT_TRUE(f.Accept(tick(5)));
  EXPECT_FALSE(f.Accept(tick(5)));  // its copy
  EXPECT_FALSE(f.Accept(tick(4)));  // too late to be shown in order
  EXPECT_TRUE(f.Accept(tick(7)));
  f.Reset();  // a restarted coordinator counts from 0
  EXPECT_TRUE(f.Accept(tick(0)));
}

}  // namespace
}  // namespace tilestream
