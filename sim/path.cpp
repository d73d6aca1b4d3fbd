#include "sim/path.h"

#include <algorithm>
#include <cmath>

namespace tilestream::sim {

bool Path::down(int64_t now) const {
  for (const auto& [from, to] : s_.down)
    if (now >= from && now < to) return true;
  return false;
}

bool Path::DownBetween(int64_t from, int64_t to) const {
  for (const auto& [begin, end] : s_.down)
    if (begin < to && end > from) return true;
  return false;
}

bool Path::LoseDatagram(int64_t now) {
  while (burst_ < s_.bursts.size() && now >= s_.bursts[burst_].first)
    burst_left_ += s_.bursts[burst_++].second;
  bool lose = down(now) || rng_.Chance(s_.loss);
  if (!lose && burst_left_ > 0) {
    --burst_left_;
    lose = true;
  }
  lost_ += lose;
  return lose;
}

// Jitter as a path's queues make it: it wanders (an AR(1) process with a
// 5 ms memory), never reorders, and stays within three deviations.
int64_t Path::ArrivalNs(int64_t now) {
  int64_t delay = s_.one_way_ns;
  if (s_.jitter_ns > 0) {
    const double dt = static_cast<double>(now - last_jitter_update_) / 5e6;
    const double keep = std::exp(-std::min(dt, 50.0));
    jitter_ = keep * jitter_ + std::sqrt(1 - keep * keep) * rng_.Normal();
    last_jitter_update_ = now;
    const double cut = std::clamp(jitter_, -3.0, 3.0);
    // No datagram crosses in less than a switch takes: a round trip of 0
    // is none (RttEstimate takes no such sample, and the join's pings
    // would go on at one instant for ever).
    delay = std::max<int64_t>(kLeastNs, delay + static_cast<int64_t>(cut * s_.jitter_ns));
  }
  last_arrival_ = std::max(last_arrival_, now + delay);
  return last_arrival_;
}

int64_t TcpStream::Through(int64_t sent_ns) {
  const int64_t rtt = 2 * path_->one_way_ns();
  int64_t at = sent_ns;
  int64_t rto = std::max<int64_t>(200'000'000, rtt + rtt / 2);
  for (int tries = 0; path_->LoseSegment(at); ++tries) {
    if (tries == 0) {  // the tail-loss probe, two round trips on
      at += std::max<int64_t>(2 * rtt, 10'000'000);
      ++probes_;
    } else {  // the timeout, doubling
      at += rto;
      rto *= 2;
      ++timeouts_;
    }
    if (tries > 30) break;  // a path down for ever: the connection would reset
  }
  return path_->ArrivalNs(at);
}

void TcpStream::Send(std::string line) {
  const int64_t at = std::max(Through(q_->now()), last_delivery_);
  last_delivery_ = at;
  q_->At(at, [this, l = std::move(line)] { deliver_(l); });
}

}  // namespace tilestream::sim
