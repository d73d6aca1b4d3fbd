#include "sim/event_queue.h"

#include <cmath>
#include <numbers>

namespace tilestream::sim {

void EventQueue::At(int64_t at_ns, std::function<void()> what) {
  events_.push({at_ns < now() ? now() : at_ns, scheduled_++, std::move(what)});
}

uint64_t EventQueue::RunUntil(int64_t end_ns) {
  uint64_t ran = 0;
  while (!events_.empty() && events_.top().at_ns <= end_ns) {
    // Moved out before it runs: it may schedule more.
    Event e = std::move(const_cast<Event&>(events_.top()));
    events_.pop();
    clock_.Set(e.at_ns);
    e.what();
    ++ran;
  }
  clock_.Set(end_ns);
  return ran;
}

double Rng::Normal() {
  const double u = 1.0 - Uniform();  // (0, 1]
  const double v = Uniform();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
}

}  // namespace tilestream::sim
