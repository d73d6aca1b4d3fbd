#include "common/control/control_port_limits.h"

#include <gtest/gtest.h>

#include "common/base/clock.h"

namespace tilestream {
namespace {

constexpr int64_t kS = kNsPerSecond;

ControlSettings Settings() {
  ControlSettings s;
  s.line_timeout_s = 5;
  s.idle_timeout_s = 600;
  s.max_clients = 4;
  return s;
}

// A line's bound counts from its first byte, however the bytes dribble
// in; a whole line ends it.
TEST(ControlPortLimits, ALineMustEndWithinItsBoundFromItsFirstByte) {
  ControlLineTimes t{0, -1};
  EXPECT_EQ(CheckControlDeadlines(&t, true, false, 10 * kS, Settings()), ControlDeadline::kNone);
  EXPECT_EQ(t.line_started_ns, 10 * kS) << "noted when first seen under way";
  EXPECT_EQ(CheckControlDeadlines(&t, true, false, 15 * kS, Settings()), ControlDeadline::kNone);
  EXPECT_EQ(CheckControlDeadlines(&t, true, false, 15 * kS + 1, Settings()),
            ControlDeadline::kLineTooSlow);
  t.last_line_ns = 15 * kS;
  EXPECT_EQ(CheckControlDeadlines(&t, false, false, 16 * kS, Settings()), ControlDeadline::kNone);
  EXPECT_EQ(t.line_started_ns, -1) << "the line ended";
}

// The idle bound counts from the last whole line, not the last byte; a
// sync connection has none.
TEST(ControlPortLimits, ACommandConnectionWithoutALineIsIdleAtItsBound) {
  ControlLineTimes t{100 * kS, -1};
  EXPECT_EQ(CheckControlDeadlines(&t, false, false, 700 * kS, Settings()), ControlDeadline::kNone);
  EXPECT_EQ(CheckControlDeadlines(&t, false, false, 700 * kS + 1, Settings()),
            ControlDeadline::kIdle);
  EXPECT_EQ(CheckControlDeadlines(&t, false, true, 7000 * kS, Settings()), ControlDeadline::kNone)
      << "a display node's sync connection";
  ControlLineTimes dribbling{100 * kS, -1};  // bytes all along, never a line end
  for (int64_t s = 101; s <= 700; s += 4)
    ASSERT_EQ(CheckControlDeadlines(&dribbling, s % 8 == 1, false, s * kS, Settings()),
              ControlDeadline::kNone)
        << "lines of 4 s at most, but no whole line";
  EXPECT_EQ(CheckControlDeadlines(&dribbling, true, false, 701 * kS, Settings()),
            ControlDeadline::kIdle);
}

// Lines under way go first (the oldest), then the longest without a line.
TEST(ControlPortLimits, TheStalestGivesItsPlaceUpFirst) {
  const ControlLineTimes dribbler_old{0, 50}, dribbler_new{0, 90}, quiet_old{10, -1},
      quiet_new{80, -1};
  EXPECT_TRUE(StalerThan(dribbler_old, dribbler_new));
  EXPECT_TRUE(StalerThan(dribbler_new, quiet_old));
  EXPECT_TRUE(StalerThan(quiet_old, quiet_new));
  EXPECT_FALSE(StalerThan(quiet_old, dribbler_new));
  EXPECT_FALSE(StalerThan(quiet_new, quiet_new));
}

// max_clients places, and two more per display node for the nodes'
// addresses only.
TEST(ControlPortLimits, DisplayNodesHaveTwoPlacesEachBeyondTheLimit) {
  EXPECT_TRUE(ControlPortHasRoom(3, Settings(), 2, false));
  EXPECT_FALSE(ControlPortHasRoom(4, Settings(), 2, false));
  EXPECT_TRUE(ControlPortHasRoom(4, Settings(), 2, true));
  EXPECT_TRUE(ControlPortHasRoom(7, Settings(), 2, true));
  EXPECT_FALSE(ControlPortHasRoom(8, Settings(), 2, true));
}

}  // namespace
}  // namespace tilestream
