// Virtual time for the wall's simulation: a clock the simulation owns and
// the events due on it, run in order of time and, at one time, in the order
// they were scheduled, so that one seed gives one run, bit for bit.
// Single-threaded by design: nothing in the simulation waits.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "common/base/clock.h"

namespace tilestream::sim {

// The programs' classes take a Clock; here it reads the simulation's time
// (common/base/clock.h: nothing sleeps on it).
using SimClock = ManualClock;

class EventQueue {
 public:
  SimClock* clock() { return &clock_; }
  int64_t now() const { return const_cast<SimClock&>(clock_).NowNs(); }

  // Runs `what` at `at_ns` (now, if that has passed).
  void At(int64_t at_ns, std::function<void()> what);
  // Runs events until none is left or the next is after `end_ns`; time
  // stops at end_ns. Returns the events run.
  uint64_t RunUntil(int64_t end_ns);

 private:
  struct Event {
    int64_t at_ns;
    uint64_t order;
    std::function<void()> what;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at_ns != b.at_ns ? a.at_ns > b.at_ns : a.order > b.order;
    }
  };
  SimClock clock_;
  uint64_t scheduled_ = 0;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
};

// Every draw of a run comes from one seed: SplitMix64, cheap and the same
// on every build and machine (std::normal_distribution is not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
  bool Chance(double p) { return p > 0 && Uniform() < p; }
  // A standard normal draw (Box-Muller; one of the pair).
  double Normal();
  // A seed of its own for a part of the run (a link, a host).
  uint64_t Fork() { return Next(); }

 private:
  uint64_t state_;
};

}  // namespace tilestream::sim
