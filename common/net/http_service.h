// A small HTTP/1.1 service over cpp-httplib for the wall's web side: the
// coordinator's panel, REST API and /metrics, and the display nodes'
// /metrics (docs/control.md, docs/operations.md).
//
// Everything it says is JSON or what a route returns: an unknown path gets
// 404, a known path with another method 405 (with Allow), a body over the
// limit 413, a missing or wrong token 401, a route that throws 500, each as
// {"ok":false,"error":...}. With a token, every route but the open ones
// (the panel's page, which holds no data) needs "Authorization: Bearer
// TOKEN", compared in constant time. At most max_clients requests are served
// at once (a thread each); more wait their turn. A request must be read, and
// its reply written, within timeout_s.
//
// Starting one ignores SIGPIPE in the process: a client that goes away
// mid-reply must not end it.
//
// Routes run on the service's threads: a handler that touches another
// thread's state must hand the work over (streamer/http_api.h does).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace tilestream {

struct HttpRequest {
  std::string_view method;
  std::string_view path;
  std::string_view rest;  // of a prefix route: the path after the prefix
  std::string_view body;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;

  // {"ok":false,"error":message}; the message is escaped.
  static HttpReply Error(int status, std::string_view message);
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
  uint16_t port = 0;  // 0: any free port (tests)
  std::string token;  // empty: no token needed
  uint32_t max_clients = 8;
  uint32_t max_body_bytes = 4096;
  uint32_t timeout_s = 5;
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
