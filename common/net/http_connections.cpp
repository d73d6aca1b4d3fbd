#include "common/net/http_connections.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace tilestream {
namespace {

constexpr size_t kReadSlack = 16384;  // input past a whole request: the next one's start

}  // namespace

Standing HttpStanding(HttpPhase phase, int64_t since, int64_t now, const HttpLimits& l) {
  const int64_t whole = int64_t{l.timeout_s} * kNsPerSecond;
  switch (phase) {
    case HttpPhase::kHead:
      return {Yield::kStale, since,
              since + std::min(int64_t{l.header_timeout_ms} * kNsPerMs, whole)};
    case HttpPhase::kBody:
      return {Yield::kStale, since, since + whole};
    case HttpPhase::kServing:
      return {Yield::kKept, since, kNoDeadline};
    case HttpPhase::kWriting:
      return {Yield::kKept, now, now + whole};
    case HttpPhase::kIdle:
      return {Yield::kStale, now, now + int64_t{l.keep_alive_s} * kNsPerSecond};
  }
  return {};
}

HttpConnections::HttpConnections(const HttpConnectionOptions& options, Dispatch dispatch)
    : options_(options),
      dispatch_(std::move(dispatch)),
      counters_(options.counters ? options.counters : &own_counters_) {}

Result<std::unique_ptr<HttpConnections>> HttpConnections::Listen(
    const HttpConnectionOptions& options, Dispatch dispatch) {
  std::unique_ptr<HttpConnections> h(new HttpConnections(options, std::move(dispatch)));
  ConnectionCoreOptions o;
  o.name = options.name;
  o.listen_address = options.listen_address;
  o.port = options.port;
  o.limits = {options.limits.max_connections, options.limits.max_connections_per_address, 0,
              options.limits.requests_per_second_per_address};
  o.max_input = size_t{options.max_header_bytes} + options.max_body_bytes + kReadSlack;
  o.max_output = std::numeric_limits<size_t>::max();  // whole replies, under timeout_s
  o.counters = h->counters_;
  o.clock = options.clock;
  auto core = ConnectionCore::Listen(o, h.get());
  if (!core.ok()) return core.status();
  h->core_ = std::move(core).value();
  return h;
}

void HttpConnections::Enter(uint64_t id, State& s, HttpPhase phase, int64_t now) {
  if (phase != HttpPhase::kBody) s.since_ns = now;  // the body's counts from the request's start
  s.phase = phase;
  core_->Stand(id, HttpStanding(phase, s.since_ns, now, options_.limits));
}

void HttpConnections::Opened(uint64_t id, int64_t now) {
  Enter(id, states_[id], HttpPhase::kHead, now);
}

void HttpConnections::Readable(uint64_t id, int64_t now) {
  State& s = states_.at(id);
  if (s.phase == HttpPhase::kServing || s.phase == HttpPhase::kWriting) return;  // after the reply
  if (s.phase == HttpPhase::kIdle) Enter(id, s, HttpPhase::kHead, now);
  std::string& in = core_->input(id);
  const HttpParseLimits limits{options_.max_header_bytes, options_.max_body_bytes};
  const HttpParseResult r = ParseHttpRequest(in, limits, &s.request);
  switch (r.state) {
    case HttpParse::kIncomplete:
      return;
    case HttpParse::kNeedBody:
      return AwaitBody(id, s, now);
    case HttpParse::kError:
      return Reply(id, HttpErrorReply(r.status), false, /*keep_alive=*/false);
    case HttpParse::kComplete:
      break;
  }
  in.erase(0, r.consumed);
  counters_->requests.fetch_add(1, std::memory_order_relaxed);
  ParsedRequest request = std::move(s.request);
  s.request = {};
  s.continued = false;
  if (!core_->TakeRequest(id)) {
    counters_->limited.fetch_add(1, std::memory_order_relaxed);
    return Reply(id, HttpErrorReply(429), request.method == "HEAD", request.keep_alive,
                 "Retry-After: 1\r\n");
  }
  dispatch_(id, std::move(request));
}

void HttpConnections::AwaitBody(uint64_t id, State& s, int64_t now) {
  if (s.phase == HttpPhase::kHead) Enter(id, s, HttpPhase::kBody, now);
  if (!s.request.expects_continue || s.continued) return;
  s.continued = true;
  core_->Send(id, "HTTP/1.1 100 Continue\r\n\r\n");
}

void HttpConnections::Serve(uint64_t id) {
  const auto it = states_.find(id);
  if (it == states_.end()) return;
  Enter(id, it->second, HttpPhase::kServing, core_->now());
  core_->Pause(id, true);
}

void HttpConnections::Reply(uint64_t id, const HttpReply& reply, bool head, bool keep_alive,
                            std::string_view extra) {
  const auto it = states_.find(id);
  if (it == states_.end() || !core_->open(id)) return;  // the client went away
  State& s = it->second;
  keep_alive = keep_alive && ++s.served < kKeepAliveRequests;
  Enter(id, s, HttpPhase::kWriting, core_->now());
  core_->Pause(id, false);
  core_->Send(id, FormatHttpReply(reply, head, keep_alive, extra));
  if (!keep_alive) core_->CloseAfterWrite(id);
}

// The reply is out: the next request, which may have come meanwhile.
void HttpConnections::Written(uint64_t id, int64_t now) {
  State& s = states_.at(id);
  if (s.phase != HttpPhase::kWriting) return;  // a "100 Continue"
  Enter(id, s, HttpPhase::kIdle, now);
  if (!core_->input(id).empty()) Readable(id, now);
}

// Said once, without waiting: a client too slow to send is not waited for
// to read either. A connection that never said a word is just closed (a
// browser's preconnect, as nginx does).
void HttpConnections::Expired(uint64_t id) {
  const State& s = states_.at(id);
  if (s.phase == HttpPhase::kIdle) return;
  counters_->timed_out.fetch_add(1, std::memory_order_relaxed);
  if (s.phase != HttpPhase::kWriting && !core_->input(id).empty())
    core_->Send(id, FormatHttpReply(HttpErrorReply(408), false, false));
}

std::string HttpConnections::Refusal() const {
  return FormatHttpReply(HttpReply::Error(503, "too many connections: try again later"), false,
                         false);
}

}  // namespace tilestream
