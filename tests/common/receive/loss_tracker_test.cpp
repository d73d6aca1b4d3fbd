#include "common/receive/loss_tracker.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace tilestream {
namespace {

constexpr int64_t kMs = 1'000'000;

std::vector<uint16_t> Due(LossTracker& t, int64_t now) {
  t.SetNow(now);
  std::array<uint16_t, 64> out;
  return {out.begin(), out.begin() + static_cast<ptrdiff_t>(t.TakeDue(out))};
}

LossTracker::Options Options() {
  LossTracker::Options o;
  o.window_ns = 100 * kMs;
  o.first_retry_ns = 2 * kMs;
  o.max_requests = 3;
  return o;
}

// A frame's repairs answered within a few milliseconds of each other all
// see the path as it is then: their deviation stays with the largest of
// the round trip, falling once a round trip, so that the next frame's,
// a path's wander later, are not asked for again too soon.
TEST(BurstyRttEstimate, ABurstOfLikeSamplesDoesNotTakeTheDeviationAway) {
  constexpr int64_t kMs = 1'000'000;
  BurstyRttEstimate bursty;
  RttEstimate plain;
  int64_t now = 0;
  for (int64_t sample : {10 * kMs, 20 * kMs}) {  // two frames' first answers
    bursty.Sample(sample, now);
    plain.Sample(sample);
    now += 200 * kMs;
  }
  const int64_t after_jump = bursty.estimate().rttvar_ns;
  EXPECT_GT(after_jump, 2 * kMs);
  for (int i = 0; i < 40; ++i) {  // one frame's repairs, 0.1 ms apart
    bursty.Sample(20 * kMs, now + i * 100'000);
    plain.Sample(20 * kMs);
  }
  EXPECT_LT(plain.rttvar_ns, kMs / 10);                        // gone within the burst
  EXPECT_GE(bursty.estimate().rttvar_ns, after_jump * 3 / 4);  // one round trip's fall at most
  EXPECT_EQ(bursty.estimate().rtt_ns, plain.rtt_ns);
  EXPECT_EQ(bursty.estimate().samples, 42u);
  // A larger deviation is taken at once.
  bursty.Sample(60 * kMs, now + 5 * kMs);
  EXPECT_GE(bursty.estimate().rttvar_ns, 9 * kMs);
}

TEST(LossTracker, AsksAtOnceThenBacksOffAndStopsAfterTheLastTry) {
  LossTracker t(Options());
  t.SetNow(0);
  t.Lost(70000, 2);  // extended: 70000 = 4464 mod 2^16
  EXPECT_EQ(t.next_due_ns(), 0);
  EXPECT_EQ(Due(t, 0), (std::vector<uint16_t>{4464, 4465}));
  EXPECT_EQ(Due(t, 1 * kMs), std::vector<uint16_t>{});
  EXPECT_EQ(t.next_due_ns(), 2 * kMs);
  EXPECT_EQ(Due(t, 2 * kMs), (std::vector<uint16_t>{4464, 4465}));
  EXPECT_EQ(t.next_due_ns(), 6 * kMs);  // then 4 ms later
  EXPECT_EQ(Due(t, 6 * kMs).size(), 2u);
  EXPECT_EQ(Due(t, 50 * kMs), std::vector<uint16_t>{});  // three tries
  EXPECT_EQ(t.stats().requested, 6u);
  EXPECT_EQ(t.next_due_ns(), 100 * kMs);  // given up at the window's end
  Due(t, 100 * kMs);
  EXPECT_EQ(t.stats().unrecoverable, 2u);
  EXPECT_EQ(t.next_due_ns(), LossTracker::kNever);
}

// A request that asks for a packet again goes twice (its first request
// or answer was lost): the NACKs of that take are sent twice; a first
// request, and a take with nothing, once.
TEST(LossTracker, ARequestAskedAgainGoesTwice) {
  LossTracker t(Options());
  t.SetNow(0);
  t.Lost(10, 1);
  EXPECT_EQ(Due(t, 0), std::vector<uint16_t>{10});
  EXPECT_EQ(t.nack_copies(), 1);
  t.Lost(11, 1);
  EXPECT_EQ(Due(t, 1 * kMs), std::vector<uint16_t>{11});
  EXPECT_EQ(t.nack_copies(), 1);
  EXPECT_EQ(Due(t, 2 * kMs), std::vector<uint16_t>{10});  // asked again
  EXPECT_EQ(t.nack_copies(), 2);
  EXPECT_EQ(Due(t, 2 * kMs + 1), std::vector<uint16_t>{});
  EXPECT_EQ(t.nack_copies(), 1);
  EXPECT_EQ(t.stats().requested, 3u);  // sequence numbers, not copies
  EXPECT_EQ(t.stats().asked_again, 1u);
}

// Where the wall says so, a first request goes twice too; nothing else
// than 1 or 2 copies is taken.
TEST(LossTracker, AFirstRequestGoesTwiceWhereTheWallSays) {
  LossTracker t(Options());
  t.SetFirstCopies(2);
  t.SetNow(0);
  t.Lost(10, 1);
  EXPECT_EQ(Due(t, 0), std::vector<uint16_t>{10});
  EXPECT_EQ(t.nack_copies(), 2);
  EXPECT_EQ(t.stats().requested, 1u);
  t.SetFirstCopies(7);
  t.Lost(11, 1);
  EXPECT_EQ(Due(t, 1 * kMs), std::vector<uint16_t>{11});
  EXPECT_EQ(t.nack_copies(), 1);
}

TEST(LossTracker, WhatArrivesIsNoLongerAskedFor) {
  LossTracker t(Options());
  t.SetNow(0);
  t.Lost(10, 3);
  EXPECT_TRUE(t.Arrived(11));
  EXPECT_FALSE(t.Arrived(11));  // once
  EXPECT_FALSE(t.Arrived(13));  // never missing
  EXPECT_EQ(Due(t, 0), (std::vector<uint16_t>{10, 12}));
  EXPECT_TRUE(t.Arrived(10));
  EXPECT_TRUE(t.Arrived(12));
  Due(t, 200 * kMs);
  EXPECT_EQ(t.stats().unrecoverable, 0u);
  EXPECT_EQ(t.missing(), 0u);
}

TEST(LossTracker, NeverAsksAfterTheWindow) {
  LossTracker t(Options());
  t.SetNow(0);
  t.Lost(5, 1);
  t.SetNow(30 * kMs);
  t.Lost(9, 1);
  EXPECT_EQ(Due(t, 100 * kMs), std::vector<uint16_t>{9});  // 5 is past its window
  EXPECT_EQ(t.stats().unrecoverable, 1u);
}

TEST(LossTracker, ARestartedStreamGivesUpWhatWasMissing) {
  LossTracker t(Options());
  t.SetNow(0);
  t.Lost(5, 3);
  t.Arrived(6);
  t.Forget();
  EXPECT_EQ(t.stats().unrecoverable, 2u);
  EXPECT_EQ(t.next_due_ns(), LossTracker::kNever);
  EXPECT_EQ(Due(t, 0), std::vector<uint16_t>{});
}

TEST(LossTracker, AGapLargerThanItsRoomIsUnrecoverableBeyondIt) {
  LossTracker::Options o = Options();
  o.capacity = 4;
  LossTracker t(o);
  t.SetNow(0);
  t.Lost(0, 10);
  EXPECT_EQ(t.stats().unrecoverable, 6u);
  EXPECT_EQ(Due(t, 0).size(), 4u);
}

// Within the reorder window a packet that arrives late was reordered, not
// lost: never asked for.
TEST(LossTracker, APacketBackWithinTheReorderWindowIsNeverAskedFor) {
  LossTracker::Options o = Options();
  o.reorder_ns = 2 * kMs;
  LossTracker t(o);
  t.SetNow(0);
  t.Lost(7, 2);
  EXPECT_EQ(t.next_due_ns(), 2 * kMs);
  EXPECT_EQ(Due(t, 1 * kMs), std::vector<uint16_t>{});
  t.SetNow(1500'000);
  EXPECT_TRUE(t.Arrived(7));
  EXPECT_EQ(Due(t, 2 * kMs), std::vector<uint16_t>{8});
  EXPECT_EQ(t.stats().reordered, 1u);
  EXPECT_EQ(t.stats().requested, 1u);
  EXPECT_EQ(t.stats().rtt.samples, 0u);
}

// Once a round trip is measured (request to arrival), a packet is asked
// for again after the round trip and two deviations, not the LAN's 2 ms.
TEST(LossTracker, AsksAgainAfterTheMeasuredRoundTrip) {
  LossTracker::Options o = Options();
  o.window_ns = 500 * kMs;
  LossTracker t(o);
  t.SetNow(0);
  t.Lost(1, 1);
  Due(t, 0);
  t.SetNow(20 * kMs);
  EXPECT_TRUE(t.Arrived(1));
  EXPECT_EQ(t.stats().rtt.rtt_ns, 20 * kMs);
  EXPECT_EQ(t.stats().rtt.rttvar_ns, 0);  // one sample: no deviation yet
  t.SetNow(30 * kMs);
  t.Lost(2, 1);
  EXPECT_EQ(Due(t, 30 * kMs), std::vector<uint16_t>{2});
  // 2 ms + 20 + an eighth of it (one sample: no deviation yet).
  const int64_t again = 30 * kMs + 2 * kMs + 20 * kMs + 20 * kMs / 8;
  EXPECT_EQ(t.next_due_ns(), again);
  EXPECT_EQ(Due(t, again - 1), std::vector<uint16_t>{});
  EXPECT_EQ(Due(t, again), std::vector<uint16_t>{2});
  // A second sample moves the estimate as TCP's does.
  t.SetNow(110 * kMs);
  EXPECT_TRUE(t.Arrived(2));  // asked twice: no sample (Karn's rule)
  t.Lost(3, 1);
  EXPECT_EQ(Due(t, 110 * kMs), std::vector<uint16_t>{3});
  t.SetNow(190 * kMs);  // 80 ms after its request
  EXPECT_TRUE(t.Arrived(3));
  EXPECT_EQ(t.stats().rtt.rtt_ns, 20 * kMs + 60 * kMs / 8);
  EXPECT_EQ(t.stats().rtt.rttvar_ns, 60 * kMs / 4);
}

// Before it measured a round trip of its own, a node far away asks again
// after the one the swap sync measured to it (RetryAfterNs: an eighth
// more, and 2 ms), not on a LAN's 2, 4, 8 ms: those requests all
// went before the first answer could come (the simulation's burst-50 asked
// for each lost packet 4 times). Its own measurement then takes over.
TEST(LossTracker, AsksAgainAfterTheWallsRoundTripUntilItMeasuredItsOwn) {
  LossTracker::Options o = Options();
  o.window_ns = 500 * kMs;
  LossTracker t(o);
  t.SetRttHint(40 * kMs, 2 * kMs);
  t.SetNow(0);
  t.Lost(1, 1);
  EXPECT_EQ(Due(t, 0), std::vector<uint16_t>{1});
  const int64_t again = 2 * kMs + 40 * kMs + 40 * kMs / 8;  // two deviations are less
  EXPECT_EQ(t.next_due_ns(), again);
  EXPECT_EQ(Due(t, again - 1), std::vector<uint16_t>{});
  EXPECT_EQ(Due(t, again), std::vector<uint16_t>{1});
  t.SetNow(again + 10 * kMs);
  EXPECT_TRUE(t.Arrived(1));  // asked twice: which request it answers is unknown
  EXPECT_EQ(t.stats().rtt.samples, 0u);
  EXPECT_EQ(t.stats().ambiguous, 1u);
  const int64_t now = again + 10 * kMs;
  t.Lost(2, 1);
  Due(t, now);
  EXPECT_EQ(t.next_due_ns(), now + again);  // still the wall's
  t.SetNow(now + 41 * kMs);
  EXPECT_TRUE(t.Arrived(2));  // its own sample: 41 ms
  t.Lost(3, 1);
  Due(t, now + 41 * kMs);
  EXPECT_EQ(t.next_due_ns(), now + 41 * kMs + RetryAfterNs(41 * kMs, 0));
}

// Karn's rule: a packet asked for again (its request or the answer lost)
// arrives a retry after its first request; that is no round trip. Taken
// in, at 2% loss such samples tripled the deviation and with it the
// playout latency's budget for repairs.
TEST(LossTracker, APacketAskedForTwiceIsNoRoundTrip) {
  LossTracker::Options o = Options();
  o.window_ns = 500 * kMs;
  LossTracker t(o);
  t.SetNow(0);
  t.Lost(1, 1);
  Due(t, 0);
  t.SetNow(20 * kMs);
  EXPECT_TRUE(t.Arrived(1));
  t.Lost(2, 1);
  EXPECT_EQ(Due(t, 20 * kMs), std::vector<uint16_t>{2});
  const int64_t again = 20 * kMs + RetryAfterNs(20 * kMs, 0);
  EXPECT_EQ(Due(t, again), std::vector<uint16_t>{2});
  t.SetNow(again + 20 * kMs);
  EXPECT_TRUE(t.Arrived(2));
  EXPECT_EQ(t.stats().rtt.samples, 1u);
  EXPECT_EQ(t.stats().rtt.rtt_ns, 20 * kMs);
  EXPECT_EQ(t.stats().rtt.rttvar_ns, 0);
  EXPECT_EQ(t.stats().ambiguous, 1u);
}

// But when answers keep coming only after a retry, the path's round trip
// has grown past the retry interval: past kStarvedAnswers in a row they
// are taken (from the first request), and the estimate rises to it.
TEST(LossTracker, AnswersThatAllComeAfterARetryAreTakenInTheEnd) {
  LossTracker::Options o = Options();
  o.window_ns = 10'000 * kMs;
  LossTracker t(o);
  t.SetNow(0);
  t.Lost(1, 1);
  Due(t, 0);
  t.SetNow(10 * kMs);
  EXPECT_TRUE(t.Arrived(1));  // 10 ms; the path then grows to 100 ms
  int64_t now = 10 * kMs;
  for (uint64_t seq = 2; seq < 2 + LossTracker::kStarvedAnswers + 1; ++seq) {
    t.Lost(seq, 1);
    EXPECT_EQ(Due(t, now), std::vector<uint16_t>{static_cast<uint16_t>(seq)});
    const int64_t first = now;
    now = t.next_due_ns();
    EXPECT_EQ(Due(t, now), std::vector<uint16_t>{static_cast<uint16_t>(seq)});
    now = first + 100 * kMs;
    t.SetNow(now);
    EXPECT_TRUE(t.Arrived(seq));
  }
  EXPECT_EQ(t.stats().ambiguous, LossTracker::kStarvedAnswers);
  EXPECT_EQ(t.stats().rtt.samples, 2u);
  EXPECT_EQ(t.stats().rtt.rtt_ns, 10 * kMs + 90 * kMs / 8);
}

// A retry whose answer would come back after the packet is given up is
// not sent: counted, and the packet is not asked for again.
TEST(LossTracker, ARetryWhoseAnswerCannotComeInTimeIsNotSent) {
  LossTracker::Options o = Options();
  o.window_ns = 200 * kMs;
  o.reorder_ns = 30 * kMs;
  LossTracker t(o);
  t.SetNow(0);
  t.Lost(1, 1);
  EXPECT_EQ(Due(t, 30 * kMs), std::vector<uint16_t>{1});
  t.SetNow(90 * kMs);
  t.Arrived(1);  // a round trip of 60 ms, deviation 30
  t.Lost(2, 1);
  EXPECT_EQ(Due(t, 120 * kMs), std::vector<uint16_t>{2});  // the first request goes
  // Its retry is due 2 + 60 + 2 x 30 ms later, at 242 ms: an answer would
  // come at 302 ms, after the window's end at 290.
  EXPECT_EQ(Due(t, 245 * kMs), std::vector<uint16_t>{});
  EXPECT_EQ(t.stats().not_asked, 1u);
  EXPECT_EQ(Due(t, 290 * kMs), std::vector<uint16_t>{});
  EXPECT_EQ(t.stats().unrecoverable, 1u);
  EXPECT_EQ(t.stats().requested, 2u);
}

// One slow answer (a wall started on a loaded machine) must not stop the
// requests that would measure the path again: a first request goes even
// when the estimate says its answer comes too late, and the answers bring
// the estimate down.
TEST(LossTracker, AFirstRequestGoesWhateverTheEstimateSoThatItCanFall) {
  LossTracker::Options o = Options();  // window 100 ms
  LossTracker t(o);
  t.SetNow(0);
  t.Lost(1, 1);
  EXPECT_EQ(Due(t, 0), std::vector<uint16_t>{1});
  t.SetNow(250 * kMs);
  t.Arrived(1);  // 250 ms: more than the window
  ASSERT_EQ(t.stats().rtt.rtt_ns, 250 * kMs);
  for (uint64_t seq = 2; seq < 40; ++seq) {
    const int64_t now = static_cast<int64_t>(seq) * 300 * kMs;
    t.SetNow(now);
    t.Lost(seq, 1);
    EXPECT_EQ(Due(t, now), std::vector<uint16_t>{static_cast<uint16_t>(seq)});
    t.SetNow(now + kMs);
    EXPECT_TRUE(t.Arrived(seq));
  }
  EXPECT_LT(t.stats().rtt.rtt_ns, 5 * kMs);
  EXPECT_EQ(t.stats().not_asked, 0u);
  EXPECT_EQ(t.stats().unrecoverable, 0u);
}

// The wall's latency changed: the window follows it for what is missing.
TEST(LossTracker, AWindowSetLaterHoldsForWhatIsMissing) {
  LossTracker t(Options());  // 100 ms
  t.SetNow(0);
  t.Lost(1, 1);
  Due(t, 0);
  t.SetWindow(300 * kMs);
  EXPECT_EQ(Due(t, 150 * kMs), std::vector<uint16_t>{1});  // past the old window, not the new
  EXPECT_EQ(t.stats().unrecoverable, 0u);
  Due(t, 300 * kMs);
  EXPECT_EQ(t.stats().unrecoverable, 1u);
}

TEST(LossTracker, WhatIsGivenUpBeforeASequenceIsNoLongerAskedFor) {
  LossTracker t(Options());
  t.SetNow(0);
  t.Lost(10, 5);
  t.Arrived(11);
  t.GiveUpBefore(13);
  EXPECT_EQ(t.stats().unrecoverable, 2u);  // 10 and 12
  EXPECT_EQ(Due(t, 0), (std::vector<uint16_t>{13, 14}));
}

}  // namespace
}  // namespace tilestream
