#include "common/control/playout_latency.h"

namespace tilestream {

void PlayoutLatency::Update(int64_t sync_ns, int64_t sync_var_ns, int64_t repair_wait_ns) {
  if (sync_ns <= 0) return;
  // The last packets' way, and (decided by the coordinator) the report's.
  const int64_t ways = at_wall_ ? sync_ns / 2 : sync_ns;
  margin_ns_ = at_wall_ ? kSlackNs : sync_ns / 2 + 2 * sync_var_ns + kSlackNs;
  const int64_t repair = repair_wait_ns > 0 ? repair_wait_ns : RetryAfterNs(sync_ns, sync_var_ns);
  // Never past the maximum: a spike over it (a stalled start's repairs)
  // is fallen from the maximum, not from the spike.
  const int64_t asked =
      std::min(std::max(ways + reorder_ns_ + repair_rounds() * repair + margin_ns_, interval_ns_),
               settings_.latency_bound_ns());
  if (asked >= auto_ns_) {  // up at once (or the first measurement)
    auto_ns_ = fall_to_ns_ = asked;
    calm_ = 0;
    return;
  }
  const int64_t hysteresis = std::max<int64_t>(auto_ns_ / 10, kSlackNs);
  calm_ = asked < auto_ns_ - hysteresis ? calm_ + 1 : 0;
  // Calm: down towards a tenth over the ask, tick by tick (MomentsFor);
  // else held where it is.
  fall_to_ns_ = calm_ >= kCalmUpdates ? asked + hysteresis : auto_ns_;
}

void PlayoutLatency::SetSent(uint64_t sent, uint64_t sent_again, uint64_t lost) {
  if (sent < sent_ || sent_again < sent_again_) sent_ = sent_again_ = 0;  // counts started over
  if (lost < lost_) lost_ = 0;                                            // a receiver started over
  const uint64_t first_sent = (sent - sent_) - std::min(sent - sent_, sent_again - sent_again_);
  const uint64_t ticks = ticks_ - ticks_at_sent_;
  if (first_sent > 0) {
    const double share = std::min(1.0, static_cast<double>(lost - lost_) / first_sent);
    share_ = share_measured_ ? share_ + (share - share_) / 8 : share;
    share_measured_ = true;
  }
  if (first_sent > 0 && ticks > 0) {
    const double per_tick = static_cast<double>(first_sent) / ticks;
    packets_per_tick_ += packets_per_tick_ > 0 ? (per_tick - packets_per_tick_) / 8 : per_tick;
  }
  sent_ = sent;
  sent_again_ = sent_again;
  lost_ = lost;
  ticks_at_sent_ = ticks_;
}

// A lost packet's first request fails when it or its answer is lost (2p),
// or when both copies' do ((2p)^2); a request asked again goes twice
// (common/receive/loss_tracker.h), each copy answered, and fails when both
// do: (2p)^2. n rounds leave (2p)^(2n-1) of the lost packets unrepaired,
// (2p)^(2n) with the first request doubled, and a tick loses p of its
// packets.
int PlayoutLatency::Rounds(int first_copies) const {
  if (!share_measured_) return kFirstRounds;
  const double fails = 2 * share_;
  int rounds = 2;
  double left = share_ * packets_per_tick_ * fails * fails * fails;
  if (first_copies > 1) left *= fails;
  for (; left > kSkipped && rounds < kMostRounds; left *= fails * fails) ++rounds;
  return rounds;
}

int PlayoutLatency::first_copies() const {
  const bool affordable = 2 * share_ <= repair_share_ / 2;
  return share_measured_ && affordable && Rounds(2) < Rounds(1) ? 2 : 1;
}

int64_t PlayoutLatency::latency_ns() const {
  if (settings_.latency != SyncSettings::kAutoLatency) return settings_.latency_bound_ns();
  const int64_t most = settings_.latency_bound_ns();
  return auto_ns_ > 0 ? std::min(auto_ns_, most) : most;
}

// The margin is at most half the latency: a round trip measured while a
// node stalled (stopped, swapping: its pongs answered all at once, a
// second late) would otherwise leave every tile no time for its repairs,
// and the wall skipped every tick not whole the moment it was sent.
int64_t PlayoutLatency::DeadlineFor(int64_t frame_end_ns) const {
  const int64_t latency = latency_ns();
  return std::max(frame_end_ns, frame_end_ns + latency - std::min(margin_ns_, latency / 2));
}

PlayoutLatency::TickMoments PlayoutLatency::MomentsFor(int64_t frame_end_ns) {
  ++ticks_;
  if (settings_.latency == SyncSettings::kAutoLatency && auto_ns_ == 0)
    auto_ns_ = fall_to_ns_ = settings_.latency_bound_ns();
  if (auto_ns_ > fall_to_ns_)
    auto_ns_ = std::max(fall_to_ns_, auto_ns_ - interval_ns_ / kFallShare);
  if (!timed())
    return {frame_end_ns +
                (settings_.deadline_ms ? int64_t{settings_.deadline_ms} * 1'000'000 : interval_ns_),
            0};
  return {DeadlineFor(frame_end_ns), PresentAt(frame_end_ns)};
}

}  // namespace tilestream
