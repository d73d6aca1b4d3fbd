// HTTP/1.1 on the connection core (common/net/connection_core.h): the
// connections of the web side's listeners (HttpService). It reads and
// parses each request (common/net/http_parser.h), answers what is wrong
// with it itself (400 and the grammar's other statuses, 408 at a deadline,
// 429 over its address's rate), hands each good one to the service, and
// writes the service's reply, keeping the connection alive for the next.
//
// Every connection is in a phase with its own deadline (HttpStanding):
//   kHead     the request line and headers: header_timeout_ms from the
//             request's start (a fresh connection's start is its accept)
//   kBody     the rest of the request: timeout_s from the request's start
//   kServing  a handler has it: no deadline (the handler has its own), and
//             nothing read meanwhile (a pipelined request waits)
//   kWriting  the reply: timeout_s from when it was ready
//   kIdle     kept alive between requests: keep_alive_s
// A reply that closes drains for a second (ConnectionCore::CloseAfterWrite).
// Who yields to a newcomer: the connection waiting longest for its request
// or its next one; served and written-to ones keep their place.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/base/result.h"
#include "common/net/connection_core.h"
#include "common/net/http_parser.h"
#include "common/net/http_reply.h"

namespace tilestream {

struct HttpLimits {
  uint32_t max_connections = 256;
  uint32_t max_connections_per_address = 32;
  uint32_t header_timeout_ms = 2000;
  uint32_t timeout_s = 5;
  uint32_t keep_alive_s = 5;
  uint32_t requests_per_second_per_address = 50;  // 0: no limit
};

enum class HttpPhase : uint8_t { kHead, kBody, kServing, kWriting, kIdle };

// How a connection stands in `phase`, entered at `now`, its request started
// at `since` (the head's and body's deadlines count from there).
Standing HttpStanding(HttpPhase phase, int64_t since, int64_t now, const HttpLimits& limits);

// What a web listener did, for /metrics (common/control/http_listener.h).
struct HttpCounters : ConnectionCounters {
  std::atomic<uint64_t> timed_out{0};  // closed at a deadline of a request or reply
  std::atomic<uint64_t> requests{0};   // requests read whole
  std::atomic<uint64_t> busy{0};       // answered 503: max_queued requests waiting
  std::atomic<uint64_t> limited{0};    // answered 429: over their address's rate
};

struct HttpConnectionOptions {
  std::string name = "http";
  std::string listen_address = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (tests)
  uint32_t max_header_bytes = 8192;
  uint32_t max_body_bytes = 4096;
  HttpLimits limits;
  HttpCounters* counters = nullptr;  // the caller's, outliving these; else their own
  Clock* clock = nullptr;            // the tests'; else CLOCK_MONOTONIC
};

class HttpConnections final : public ConnectionProtocol {
 public:
  // A request read whole and within its address's rate: the service routes
  // it and answers with Reply, now or later (after Serve).
  using Dispatch = std::function<void(uint64_t id, ParsedRequest request)>;

  static Result<std::unique_ptr<HttpConnections>> Listen(const HttpConnectionOptions& options,
                                                         Dispatch dispatch);
  ConnectionCore& core() { return *core_; }
  HttpCounters& counters() { return *counters_; }

  // A handler has the request of `id`: no deadline, nothing read meanwhile.
  void Serve(uint64_t id);
  // Answers the request of `id` (gone: nothing), then reads its next one,
  // or closes it: without keep_alive, or after kKeepAliveRequests.
  void Reply(uint64_t id, const HttpReply& reply, bool head, bool keep_alive,
             std::string_view extra = "");

  static constexpr uint32_t kKeepAliveRequests = 100;  // per connection

  // ConnectionProtocol
  void Opened(uint64_t id, int64_t now) override;
  void Readable(uint64_t id, int64_t now) override;
  void Written(uint64_t id, int64_t now) override;
  void Expired(uint64_t id) override;
  void Closed(uint64_t id) override { states_.erase(id); }
  std::string Refusal() const override;
  std::string Eviction() const override { return ""; }

 private:
  struct State {
    HttpPhase phase = HttpPhase::kHead;
    int64_t since_ns = 0;  // the request's start
    ParsedRequest request;
    bool continued = false;  // "100 Continue" sent for this request
    uint32_t served = 0;
  };

  HttpConnections(const HttpConnectionOptions& options, Dispatch dispatch);
  void Enter(uint64_t id, State& s, HttpPhase phase, int64_t now);
  void AwaitBody(uint64_t id, State& s, int64_t now);

  HttpConnectionOptions options_;
  Dispatch dispatch_;
  HttpCounters own_counters_;
  HttpCounters* counters_;
  std::unordered_map<uint64_t, State> states_;
  std::unique_ptr<ConnectionCore> core_;
};

}  // namespace tilestream
