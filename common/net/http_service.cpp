#include "common/net/http_service.h"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <exception>
#include <thread>

#include "common/base/json_text.h"
#include "common/base/words.h"
#include "common/net/line_channel.h"

namespace tilestream {
namespace {

constexpr size_t kKeepAliveRequests = 100;  // per connection, then it is closed
constexpr std::chrono::milliseconds kStartPoll{1};
constexpr std::string_view kBearer = "Bearer ";

const char* ReasonOf(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 401:
      return "this listener needs 'Authorization: Bearer TOKEN'";
    case 404:
      return "no such path";
    case 405:
      return "method not allowed";
    case 413:
      return "request body too large";
    case 414:
      return "request line too long";
    default:
      return "request failed";
  }
}

void SetReply(const HttpReply& r, httplib::Response* res) {
  res->status = r.status;
  res->set_content(r.body, r.content_type);
}

}  // namespace

HttpReply HttpReply::Error(int status, std::string_view message) {
  return {status, "application/json", ErrorReply(message)};
}

struct HttpService::Impl {
  HttpServiceOptions options;
  std::vector<HttpRoute> routes;
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> ended{false};

  bool Matches(const HttpRoute& r, std::string_view path) const {
    return r.prefix ? path.size() > r.path.size() && path.starts_with(r.path) : path == r.path;
  }

  bool Authorised(const httplib::Request& req) const {
    if (options.token.empty()) return true;
    const std::string& given = req.get_header_value("Authorization");
    return std::string_view(given).starts_with(kBearer) &&
           ConstantTimeEquals(std::string_view(given).substr(kBearer.size()), options.token);
  }

  // A request without Content-Length or Transfer-Encoding has no body (RFC
  // 9112 6.3; `curl -X POST URL` sends none): not waited for. 413 when it
  // is over the limit, 400 when it cannot be read; else 0.
  int ReadBody(const httplib::Request& req, const httplib::ContentReader& reader,
               std::string* body) const {
    if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) return 0;
    uint64_t length = 0;
    if (req.has_header("Content-Length") &&
        (!ParseInteger(req.get_header_value("Content-Length"), &length) ||
         length > options.max_body_bytes))
      return 413;
    bool fits = true;
    const bool read = reader([&](const char* data, size_t n) {
      fits = body->size() + n <= options.max_body_bytes;
      if (fits) body->append(data, n);
      return fits;
    });
    return !fits ? 413 : read ? 0 : 400;
  }

  // Finds the route of the path and method: 404, 405 (with Allow), 401, or
  // the route's reply.
  void Dispatch(const httplib::Request& req, std::string_view body, httplib::Response* res) const {
    const std::string& path = req.path;
    std::string allow;
    for (const HttpRoute& r : routes) {
      if (!Matches(r, path)) continue;
      const bool same = r.method == req.method || (req.method == "HEAD" && r.method == "GET");
      if (!same) {
        allow += (allow.empty() ? "" : ", ") + r.method;
        continue;
      }
      if (!r.open && !Authorised(req)) {
        res->set_header("WWW-Authenticate", "Bearer");
        return SetReply(HttpReply::Error(401, ReasonOf(401)), res);
      }
      const std::string_view rest = r.prefix ? std::string_view(path).substr(r.path.size()) : "";
      return SetReply(r.handler({req.method, path, rest, body}), res);
    }
    if (allow.empty())
      return SetReply(HttpReply::Error(404, "no such path: " + Printable(path)), res);
    res->set_header("Allow", allow);
    SetReply(HttpReply::Error(
                 405, fmt::format("{} {}: use {}", Printable(req.method), Printable(path), allow)),
             res);
  }

  void Configure() {
    const uint32_t threads = options.max_clients;
    server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server.set_payload_max_length(options.max_body_bytes);
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a
    // second server binds the same port and takes half of its requests.
    server.set_socket_options([](int fd) {
      const int yes = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    server.set_read_timeout(options.timeout_s, 0);
    server.set_write_timeout(options.timeout_s, 0);
    server.set_keep_alive_timeout(options.timeout_s);
    server.set_keep_alive_max_count(kKeepAliveRequests);
    const auto dispatch = [this](const httplib::Request& req, httplib::Response& res) {
      Dispatch(req, "", &res);
    };
    const auto with_body = [this](const httplib::Request& req, httplib::Response& res,
                                  const httplib::ContentReader& reader) {
      std::string body;
      if (const int error = ReadBody(req, reader, &body); error != 0)
        return SetReply(HttpReply::Error(error, ReasonOf(error)), &res);
      Dispatch(req, body, &res);
    };
    const std::string any = ".*";
    server.Get(any, dispatch).Options(any, dispatch);
    server.Post(any, with_body).Put(any, with_body).Delete(any, with_body).Patch(any, with_body);
    // Errors httplib finds itself (413, 400, ...) get a JSON body too.
    server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) res.set_content(ErrorReply(ReasonOf(res.status)), "application/json");
    });
    server.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, const std::exception_ptr&) {
          SetReply(HttpReply::Error(500, "internal error"), &res);
        });
  }
};

HttpService::HttpService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpService::~HttpService() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<HttpService>> HttpService::Start(const HttpServiceOptions& options,
                                                        std::vector<HttpRoute> routes) {
  // httplib writes with send(..., 0): a client that goes away mid-reply
  // would end the process with SIGPIPE. (The streamer ignores it anyway.)
  signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->routes = std::move(routes);
  impl->Configure();
  int port = options.port;
  errno = 0;
  if (port == 0) {
    port = impl->server.bind_to_any_port(options.listen_address);
  } else if (!impl->server.bind_to_port(options.listen_address, port)) {
    port = -1;
  }
  if (port <= 0)
    return Status::IoError(fmt::format("{}: cannot listen on {} port {}", options.name,
                                       options.listen_address, options.port),
                           errno);
  Impl& i = *impl;
  i.thread = std::thread([&i] {
    i.server.listen_after_bind();
    i.ended = true;
  });
  // stop() does nothing before the server runs: wait for it, so that the
  // destructor always ends the thread.
  while (!i.server.is_running() && !i.ended) std::this_thread::sleep_for(kStartPoll);
  std::unique_ptr<HttpService> service(new HttpService(std::move(impl)));
  service->port_ = static_cast<uint16_t>(port);
  return service;
}

}  // namespace tilestream
