#include "streamer/tick_wait.h"

#include <algorithm>

namespace tilestream {

int64_t TickWait::WaitNs(int64_t now, int64_t heartbeat_ns) const {
  const int64_t until_due = next_tick_due_ns_ - now;
  int64_t wait;
  if (armed_ && now < look_until_ns_)
    wait = std::clamp((now - look_from_ns_) / 2, kPollNs, kMaxPollNs);
  else if (armed_)
    wait = until_due + kLateTickNs > 0 ? until_due + kLateTickNs : heartbeat_ns - now;
  else
    wait = until_due > 0 ? until_due : std::clamp(-until_due / 2, kPollNs, kMaxPollNs);
  return std::max(std::min(wait, heartbeat_ns - now), kPollNs);
}

uint64_t TickWait::SeenLate(int64_t waiting_since, int64_t taken, int64_t newest_due,
                            int64_t interval, uint64_t plays) {
  uint64_t late = 0;
  for (uint64_t i = 0; i < std::min<uint64_t>(plays, 64); ++i) {
    const int64_t due = newest_due - static_cast<int64_t>(i) * interval;
    late += due >= waiting_since && taken - due > interval / 4;
  }
  return late;
}

void TickWait::Rang(uint64_t sequence, int64_t now) {
  rung_ = rung_ || sequence != 0;
  if (sequence > sequence_) Look(now, kRingLookNs);  // a ring for a tick already taken is old
}

void TickWait::Slept(int64_t now) {
  slept_ = true;
  if (!armed_ || late_looked_ || now < look_until_ns_ || now < next_tick_due_ns_ + kLateTickNs)
    return;
  Look(now, kLateLookNs);
  late_looked_ = true;
}

bool TickWait::Took(const TickMessage& tick, int64_t now) {
  bool gave_up = false;
  if (armed_ && slept_ && !rung_ && ++unrung_ticks_ == kUnrungTicks) gave_up = deaf_ = true;
  if (rung_) unrung_ticks_ = 0;
  armed_ = tick.doorbell != 0 && has_doorbell_ && !deaf_;
  sequence_ = tick.sequence;
  look_until_ns_ = 0;
  late_looked_ = slept_ = rung_ = false;
  Expect(tick, now);
  return gave_up;
}

void TickWait::Expect(const TickMessage& tick, int64_t now) {
  if (tick.command != TickCommand::kPlay || tick.interval_ns <= 0) {
    tick_due_ns_ = now;
    next_tick_due_ns_ = now + tick.interval_ns;
    return;
  }
  const int64_t offset = static_cast<int64_t>(tick.tick) * tick.interval_ns;
  if (!have_schedule_ || now - offset < schedule_start_ns_) schedule_start_ns_ = now - offset;
  have_schedule_ = true;
  tick_due_ns_ = schedule_start_ns_ + offset;
  next_tick_due_ns_ = tick_due_ns_ + tick.interval_ns * std::max<uint32_t>(1, tick.next_in_ticks);
}

}  // namespace tilestream
