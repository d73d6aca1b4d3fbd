// Which ticks an overloaded wall sends (common/control/tick_shedder.h): all
// while the senders keep up; past 2% skipped in two looks in a row, what
// they managed less 2%, spread evenly; back up by 2% after 3 looks under 2%.
#include "common/control/tick_shedder.h"

#include <gtest/gtest.h>

#include <vector>

namespace tilestream {
namespace {

// Which of the next n ticks are kept.
std::vector<bool> Ticks(TickShedder& s, int n) {
  std::vector<bool> kept;
  for (int i = 0; i < n; ++i) kept.push_back(s.Keep());
  return kept;
}

int Kept(const std::vector<bool>& ticks) {
  int n = 0;
  for (const bool k : ticks) n += k;
  return n;
}

TEST(TickShedderTest, KeepsEveryTickWhileTheSendersKeepUp) {
  TickShedder s;
  for (int look = 0; look < 10; ++look) {
    EXPECT_EQ(Kept(Ticks(s, 22)), 22);
    s.Look(22 * 15, look % 2);  // under 2% skipped: noise, not overload
  }
  EXPECT_EQ(s.shed(), 0u);
  EXPECT_EQ(s.cuts(), 0u);
}

// One look past 2% is a moment's skips (the show starting, a seek), not
// overload: nothing is cut for it, nor for two such looks apart.
TEST(TickShedderTest, OneBusyLookIsAMomentNotOverload) {
  TickShedder s;
  s.Look(900, 100);  // 10% skipped: the start
  s.Look(1000, 5);   // 0.5%: under the cut again
  s.Look(900, 100);
  s.Look(1000, 0);
  EXPECT_DOUBLE_EQ(s.keep(), 1.0);
  EXPECT_EQ(s.cuts(), 0u);
  EXPECT_EQ(Kept(Ticks(s, 50)), 50);
}

TEST(TickShedderTest, CutsToWhatTheSendersManagedAndSpreadsTheDropsEvenly) {
  TickShedder s;
  s.Look(850, 150);  // 15% skipped
  s.Look(900, 100);  // 10% skipped, the second look in a row: cut by the last
  EXPECT_DOUBLE_EQ(s.keep(), 0.88);
  const auto ticks = Ticks(s, 100);
  EXPECT_EQ(Kept(ticks), 88);
  EXPECT_EQ(s.shed(), 12u);
  for (size_t i = 1; i < ticks.size(); ++i)
    EXPECT_TRUE(ticks[i] || ticks[i - 1]) << "two ticks dropped in a row at " << i;
}

TEST(TickShedderTest, IgnoresTheLookAfterACutAndNeverGoesUnderAQuarter) {
  TickShedder s;
  s.Look(500, 500);
  s.Look(500, 500);
  EXPECT_DOUBLE_EQ(s.keep(), 0.48);
  s.Look(500, 500);  // may still hold skips from before the cut
  s.Look(500, 500);  // the first of two again
  EXPECT_DOUBLE_EQ(s.keep(), 0.48);
  s.Look(500, 500);
  EXPECT_DOUBLE_EQ(s.keep(), TickShedder::kMinKeep);
  s.Look(1, 0);
  s.Look(100, 900);
  s.Look(100, 900);
  EXPECT_DOUBLE_EQ(s.keep(), TickShedder::kMinKeep);
  EXPECT_EQ(Kept(Ticks(s, 100)), 25);
}

TEST(TickShedderTest, RaisesAfterThreeLooksUnderTheCutUpToEveryTick) {
  TickShedder s;
  s.Look(95, 5);
  s.Look(95, 5);  // 5% twice: keep 0.93
  s.Look(0, 0);   // nothing played: no news, and not the ignored look
  s.Look(90, 0);  // the ignored one
  s.Look(90, 1);  // under 2%: a skip now and then is quiet enough
  s.Look(90, 0);
  EXPECT_DOUBLE_EQ(s.keep(), 0.93);
  s.Look(90, 0);
  EXPECT_NEAR(s.keep(), 0.95, 1e-12);
  for (int i = 0; i < 3 * 10; ++i) s.Look(90, 0);
  EXPECT_DOUBLE_EQ(s.keep(), 1.0);
  EXPECT_EQ(Kept(Ticks(s, 50)), 50);
}

// A tick sent knows how many ticks it has until the next one sent, so its
// frames can be paced over all of them; those sheds stand even if the
// share is raised before they come.
TEST(TickShedderTest, EachTickSentKnowsWhenTheNextOneIs) {
  TickShedder s;
  s.Look(60, 40);
  s.Look(60, 40);  // 40% twice: keep 0.58
  while (!s.Keep()) {
  }
  for (int sent = 0; sent < 20; ++sent) {
    const uint32_t next_in = s.ticks_to_next();
    for (uint32_t i = 1; i < next_in; ++i) EXPECT_FALSE(s.Keep()) << "planned shed " << i;
    EXPECT_TRUE(s.Keep()) << "the tick " << next_in << " after the last one sent";
  }
  TickShedder t;
  t.Look(25, 75);
  t.Look(25, 75);  // keep 0.25: three shed after each tick sent
  while (!t.Keep()) {
  }
  EXPECT_EQ(t.ticks_to_next(), 4u);
  for (int i = 0; i < 200; ++i) t.Look(100, 0);  // back up to every tick
  EXPECT_DOUBLE_EQ(t.keep(), 1.0);
  EXPECT_EQ(Ticks(t, 4), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(t.ticks_to_next(), 1u);
}

}  // namespace
}  // namespace tilestream
