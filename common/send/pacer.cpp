#include "common/send/pacer.h"

#include <algorithm>
#include <limits>

namespace tilestream {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

void Pacer::BeginFrame(int64_t start_ns, int64_t window_ns, uint32_t packets,
                       uint64_t frame_bytes) {
  base_ns_ = start_ns;
  span_ns_ = window_ns;
  end_ns_ = start_ns + window_ns;
  base_index_ = 0;
  packets_ = packets;
  // Packets per burst: a quantum's worth, and no more than the byte bound
  // allows (packets of a frame are near enough equal in size).
  const long double per_packet_ns = static_cast<long double>(window_ns) / packets;
  const uint64_t by_time =
      static_cast<uint64_t>(static_cast<long double>(options_.quantum_ns) / per_packet_ns);
  const uint64_t by_bytes =
      frame_bytes == 0 ? packets : options_.max_burst_bytes * packets / frame_bytes;
  burst_ = static_cast<uint32_t>(
      std::clamp<uint64_t>(std::min(options_.enabled ? by_time : packets, by_bytes), 1, packets));
  if (burst_ < packets && burst_ >= options_.burst_multiple)
    burst_ -= burst_ % options_.burst_multiple;
  quantum_ns_ = std::max<int64_t>(1, static_cast<int64_t>(burst_ * per_packet_ns));
  // This stream's phase: its bursts fall between other streams' (the window
  // still ends where planned).
  const auto shift = static_cast<int64_t>(options_.phase * static_cast<double>(quantum_ns_));
  if (options_.enabled && shift < window_ns) {
    base_ns_ += shift;
    span_ns_ -= shift;
  }
}

int64_t Pacer::SlotNs(uint32_t index) const {
  // long double holds index * span exactly (64-bit mantissa).
  return base_ns_ + static_cast<int64_t>(static_cast<long double>(index - base_index_) * span_ns_ /
                                         (packets_ - base_index_));
}

void Pacer::Squeeze(uint32_t next, int64_t now) {
  ++stats_.squeezes;
  base_index_ = next;
  base_ns_ = now;
  // What is left of the window, and at least a quantum: past its end the
  // rest still goes paced, over the tick's slack (5% of the interval).
  span_ns_ = std::max(end_ns_ - now, quantum_ns_);
}

bool WaitUntilNs(Clock* clock, int64_t deadline_ns, int64_t spin_ns) {
  const bool sleep = deadline_ns - clock->NowNs() > spin_ns;
  if (sleep) clock->SleepUntilNs(deadline_ns - spin_ns);
  while (clock->NowNs() < deadline_ns) CpuRelax();
  return sleep;
}

int64_t Pacer::DueNs(uint32_t next) const {
  return options_.enabled ? SlotNs(next) : std::numeric_limits<int64_t>::min();
}

uint32_t Pacer::TakeBurst(uint32_t next, bool hurry) {
  ++stats_.waits;
  const uint32_t end = std::min(packets_, next + burst_);
  if (!options_.enabled || hurry) return end;
  const int64_t slot = SlotNs(next);
  const int64_t now = clock_->NowNs();
  if (now - slot > options_.spin_ns) ++stats_.late;
  if (now - slot > quantum_ns_) Squeeze(next, now);
  return end;
}

void Pacer::WaitForSlot(uint32_t next) {
  if (options_.enabled && WaitUntilNs(clock_, SlotNs(next), options_.spin_ns)) ++stats_.sleeps;
}

uint32_t Pacer::WaitForBurst(uint32_t next, bool hurry) {
  if (!hurry) WaitForSlot(next);
  return TakeBurst(next, hurry);
}

}  // namespace tilestream
