#include "common/net/http_connections.h"

#include <gtest/gtest.h>

#include "common/base/clock.h"

namespace tilestream {
namespace {

constexpr int64_t kMs = kNsPerMs;
constexpr int64_t kS = kNsPerSecond;

HttpLimits Limits() {
  HttpLimits l;
  l.header_timeout_ms = 2000;
  l.timeout_s = 5;
  l.keep_alive_s = 10;
  return l;
}

// The head has header_timeout_ms from the request's start, however the
// bytes dribble in; the body timeout_s from the same start, not from the
// end of its headers.
TEST(HttpStanding, TheRequestsDeadlinesCountFromItsStart) {
  EXPECT_EQ(HttpStanding(HttpPhase::kHead, 0, 1500 * kMs, Limits()).deadline_ns, 2000 * kMs);
  EXPECT_EQ(HttpStanding(HttpPhase::kBody, 0, 1500 * kMs, Limits()).deadline_ns, 5 * kS);
  HttpLimits short_whole = Limits();
  short_whole.timeout_s = 1;
  EXPECT_EQ(HttpStanding(HttpPhase::kHead, 0, 0, short_whole).deadline_ns, 1 * kS)
      << "the head never outlasts the whole request";
}

// Served: no deadline, kept; written to: timeout_s from the reply, kept;
// idle: keep_alive_s, and then it yields as stale since then.
TEST(HttpStanding, ServedWrittenAndIdle) {
  const Standing served = HttpStanding(HttpPhase::kServing, 100, 100, Limits());
  EXPECT_EQ(served.yield, Yield::kKept);
  EXPECT_EQ(served.deadline_ns, kNoDeadline);
  const Standing writing = HttpStanding(HttpPhase::kWriting, 0, 1 * kS, Limits());
  EXPECT_EQ(writing.yield, Yield::kKept);
  EXPECT_EQ(writing.deadline_ns, 6 * kS);
  const Standing idle = HttpStanding(HttpPhase::kIdle, 0, 2 * kS, Limits());
  EXPECT_EQ(idle.yield, Yield::kStale);
  EXPECT_EQ(idle.since_ns, 2 * kS);
  EXPECT_EQ(idle.deadline_ns, 12 * kS);
}

}  // namespace
}  // namespace tilestream
