// A small HTTP/1.1 service for the wall's web side: the coordinator's
// panel, REST API and /metrics, and the display nodes' /metrics
// (docs/control.md, docs/operations.md), made for a port anyone on the
// network can reach (docs/decisions.md, "The web side under hostile
// clients"). One network thread runs its connections on the connection
// core (common/net/http_connections.h: parsing, deadlines, admission);
// this is the routes: which handler a request reaches, and max_clients
// worker threads that run them.
//
// Everything it says is JSON or what a route returns: an unknown path gets
// 404, a known path with another method 405 (with Allow), a body over the
// limit 413, a missing or wrong token 401, a route that throws 500, a
// request over its address's rate 429, a request that finds max_queued
// others waiting for a handler 503, a request that breaks the grammar 400
// (or 414, 431, 501, 505), each as {"ok":false,"error":...}. With a token, every route but the open
// ones (the panel's page, which holds no data) needs "Authorization: Bearer TOKEN", compared in
// constant time. Waiting requests are served by client address in turn, so one address's flood
// delays another's request by at most one request per worker.
//
// Routes run on the worker threads: a handler that touches another
// thread's state must hand the work over (streamer/http_api.h does).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/net/http_connections.h"
#include "common/net/http_reply.h"

namespace tilestream {

struct HttpRequest {
  std::string_view method;
  std::string_view path;
  std::string_view rest;  // of a prefix route: the path after the prefix
  std::string_view body;
};

using HttpHandler = std::function<HttpReply(const HttpRequest&)>;

struct HttpRoute {
  std::string method;  // "GET" or "POST"
  std::string path;    // the whole path, or with `prefix` its start
  HttpHandler handler;
  bool prefix = false;
  bool open = false;  // served without the token
};

struct HttpServiceOptions {
  std::string name = "http";  // for messages: "coordinator http"
  std::string listen_address = "127.0.0.1";
  uint16_t port = 0;         // 0: any free port (tests)
  std::string token;         // empty: no token needed
  uint32_t max_clients = 8;  // worker threads: requests served at once
  uint32_t max_queued = 64;  // requests read and waiting for a worker
  uint32_t max_header_bytes = 8192;
  uint32_t max_body_bytes = 4096;
  HttpLimits limits;
  HttpCounters* counters = nullptr;  // the caller's, outliving the service; else its own
};

class HttpService {
 public:
  // Listens and serves on its own threads until destroyed.
  static Result<std::unique_ptr<HttpService>> Start(const HttpServiceOptions& options,
                                                    std::vector<HttpRoute> routes);
  ~HttpService();
  HttpService(const HttpService&) = delete;
  HttpService& operator=(const HttpService&) = delete;

  uint16_t port() const { return port_; }

 private:
  struct Impl;
  explicit HttpService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
};

}  // namespace tilestream
