#include "common/control/swap_sync.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

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

// A report that came both ways (a datagram and TCP, and the datagram's
// copies) counts once: neither a late report nor a tile in time again.
TEST(SwapSync, AReportSaidAgainCountsOnce) {
  SwapSyncMaster m = ThreeTiles();
  m.OpenTick(0, 1000, 80 * kMs);
  for (uint32_t t = 0; t < 3; ++t) m.Complete(t, 1000);
  EXPECT_THAT(Decide(&m, 1 * kMs), ElementsAre("present 1000 0"));
  for (int copy = 0; copy < 3; ++copy) m.Complete(1, 1000);
  EXPECT_EQ(m.stats().unmatched, 0u);
  m.Complete(1, 999);  // never opened: unmatched, once
  m.Complete(1, 999);
  EXPECT_EQ(m.stats().unmatched, 1u);
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

// Ticks 100 ms apart, each decided 200 ms after it opened; tiles 0 and 2
// report every tick in time, tile 1 only while `one_reports`.
void PlayTicks(SwapSyncMaster* m, uint64_t first, uint64_t count, bool one_reports,
               std::vector<std::string>* decided) {
  for (uint64_t k = first; k < first + count; ++k) {
    const auto ts = static_cast<uint32_t>(1000 + 9000 * k);
    m->OpenTick(k, ts, static_cast<int64_t>(k * 100 + 200) * kMs);
    m->Complete(0, ts);
    m->Complete(2, ts);
    if (one_reports) m->Complete(1, ts);
    for (const std::string& line : Decide(m, static_cast<int64_t>(k * 100 + 50) * kMs))
      decided->push_back(line);
    for (const std::string& line : Decide(m, static_cast<int64_t>(k * 100 + 99) * kMs))
      decided->push_back(line);
  }
}

size_t Count(const std::vector<std::string>& lines, const std::string& word) {
  return static_cast<size_t>(std::count_if(lines.begin(), lines.end(),
                                           [&](const auto& l) { return l.rfind(word, 0) == 0; }));
}

TEST(SwapSync, ATileThatMissesThreeTicksInARowIsLeftOutAndTheWallPlaysOn) {
  SwapSyncMaster m = ThreeTiles();
  std::vector<std::string> decided;
  PlayTicks(&m, 0, 10, true, &decided);
  EXPECT_EQ(Count(decided, "present"), 10u);
  decided.clear();
  PlayTicks(&m, 10, 50, false, &decided);  // tile 1's node goes silent
  EXPECT_EQ(Count(decided, "skip"), 3u) << "three misses, then on without it";
  EXPECT_GE(Count(decided, "present"), 45u);
  EXPECT_TRUE(m.left_out(1));
  EXPECT_TRUE(m.member(1)) << "still connected";
  EXPECT_FALSE(m.left_out(0));
  EXPECT_EQ(m.stats().left_out, 1u);
  EXPECT_GE(m.ticks_without(1), 45u);
  std::vector<SwapSyncMaster::Change> changes;
  m.TakeChanges(&changes);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].tile, 1u);
  EXPECT_TRUE(changes[0].left_out);
}

TEST(SwapSync, ALeftOutTileIsTakenBackForTheTicksAfterItReportsOneInTime) {
  SwapSyncMaster m = ThreeTiles();
  std::vector<std::string> decided;
  PlayTicks(&m, 0, 10, false, &decided);
  ASSERT_TRUE(m.left_out(1));
  const uint64_t out = m.ticks_without(1);
  decided.clear();
  PlayTicks(&m, 10, 1, true, &decided);  // reports tick 10 in time: back
  EXPECT_FALSE(m.left_out(1));
  PlayTicks(&m, 11, 5, true, &decided);
  EXPECT_EQ(Count(decided, "skip"), 0u);
  EXPECT_LE(m.ticks_without(1), out + 2) << "the ticks opened before it came back";
  std::vector<SwapSyncMaster::Change> changes;
  m.TakeChanges(&changes);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_FALSE(changes[1].left_out);
  // Back, it is waited for again: a tick it misses is skipped.
  m.OpenTick(20, 7777, 2200 * kMs);
  m.Complete(0, 7777);
  m.Complete(2, 7777);
  EXPECT_TRUE(Decide(&m, 2100 * kMs).empty());
  EXPECT_THAT(Decide(&m, 2200 * kMs), ElementsAre("skip 7777 20"));
}

// Found by the wall's simulation (sim/, a one-node wall whose node was
// stopped): with every tile left out, each tick opened had nobody to
// show it and was dropped before a tile could report it, so none was
// ever taken back and the wall stayed dark.
TEST(SwapSync, AWallWhoseEveryTileWasLeftOutComesBack) {
  SwapSyncMaster m(1, false);
  m.SetMember(0, true);
  std::vector<std::string> decided;
  for (uint64_t k = 0; k < 5; ++k) {  // the node stopped: nothing reported
    const auto ts = static_cast<uint32_t>(1000 + 9000 * k);
    m.OpenTick(k, ts, static_cast<int64_t>(k * 100 + 200) * kMs);
    for (const std::string& l : Decide(&m, static_cast<int64_t>(k * 100 + 250) * kMs))
      decided.push_back(l);
  }
  ASSERT_TRUE(m.left_out(0));
  decided.clear();
  for (uint64_t k = 5; k < 10; ++k) {  // it runs again and reports each tick in time
    const auto ts = static_cast<uint32_t>(1000 + 9000 * k);
    m.OpenTick(k, ts, static_cast<int64_t>(k * 100 + 200) * kMs);
    for (const std::string& l : Decide(&m, static_cast<int64_t>(k * 100 + 10) * kMs))
      decided.push_back(l);
    m.Complete(0, ts);
    for (const std::string& l : Decide(&m, static_cast<int64_t>(k * 100 + 20) * kMs))
      decided.push_back(l);
  }
  EXPECT_FALSE(m.left_out(0)) << "taken back by the first tick it reported in time";
  EXPECT_EQ(Count(decided, "present"), 4u) << "every tick opened after that one";
  EXPECT_EQ(Count(decided, "skip"), 0u);
}

