// The delay line of testbed/pathline: every packet a network namespace sends
// and receives (nftables queues them to user space, netfilter's NFQUEUE)
// is held and released, or dropped, as a PathModel (testbed/path_model.h)
// says: one queue number for each direction.
//
// Only the first bytes of each packet come up (its IPv4 and transport
// headers); the verdict lets the kernel's own copy go, so the cost per
// packet is two netlink messages, and the verdicts of one wake-up go down
// in one system call. One thread; sleeps until the next release is due or
// a packet comes (ppoll, to the nanosecond). What it measures of itself
// is in Report(): the hold each packet was given (`drawn`, the model's
// schedule), the time it was held (`held`) and how late its release was
// against the schedule (`late`, the host's scheduling).
//
// Not thread-safe: Run on one thread; RequestStop from a signal handler.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/base/unique_fd.h"
#include "testbed/path_model.h"

struct mnl_socket;
struct nlmsghdr;

namespace tilestream {

// Percentiles of times (microseconds, to 10 us, up to 2 s).
class HoldHistogram {
 public:
  HoldHistogram() : buckets_(kBuckets, 0) {}
  void Add(int64_t ns);
  double Percentile(double p) const;  // us
  double max_us() const { return max_ns_ / 1e3; }
  uint64_t count() const { return count_; }

 private:
  static constexpr size_t kBuckets = 200'000;  // of 10 us
  std::vector<uint32_t> buckets_;
  uint64_t count_ = 0;
  int64_t max_ns_ = 0;
};

class DelayLine {
 public:
  struct Options {
    PathSpec spec;
    uint16_t out_queue = 0;  // nftables' `queue num` of the packets sent
    uint16_t in_queue = 1;   // and of those received
    uint32_t queue_max = 65536;
  };
  static Result<std::unique_ptr<DelayLine>> Open(const Options& options);
  ~DelayLine();

  // Until RequestStop or until_ns (CLOCK_MONOTONIC); then every packet
  // still held is let go at once. Not ok: the netlink socket failed.
  Status Run(int64_t until_ns);
  void RequestStop() { stop_ = true; }

  // What crossed, what was done to it, and how accurately (JSON).
  std::string Report() const;

 private:
  struct Held {
    uint32_t id;
    uint16_t queue;
    int64_t arrived_ns;
    int64_t release_ns;
    bool operator>(const Held& o) const { return release_ns > o.release_ns; }
  };
  struct Way {
    std::deque<Held> in_order;
    std::priority_queue<Held, std::vector<Held>, std::greater<>> reordered;
    HoldHistogram drawn, held, late;
  };

  explicit DelayLine(const Options& options, mnl_socket* nl);
  Status Bind(uint16_t queue);
  Status Receive();
  static int OnPacket(const nlmsghdr* nlh, void* self);
  void Take(uint32_t id, uint16_t queue, const uint8_t* ip, size_t length);
  void Verdict(uint32_t id, uint16_t queue, int verdict);
  void ReleaseDue(int64_t now_ns, bool all);
  Status Flush();
  int64_t NextRelease() const;

  Options options_;
  mnl_socket* nl_;
  uint32_t port_id_ = 0;
  PathModel model_;
  Way way_[2];
  std::vector<char> receive_buffer_, verdict_buffer_;
  size_t verdict_bytes_ = 0;
  int64_t now_ns_ = 0;
  std::atomic<bool> stop_{false};
  uint64_t overruns_ = 0;  // the socket overflowed: packets the kernel dropped
  uint64_t unparsed_ = 0;  // not IPv4: let go undelayed
  uint64_t verdict_errors_ = 0;
};

}  // namespace tilestream
