#include "common/control/control_port.h"

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
// in; the idle bound from the last whole line, not the last byte.
TEST(ControlStanding, ALineMustEndWithinItsBoundAndALineComeWithinTheIdleBound) {
  EXPECT_EQ(ControlStanding(100 * kS, -1, false, Settings()).deadline_ns, 700 * kS);
  EXPECT_EQ(ControlStanding(100 * kS, 110 * kS, false, Settings()).deadline_ns, 115 * kS);
  EXPECT_EQ(ControlStanding(100 * kS, 698 * kS, false, Settings()).deadline_ns, 700 * kS)
      << "a dribbler's lines of 4 s at most still need a whole line within the idle bound";
}

// A display node's sync connection has no idle bound and never yields its
// place; a line under way there still has its bound.
TEST(ControlStanding, ASyncConnectionIsKeptWithoutAnIdleBound) {
  const Standing quiet = ControlStanding(100 * kS, -1, true, Settings());
  EXPECT_EQ(quiet.yield, Yield::kKept);
  EXPECT_EQ(quiet.deadline_ns, kNoDeadline);
  EXPECT_EQ(ControlStanding(100 * kS, 7000 * kS, true, Settings()).deadline_ns, 7005 * kS);
}

// Lines under way yield first (the oldest), then the longest without a line.
TEST(ControlStanding, ALineUnderWayYieldsBeforeAQuietConnection) {
  const Standing dribbler = ControlStanding(0, 50, false, Settings());
  const Standing quiet = ControlStanding(10, -1, false, Settings());
  EXPECT_EQ(dribbler.yield, Yield::kFirst);
  EXPECT_EQ(dribbler.since_ns, 50);
  EXPECT_EQ(quiet.yield, Yield::kStale);
  EXPECT_EQ(quiet.since_ns, 10);
}

}  // namespace
}  // namespace tilestream
