// Who may hold a connection to a listener of the connection core
// (common/net/connection_core.h), and until when: the limits against slow
// and greedy clients (issues 35 and 45, docs/hardening.md) that the web
// side and the control port share. Pure bookkeeping on a clock the caller
// passes in (tests drive it by hand); the core closes what it names. Not
// thread-safe: the core's thread owns it.
//
// A connection holds a place from accept to close: at most
// max_per_address from one address, at most max_connections in all (and
// `reserved` more for the addresses the listener reserves them for: the
// control port's display nodes). Past either, the connection that yields
// first gives its place up: of those standing kFirst, then of those
// standing kStale, the one with the earliest `since` (of one moment, the
// last admitted); one standing kKept never yields. At an address's own cap
// only that address's connections yield, so a client that says its request
// at once gets in even behind the same NAT as a flood of slow clients; when
// none may yield, the newcomer is refused.
//
// Each connection's protocol sets its standing and deadline
// (common/net/http_connections.h, common/control/control_port.h); a newly
// admitted one stands kStale since its admission, with no deadline.
//
// And at most requests_per_second_per_address requests a second from one
// address (a bucket holding two seconds' worth, for a page's burst), over
// all its connections.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tilestream {

inline constexpr int64_t kNoDeadline = std::numeric_limits<int64_t>::max();

struct AdmissionLimits {
  uint32_t max_connections = 256;
  uint32_t max_per_address = 32;
  uint32_t reserved = 0;                         // more, for reserved addresses only
  uint32_t requests_per_second_per_address = 0;  // 0: no limit
};

// Which connection gives its place up to a newcomer.
enum class Yield : uint8_t { kFirst, kStale, kKept };

struct Standing {
  Yield yield = Yield::kStale;
  int64_t since_ns = 0;               // of those of one Yield, the earliest goes first
  int64_t deadline_ns = kNoDeadline;  // closed once the clock reaches it
};

class ConnectionGate {
 public:
  enum class Verdict { kAdmitted, kAddressFull, kFull };

  explicit ConnectionGate(const AdmissionLimits& limits) : limits_(limits) {}

  // A new connection `id` from `address` (any bytes naming the host) at
  // `now`; `reserved`: its address may take the reserved places. When
  // admitted by taking another's place, *evicted is that one (already
  // forgotten here; the caller closes it), else 0.
  // REQUIRES: id != 0 and not yet known.
  Verdict Admit(uint64_t id, std::string_view address, int64_t now, bool reserved,
                uint64_t* evicted);
  // `id` stands so now; unknown ids are ignored.
  void Stand(uint64_t id, const Standing& standing);
  // Forgets `id` (closed); unknown ids are ignored.
  void Remove(uint64_t id);
  // Whether a request from `address` at `now` is within its rate (and
  // takes one from its bucket).
  bool TakeRequest(std::string_view address, int64_t now);

  // The connections past their deadline at `now`, appended to *out.
  void Expired(int64_t now, std::vector<uint64_t>* out) const;
  // The earliest deadline of any connection; kNoDeadline when none has one.
  int64_t NextDeadline() const;

  size_t open() const { return entries_.size(); }

 private:
  struct Entry {
    std::string address;
    Standing standing;
  };
  struct Bucket {
    double tokens = 0;
    int64_t at_ns = 0;
  };
  static constexpr size_t kTidyBuckets = 4096;  // then full buckets are dropped
  void TidyBuckets(int64_t now);
  // The connection that yields first (of `of_address` only, when given); 0
  // when none may.
  uint64_t FirstToYield(const std::string* of_address = nullptr) const;

  AdmissionLimits limits_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::unordered_map<std::string, uint32_t> per_address_;
  std::unordered_map<std::string, Bucket> buckets_;  // addresses that asked lately
};

}  // namespace tilestream
