// The receiving side of retransmission (docs/receiver.md, "Recovering lost
// packets"): which sequence numbers are missing, and when to ask for them
// (again). The assembler tells it what is lost and what arrived; the tile's
// network thread asks it what to NACK now.
//
// A lost packet is asked for once `reorder_ns` has passed since it was
// found missing (a packet passed by a later one within that window is not
// lost: no NACK), then again a bounded number of times, after
// RetryAfterNs (common/base/rtt_estimate.h) of the round trip it measured,
// or until it has one of the round trip the wall measured to the node
// (SetRttHint, from the swap sync's pings), else after 2, 4, 8 ... ms (a
// LAN's schedule: a far node's first requests would all go before the
// first answer could come). The round trip is measured from a packet's
// request to its arrival, smoothed as TCP does (RFC 6298), and only from
// a packet asked for once (Karn's rule): one asked again answers either
// request, and taken from the first it ran long by a retry (at 2% loss
// such samples tripled the deviation and the playout latency's budget for
// repairs). Unless kStarvedAnswers in a row came only after a retry: the
// path's round trip has outgrown the retry interval, and those samples
// are what moves the estimate up to it.
// A retry whose answer could not come back (now + round trip) before the
// packet is given up is not sent; a first request always is, since only
// its answer can correct an estimate too high (a wall started on a loaded
// machine measured 250 ms once on a LAN, asked for nothing after and so
// never measured again: docs/decisions.md, "A first request always goes").
// A packet is given up `window_ns` after it was found missing, or when the
// assembler gives its frame up (GiveUpBefore): its frame can no longer be
// shown, asking would only cost the sender's bandwidth.
//
// A request that asks for a packet again (its first request or answer was
// lost) goes twice: the caller sends the NACKs of such a TakeDue
// nack_copies() times, and the sender answers each copy. One round then
// fails only when both copies' requests or answers are lost ((2p)^2
// instead of 2p at loss p): at 2% a lost packet stays unrepaired after
// three rounds once in 10 million, not once in 16,000 (docs/decisions.md,
// "A request asked again goes twice"). The first request goes once unless
// the wall says otherwise (SetFirstCopies): doubled, it doubles the
// bandwidth of every repair, which the wall spends only where it saves a
// repair round of latency (common/control/playout_latency.h).
//
// Memory: a ring of `capacity` entries allocated at construction; a gap
// larger than what is free is tracked as far as it fits and the rest is
// unrecoverable at once. Never allocates or logs after construction. Not
// thread-safe (the network thread's alone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "common/base/rtt_estimate.h"

namespace tilestream {

struct LossTrackerStats {
  uint64_t nacks = 0;          // NACK packets sent (counted by the caller: CountNack)
  uint64_t requested = 0;      // sequence numbers asked for, repeats included
  uint64_t unrecoverable = 0;  // given up: not back within the window, or no room to track
  uint64_t reordered = 0;      // found missing, arrived before it was asked for
  uint64_t not_asked = 0;      // retries not sent: the answer could not come in time
  uint64_t ambiguous = 0;      // arrived after more than one request: not sampled
  uint64_t asked_again = 0;    // of requested: asked for again (their NACKs went twice)
  RttEstimate rtt;             // request to arrival
};

class LossTracker {
 public:
  struct Options {
    size_t capacity = 8192;              // missing packets tracked at once
    int64_t window_ns = 40'000'000;      // from found missing to given up
    int64_t first_retry_ns = 2'000'000;  // and the least between requests
    uint32_t max_requests = 5;           // per packet
    int64_t reorder_ns = 0;              // from found missing to the first request
  };
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  // Answers in a row that came only after a retry, past which they are
  // sampled (from the first request) after all.
  static constexpr uint32_t kStarvedAnswers = 8;

  explicit LossTracker(const Options& options);

  // The time of what follows (CLOCK_MONOTONIC), set before each batch.
  void SetNow(int64_t now_ns) { now_ns_ = now_ns; }
  // A new window (the wall's playout latency changed): for what is found
  // missing from now on and what is still asked for. REQUIRES: > 0.
  void SetWindow(int64_t window_ns) { options_.window_ns = window_ns; }
  // The round trip to the sender as the wall measured it (0: unknown),
  // for the retries until this tracker has measured its own.
  void SetRttHint(int64_t rtt_ns, int64_t rttvar_ns) {
    hint_.rtt_ns = rtt_ns;
    hint_.rttvar_ns = rttvar_ns;
  }
  // Extended sequence numbers [first, first + count) were found missing.
  void Lost(uint64_t first, uint64_t count);
  // `sequence` arrived: true if it was missing (and now is not).
  // O(log n).
  bool Arrived(uint64_t sequence);
  // The stream started over (a restarted sender): what is missing of the
  // old one is given up.
  void Forget();
  // Sequence numbers below `sequence` are no longer wanted (their frame
  // was given up): given up.
  void GiveUpBefore(uint64_t sequence);
  // The 16-bit sequence numbers to ask for now, ascending, up to
  // out.size(); entries past their window are given up. Returns how many.
  size_t TakeDue(std::span<uint16_t> out);
  // How many times to send the NACKs of a first request (1 or 2; others
  // are taken as 1): the wall's choice (the coordinator's "nack_copies").
  void SetFirstCopies(int copies) { first_copies_ = copies == 2 ? 2 : 1; }
  // How many times to send the NACKs of what TakeDue just returned: 2 when
  // it asks for a packet again, else the first requests' copies.
  int nack_copies() const { return asked_again_ ? 2 : first_copies_; }
  // When TakeDue next has something to do (kNever: nothing missing).
  int64_t next_due_ns() const { return next_due_ns_; }
  size_t missing() const { return size_; }
  void CountNack() { ++stats_.nacks; }
  const LossTrackerStats& stats() const { return stats_; }

 private:
  struct Entry {
    uint64_t sequence;
    int64_t found_ns;
    int64_t due_ns;
    int64_t first_request_ns;
    uint32_t requests;
    bool arrived;
  };
  Entry& at(size_t i) { return ring_[(head_ + i) % ring_.size()]; }
  void PopFront();
  int64_t RetryAfter(uint32_t requests) const;

  Options options_;
  std::vector<Entry> ring_;  // ascending sequence from head_
  size_t head_ = 0, size_ = 0;
  int64_t now_ns_ = 0;
  int64_t next_due_ns_ = kNever;
  LossTrackerStats stats_;
  RttEstimate hint_;
  uint32_t ambiguous_in_a_row_ = 0;
  BurstyRttEstimate rtt_;     // stats_.rtt is its estimate
  bool asked_again_ = false;  // by the last TakeDue
  int first_copies_ = 1;
};

}  // namespace tilestream
