// Which ticks an overloaded wall sends (common/control/tick_shedder.h): all
// while the senders keep up; once 10% of the ticks lose a tile in two looks
// in a row, what they managed less 2%, spread evenly; back up by 2% after 3
// looks under 2%. One tile unless said: then ticks lost are frames skipped.
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

// One look past the cut is a moment's skips (the show starting, a seek),
// not overload: nothing is cut for it, nor for two such looks apart.
TEST(TickShedderTest, OneBusyLookIsAMomentNotOverload) {
  TickShedder s;
  s.Look(850, 150);  // 15% skipped: the start
  s.Look(1000, 5);   // 0.5%: under the cut again
  s.Look(850, 150);
  s.Look(1000, 0);
  EXPECT_DOUBLE_EQ(s.keep(), 1.0);
  EXPECT_EQ(s.cuts(), 0u);
  EXPECT_EQ(Kept(Ticks(s, 50)), 50);
}

TEST(TickShedderTest, CutsToWhatTheSendersManagedAndSpreadsTheDropsEvenly) {
  TickShedder s;
  s.Look(800, 200);  // 20% skipped
  s.Look(880, 120);  // 12% skipped, the second look in a row: cut by the last
  EXPECT_DOUBLE_EQ(s.keep(), 0.86);
  const auto ticks = Ticks(s, 100);
  EXPECT_EQ(Kept(ticks), 86);
  EXPECT_EQ(s.shed(), 14u);
  for (size_t i = 1; i < ticks.size(); ++i)
    EXPECT_TRUE(ticks[i] || ticks[i - 1]) << "two ticks dropped in a row at " << i;
}

// A tick is shown only whole: over 15 tiles, 1.4% of the tile frames
// skipped loses about 19% of the ticks, and that is overload; 0.3% loses
// about 4%, which neither cuts nor counts as quiet.
TEST(TickShedderTest, CountsTheTicksThatLostATileOverAllTheTiles) {
  TickShedder s;
  s.Look(1000, 14, 1);  // one tile: 1.4% of the ticks
  s.Look(1000, 14, 1);
  EXPECT_DOUBLE_EQ(s.keep(), 1.0);
  s.Look(14200, 200, 15);  // 1.4% of 15 tiles' frames
  s.Look(14200, 200, 15);
  EXPECT_NEAR(s.keep(), 1.0 - 200.0 / 14400 - TickShedder::kMargin, 1e-12);
  const double cut = s.keep();
  for (int i = 0; i < 12; ++i) s.Look(3300, 10, 15);  // 0.3%: held, never raised
  EXPECT_DOUBLE_EQ(s.keep(), cut);
  EXPECT_EQ(s.cuts(), 1u);
  for (int i = 0; i < 3; ++i) s.Look(3300, 0, 15);
  EXPECT_NEAR(s.keep(), cut + TickShedder::kRaiseStep, 1e-12);
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
  s.Look(85, 15);
  s.Look(85, 15);  // 15% twice: keep 0.83
  s.Look(0, 0);    // nothing played: no news, and not the ignored look
  s.Look(90, 0);   // the ignored one
  s.Look(90, 1);   // under 2%: a skip now and then is quiet enough
  s.Look(90, 0);
  EXPECT_DOUBLE_EQ(s.keep(), 0.83);
  s.Look(90, 0);
  EXPECT_NEAR(s.keep(), 0.85, 1e-12);
  for (int i = 0; i < 3 * 10; ++i) s.Look(90, 0);  // 0.85 + 8 x 2%: every tick
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

// NICs down (NIC failover): what is left carries 60% of the wall's rate,
// so the wall sends 60% of its ticks, evenly, though the senders never
// skipped one; once the NICs are back, every tick again at once.
TEST(TickShedderTest, ACeilingFromTheNicsLeftCapsTheShareAtOnceAndLiftsItAtOnce) {
  TickShedder s;
  s.SetCeiling(0.6);
  EXPECT_DOUBLE_EQ(s.keep(), 0.6);
  EXPECT_EQ(Kept(Ticks(s, 100)), 60);
  for (int look = 0; look < 10; ++look) s.Look(100, 0);  // the senders keep up
  EXPECT_DOUBLE_EQ(s.keep(), 0.6) << "never above the ceiling";
  s.SetCeiling(1.0);
  EXPECT_DOUBLE_EQ(s.keep(), 1.0);
  // The ticks shed after the last one sent were decided with it.
  EXPECT_GE(Kept(Ticks(s, 100)), 99);
  EXPECT_EQ(Kept(Ticks(s, 100)), 100);
  s.SetCeiling(0.01);
  EXPECT_DOUBLE_EQ(s.keep(), TickShedder::kMinKeep) << "never under a quarter";
}

TEST(TickShedderTest, ACeilingAboveWhatTheSendersManageLeavesTheirShare) {
  TickShedder s;
  for (int look = 0; look < 2; ++look) s.Look(70, 30);  // 30% skipped: cut to 68%
  const double managed = s.keep();
  ASSERT_LT(managed, 0.7);
  s.SetCeiling(0.9);
  EXPECT_DOUBLE_EQ(s.keep(), managed);
  s.SetCeiling(1.0);
  EXPECT_DOUBLE_EQ(s.keep(), managed) << "the senders' own share rises by its steps";
}

}  // namespace
}  // namespace tilestream