TEST(SwapSync, ALateReportDoesNotTakeALeftOutTileBack) {
  SwapSyncMaster m = ThreeTiles();
  std::vector<std::string> decided;
  PlayTicks(&m, 0, 10, false, &decided);
  ASSERT_TRUE(m.left_out(1));
  m.Complete(1, 1000);  // tick 0's, long decided
  EXPECT_TRUE(m.left_out(1));
}

TEST(SwapSync, ANodeThatReconnectsStartsAfreshAndFewerMissesInARowLeaveNoneOut) {
  SwapSyncMaster m = ThreeTiles();
  std::vector<std::string> decided;
  PlayTicks(&m, 0, 10, false, &decided);
  ASSERT_TRUE(m.left_out(1));
  m.SetMember(1, false);
  m.SetMember(1, true);
  EXPECT_FALSE(m.left_out(1));
  SwapSyncMaster two = ThreeTiles();
  for (int round = 0; round < 5; ++round) {  // two misses, one in time, ...
    PlayTicks(&two, 3 * round, 2, false, &decided);
    PlayTicks(&two, 3 * round + 2, 1, true, &decided);
    EXPECT_FALSE(two.left_out(1)) << round;
  }
  SwapSyncMaster never(3, false, /*drop_after=*/0);
  for (uint32_t t = 0; t < 3; ++t) never.SetMember(t, true);
  decided.clear();
  PlayTicks(&never, 0, 20, false, &decided);
  EXPECT_FALSE(never.left_out(1));
  EXPECT_EQ(Count(decided, "skip"), 18u) << "all but the last two, still before their deadline";
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
  r = ParseSyncReport(FormatStats(2, {30, 7, 1, 20'500, 1'200, 44, 3}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, SyncReport::Kind::kStats);
  EXPECT_EQ(r->stats.frames, 30u);
  EXPECT_EQ(r->stats.lost, 7u);
  EXPECT_EQ(r->stats.incomplete, 1u);
  EXPECT_EQ(r->stats.rtt_us, 20'500u);
  EXPECT_EQ(r->stats.rttvar_us, 1'200u);
  EXPECT_EQ(r->stats.requested, 44u);
  EXPECT_EQ(r->stats.late, 3u);
  r = ParseSyncReport("stats 2 30 7 1");  // a receiver from before round trips
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stats.lost, 7u);
  EXPECT_EQ(r->stats.rtt_us, 0u);
  for (SyncDecision d : {SyncDecision::kPresent, SyncDecision::kSkip, SyncDecision::kPartial}) {
    auto e = ParseSyncEvent(FormatSyncEvent({d, 77, 123}));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->decision, d);
    EXPECT_EQ(e->tick, 77u);
    EXPECT_EQ(e->timestamp, 123u);
    EXPECT_EQ(e->at_ns, 0);
  }
  // A time to show it at (a playout latency); a skip has none.
  auto e =
      ParseSyncEvent(FormatSyncEvent({SyncDecision::kPresent, 77, 123, 1'800'000'000'000'000'001}));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->at_ns, 1'800'000'000'000'000'001);
  EXPECT_EQ(FormatSyncEvent({SyncDecision::kSkip, 77, 123, 5}), "skip 123 77");
  EXPECT_EQ(ParseStamp("ping", FormatPing(123456789)), 123456789);
  EXPECT_EQ(ParseStamp("pong", FormatPong(5)), 5);
  EXPECT_FALSE(ParseStamp("pong", FormatPing(5)));
  for (const char* bad : {"pong", "pong -1", "pong 1 2", "pong x"})
    EXPECT_FALSE(ParseStamp("pong", bad)) << bad;
}

TEST(SwapSyncLines, RejectsMalformedLines) {
  for (const char* bad :
       {"", "complete", "complete 1", "complete 1 2 3", "complete -1 2", "complete 1 4294967296",
        "complete x 2", "shown 1 2", "shown 1 2 3 4", "done 1 2", "complete 1 2x", "stats 1 2 3",
        "stats 1 2 3 -4", "stats 1 2 3 4 5", "stats 1 2 3 4 5 6 7 x"}) {
    EXPECT_FALSE(ParseSyncReport(bad)) << bad;
  }
  for (const char* bad :
       {"", "present", "present 1", "present 1 2 3 4", "show 1 2", "present -1 0",
        "skip 99999999999 0", "present 1 x", "present 1 2 0", "present 1 2 -3", "skip 1 2 3"})
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
