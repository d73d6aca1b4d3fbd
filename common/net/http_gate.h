// Who may hold a connection to a web listener, and for how long: the
// limits of HttpService against slow and greedy clients (issue 35,
// docs/hardening.md). Pure bookkeeping on a clock the caller passes in
// (tests drive it by hand); the service closes what it names. Not
// thread-safe: the service's network thread owns it.
//
// Every connection is in a phase with its own deadline:
//   kHead     the request line and headers: header_timeout_ms from the
//             request's start (a fresh connection's start is its accept)
//   kBody     the rest of the request: timeout_s from the request's start
//   kServing  a handler has it: no deadline (the handler has its own)
//   kWriting  the reply: timeout_s from when it was ready
//   kIdle     kept alive between requests: keep_alive_s
//   kDraining closed for writing after a last reply, reading what the
//             client still sends so that the reply is not reset: 1 s
// A connection holds a place from accept to close. At most
// max_connections_per_address from one address, at most max_connections in
// all: past either, the stalest connection that is not being served gives
// its place up (draining ones first, then the one waiting longest for its
// request or next request; at an address's cap, that address's stalest),
// so a client that says its request at once always gets in, even behind
// the same NAT as a flood of slow clients; when every place in question is
// being served, the newcomer is refused. And at most requests_per_second_per_address
// requests a second from one address (a bucket holding two seconds' worth,
// for a page's burst), over all its connections: past it, the service
// answers 429 itself, so no flood from one address reaches the handlers
// (the coordinator's thread behind them also keeps the wall's time).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tilestream {

struct HttpLimits {
  uint32_t max_connections = 256;
  uint32_t max_connections_per_address = 32;
  uint32_t header_timeout_ms = 2000;
  uint32_t timeout_s = 5;
  uint32_t keep_alive_s = 5;
  uint32_t requests_per_second_per_address = 50;  // 0: no limit
};

enum class HttpPhase : uint8_t { kHead, kBody, kServing, kWriting, kIdle, kDraining };

class HttpGate {
 public:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kDrainNs = 1'000'000'000;

  enum class Verdict { kAdmitted, kAddressFull, kFull };

  explicit HttpGate(const HttpLimits& limits) : limits_(limits) {}

  // A new connection `id` from `address` (any bytes naming the host) at
  // `now`, in kHead. When admitted by taking another's place (its
  // address's, or anyone's), *evicted is
  // that one (already forgotten here; the caller closes it), else 0.
  // REQUIRES: id != 0 and not yet known.
  Verdict Admit(uint64_t id, std::string_view address, int64_t now, uint64_t* evicted);
  // `id` enters `phase` at `now` (kHead: a request starts).
  void Enter(uint64_t id, HttpPhase phase, int64_t now);
  // Forgets `id` (closed); unknown ids are ignored.
  void Remove(uint64_t id);
  // Whether a request from `address` at `now` is within its rate (and
  // takes one from its bucket).
  bool TakeRequest(std::string_view address, int64_t now);

  // The connections past their deadline at `now`, appended to *out.
  void Expired(int64_t now, std::vector<uint64_t>* out) const;
  // The earliest deadline of any connection; kNever when none has one.
  int64_t NextDeadline() const;

  // REQUIRES: id is known.
  HttpPhase phase(uint64_t id) const { return entries_.at(id).phase; }
  size_t open() const { return entries_.size(); }

 private:
  struct Entry {
    std::string address;
    HttpPhase phase = HttpPhase::kHead;
    int64_t since_ns = 0;     // when the request or the phase started
    int64_t deadline_ns = 0;  // kNever while served
  };
  struct Bucket {
    double tokens = 0;
    int64_t at_ns = 0;
  };
  static constexpr size_t kTidyBuckets = 4096;  // then full buckets are dropped
  void TidyBuckets(int64_t now);
  int64_t DeadlineOf(HttpPhase phase, int64_t since, int64_t now) const;
  // The stalest connection (of `of_address` only, when given); 0 when every
  // one is being served.
  uint64_t Stalest(const std::string* of_address = nullptr) const;

  HttpLimits limits_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::unordered_map<std::string, uint32_t> per_address_;
  std::unordered_map<std::string, Bucket> buckets_;  // addresses that asked lately
};

}  // namespace tilestream
