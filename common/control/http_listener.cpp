#include "common/control/http_listener.h"

#include "common/wall/token_file.h"

namespace tilestream {

Result<HttpServiceOptions> HttpListenerOptions(const WallConfig& c, std::string name,
                                               std::string address, uint16_t port) {
  HttpServiceOptions o;
  o.name = std::move(name);
  o.listen_address = std::move(address);
  o.port = port;
  const HttpSettings& h = c.http;
  o.max_clients = h.max_clients;
  o.max_queued = h.max_queued;
  o.max_body_bytes = h.max_body_bytes;
  o.limits.max_connections = h.max_connections;
  o.limits.max_connections_per_address = h.max_connections_per_address;
  o.limits.header_timeout_ms = h.header_timeout_ms;
  o.limits.timeout_s = h.timeout_s;
  o.limits.keep_alive_s = h.keep_alive_s;
  o.limits.requests_per_second_per_address = h.requests_per_second_per_address;
  if (!c.control.token_file.empty()) {
    auto token = ReadToken(c.control.token_file);
    if (!token.ok()) return token.status();
    o.token = *token;
  }
  return o;
}

void AppendHttpMetrics(const HttpCounters& k, const MetricLabels& labels, MetricsText* m) {
  const auto family = [&](const char* name, const char* type, const char* help,
                          const std::atomic<uint64_t>& value) {
    m->Family(name, type, help);
    m->Sample(labels, value.load(std::memory_order_relaxed));
  };
  family("tilestream_http_connections_open", "gauge", "connections open now", k.open);
  family("tilestream_http_connections_total", "counter", "connections taken", k.accepted);
  family("tilestream_http_connections_refused_total", "counter",
         "connections turned away: their address's or every place taken", k.refused);
  family("tilestream_http_connections_evicted_total", "counter",
         "connections closed to make room for a newer one (the stalest first)", k.evicted);
  family("tilestream_http_connections_timed_out_total", "counter",
         "connections closed at a deadline of a request or a reply", k.timed_out);
  family("tilestream_http_requests_total", "counter", "requests read whole", k.requests);
  family("tilestream_http_requests_busy_total", "counter",
         "requests answered 503: http.max_queued others waiting", k.busy);
  family("tilestream_http_requests_limited_total", "counter",
         "requests answered 429: over http.requests_per_second_per_address", k.limited);
}

}  // namespace tilestream
