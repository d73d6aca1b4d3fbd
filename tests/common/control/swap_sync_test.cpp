#include "common/control/swap_sync.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tilestream {
namespace {

using ::testing::ElementsAre;

constexpr int64_t kMs = 1'000'000;

std::vector<std::string> Decide(SwapSyncMaster* m, int64_t now) {
  std::vector<SyncEvent> events;
  m->Decide(now, &events);
  std::vector<std::string> lines;
  for (const SyncEvent& e : events) lines.push_back(FormatSyncEvent(e));
  return lines;
}

SwapSyncMaster ThreeTiles(bool partial = false) {
  SwapSyncMaster m(3, partial);
  for (uint32_t t = 0; t < 3; ++t) m.SetMember(t, true);
  return m;
}

TEST(SwapSync, ReleasesATickOnceEveryTileHasIt) {
  SwapSyncMaster m = ThreeTiles();
  m.OpenTick(0, 1000, 80 * kMs);
  m.Complete(0, 1000);
  m.Complete(2, 1000);
  EXPECT_TRUE(Decide(&m, 10 * kMs).empty());
  m.Complete(1, 1000);
  EXPECT_THAT(Decide(&m, 11 * kMs), ElementsAre("present 1000 0"));
  EXPECT_EQ(m.stats().presented, 1u);
  EXPECT_TRUE(Decide(&m, 100 * kMs).empty()) << "decided once";
}

TEST(SwapSync, SkipsAnIncompleteTickAtItsDeadlineOnEveryTile) {
  SwapSyncMaster m = ThreeTiles();
  m.OpenTick(0, 1000, 80 * kMs);
  m.Complete(0, 1000);
  EXPECT_EQ(m.next_deadline_ns(), 80 * kMs);
  EXPECT_TRUE(Decide(&m, 79 * kMs).empty());
  EXPECT_THAT(Decide(&m, 80 * kMs), ElementsAre("skip 1000 0"));
  EXPECT_EQ(m.stats().skipped, 1u);
  m.Complete(1, 1000);  // too late
  EXPECT_EQ(m.stats().unmatched, 1u);
}

TEST(SwapSync, PartialPolicyShowsTheIncompleteTick) {
  SwapSyncMaster m = ThreeTiles(/*partial=*/true);
  m.OpenTick(0, 1000, 80 * kMs);
  EXPECT_THAT(Decide(&m, 80 * kMs), ElementsAre("partial 1000 0"));
  EXPECT_EQ(m.stats().partial, 1u);
}

TEST(SwapSync, DecidesInTickOrder) {
  SwapSyncMaster m = ThreeTiles();
  m.OpenTick(0, 1000, 80 * kMs);
  m.OpenTick(1, 4600, 120 * kMs);
  for (uint32_t t = 0; t < 3; ++t) m.Complete(t, 4600);
  m.Complete(0, 1000);
  EXPECT_TRUE(Decide(&m, 50 * kMs).empty()) << "tick 1 waits for tick 0";
  m.Complete(1, 1000);
  m.Complete(2, 1000);
  EXPECT_THAT(Decide(&m, 51 * kMs), ElementsAre("present 1000 0", "present 4600 1"));
}

TEST(SwapSync, OnlyTilesOfConnectedNodesTakePart) {
  SwapSyncMaster m(3, false);
  m.OpenTick(0, 1000, 80 * kMs);
  EXPECT_TRUE(Decide(&m, 90 * kMs).empty()) << "nobody to show it: dropped, uncounted";
  EXPECT_EQ(m.stats().skipped, 0u);
  m.SetMember(0, true);
  m.SetMember(2, true);
  m.OpenTick(1, 4600, 120 * kMs);
  m.Complete(0, 4600);
  m.Complete(2, 4600);
  EXPECT_THAT(Decide(&m, 100 * kMs), ElementsAre("present 4600 1"));
  m.OpenTick(2, 8200, 160 * kMs);
  m.Complete(0, 8200);
  m.SetMember(2, false);  // its node went away mid-tick
  EXPECT_THAT(Decide(&m, 130 * kMs), ElementsAre("present 8200 2"));
}

TEST(SwapSync, ANodeJoiningMidStreamTakesPartFromTheNextTick) {
  SwapSyncMaster m(2, false);
  m.SetMember(0, true);
  m.OpenTick(0, 1000, 80 * kMs);
  m.SetMember(1, true);  // joins while tick 0 is on its way: it may have half of it
  m.OpenTick(1, 4600, 120 * kMs);
  m.Complete(0, 1000);
  m.Complete(0, 4600);
  EXPECT_THAT(Decide(&m, 90 * kMs), ElementsAre("present 1000 0"));
  EXPECT_TRUE(Decide(&m, 100 * kMs).empty()) << "tick 1 waits for the new tile";
  m.Complete(1, 4600);
  EXPECT_THAT(Decide(&m, 101 * kMs), ElementsAre("present 4600 1"));
}

TEST(SwapSync, MeasuresSkewAsSpreadOfShowTimes) {
  SwapSyncMaster m = ThreeTiles();
  m.OpenTick(0, 1000, 80 * kMs);
  for (uint32_t t = 0; t < 3; ++t) m.Complete(t, 1000);
  Decide(&m, 1 * kMs);
  m.Shown(0, 1000, 5'000'000'000);
  m.Shown(0, 1000, 5'000'000'000);  // said twice: counted once
  m.Shown(2, 1000, 5'000'300'000);
  EXPECT_EQ(m.stats().skew_samples, 0u) << "waits for every tile";
  m.Shown(1, 1000, 5'000'100'000);
  EXPECT_EQ(m.stats().skew_samples, 1u);
  EXPECT_EQ(m.stats().skew_max_ns, 300'000);
  EXPECT_EQ(m.TakeRecentMaxSkew(), 300'000);
  EXPECT_EQ(m.TakeRecentMaxSkew(), 0);
  EXPECT_EQ(m.skews().count(), 1u);
  EXPECT_EQ(m.skews().QuantileNs(0.5), 300'000 + SkewHistogram::kBucketNs);
  m.Shown(1, 9999, 1);
  EXPECT_EQ(m.stats().unmatched, 1u);
}

TEST(SwapSyncLines, RoundTrip) {
  auto r = ParseSyncReport(FormatComplete(14, 4294967295u));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, SyncReport::Kind::kComplete);
  EXPECT_EQ(r->tile, 14u);
  EXPECT_EQ(r->timestamp, 4294967295u);
  r = ParseSyncReport(FormatShown(3, 77, 1'700'000'000'123'456'789));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, SyncReport::Kind::kShown);
  EXPECT_EQ(r->shown_ns, 1'700'000'000'123'456'789);
  r = ParseSyncReport(FormatStats(2, 30, 7, 1));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, SyncReport::Kind::kStats);
  EXPECT_EQ(r->frames, 30u);
  EXPECT_EQ(r->lost, 7u);
  EXPECT_EQ(r->incomplete, 1u);
  for (SyncDecision d : {SyncDecision::kPresent, SyncDecision::kSkip, SyncDecision::kPartial}) {
    auto e = ParseSyncEvent(FormatSyncEvent({d, 77, 123}));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->decision, d);
    EXPECT_EQ(e->tick, 77u);
    EXPECT_EQ(e->timestamp, 123u);
  }
}

TEST(SwapSyncLines, RejectsMalformedLines) {
  for (const char* bad : {"", "complete", "complete 1", "complete 1 2 3", "complete -1 2",
                          "complete 1 4294967296", "complete x 2", "shown 1 2", "shown 1 2 3 4",
                          "done 1 2", "complete 1 2x", "stats 1 2 3", "stats 1 2 3 -4"}) {
    EXPECT_FALSE(ParseSyncReport(bad)) << bad;
  }
  for (const char* bad : {"", "present", "present 1", "present 1 2 3", "show 1 2", "present -1 0",
                          "skip 99999999999 0", "present 1 x"})
    EXPECT_FALSE(ParseSyncEvent(bad)) << bad;
}

// Swap sync shares the control channel's TCP connection and its words: a
// tab separates as a space does on both.
TEST(SwapSyncLines, TabsSeparateWordsAsOnTheControlChannel) {
  const auto r = ParseSyncReport("complete\t14  \t7");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->tile, 14u);
  EXPECT_EQ(r->timestamp, 7u);
  const auto e = ParseSyncEvent("skip\t3\t9");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->decision, SyncDecision::kSkip);
  EXPECT_EQ(e->tick, 9u);
}

}  // namespace
}  // namespace tilestream
