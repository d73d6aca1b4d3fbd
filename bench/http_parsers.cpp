// http_parsers: our HTTP/1.1 request parser (common/net/http_parser.h)
// against two maintained ones on the same requests (issue 45): Boost.Beast's
// http::request_parser (header-only, incremental, no Asio I/O) and
// libevent's evhttp (a whole server: each request goes over a loopback TCP
// connection to an evhttp that answers it).
//
//   http_parsers [--seconds 1]
//
// Prints, for each malformed request of our parser's test suite and a few
// well-formed ones, what each parser says (a status, "ok", or "incomplete"),
// then the rate of each on a browser's GET with its usual headers, as a
// ratio to ours measured in the same run.
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/base/guarded_main.h"
#include "common/net/http_parser.h"

using namespace tilestream;
namespace http = boost::beast::http;
using std::string_literals::operator""s;

namespace {

struct Case {
  std::string what;
  std::string request;
};

// The malformed cases of tests/common/net/http_parser_test.cpp, then
// well-formed requests each parser should take.
std::vector<Case> Cases() {
  return {
      {"no version", "GET /\r\n\r\n"},
      {"two spaces", "GET  / HTTP/1.1\r\nHost: w\r\n\r\n"},
      {"bad method char", "G(T / HTTP/1.1\r\nHost: w\r\n\r\n"},
      {"target not a path", "GET x HTTP/1.1\r\nHost: w\r\n\r\n"},
      {"bad percent escape", "GET /%zz HTTP/1.1\r\nHost: w\r\n\r\n"},
      {"short percent escape", "GET /%4 HTTP/1.1\r\nHost: w\r\n\r\n"},
      {"HTTP/2.0", "GET / HTTP/2.0\r\nHost: w\r\n\r\n"},
      {"no Host", "GET / HTTP/1.1\r\n\r\n"},
      {"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"},
      {"line without colon", "GET / HTTP/1.1\r\nHost: w\r\nNo colon\r\n\r\n"},
      {"space in a name", "GET / HTTP/1.1\r\nHost: w\r\nBad name: x\r\n\r\n"},
      {"folded line", "GET / HTTP/1.1\r\nHost: w\r\nX: a\r\n folded\r\n\r\n"},
      {"NUL in a value", "GET / HTTP/1.1\r\nHost: w\r\nX: a\0b\r\n\r\n"s},
      {"negative length", "GET / HTTP/1.1\r\nHost: w\r\nContent-Length: -1\r\n\r\n"},
      {"two lengths",
       "GET / HTTP/1.1\r\nHost: w\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"},
      {"length and chunked",
       "POST / HTTP/1.1\r\nHost: w\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"},
      {"Expect: 200-ok", "GET / HTTP/1.1\r\nHost: w\r\nExpect: 200-ok\r\n\r\n"},
      {"two Authorizations",
       "GET / HTTP/1.1\r\nHost: w\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n"},
      {"gzip transfer coding", "POST /e HTTP/1.1\r\nHost: w\r\nTransfer-Encoding: gzip\r\n\r\n"},
      {"bad chunk size",
       "POST /e HTTP/1.1\r\nHost: w\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n"},
      {"length over 2^64",
       "POST / HTTP/1.1\r\nHost: w\r\nContent-Length: 99999999999999999999\r\n\r\n"},
      {"body over 4096", "POST / HTTP/1.1\r\nHost: w\r\nContent-Length: 5000\r\n\r\n"},
      {"head over 8192", "GET / HTTP/1.1\r\nHost: w\r\nX: " + std::string(9000, 'a') + "\r\n\r\n"},
      {"well-formed GET", "GET /api/status?x=1 HTTP/1.1\r\nHost: wall\r\n\r\n"},
      {"well-formed POST",
       "POST /api/command HTTP/1.1\r\nHost: w\r\nContent-Length: 5\r\n\r\npause"},
      {"well-formed chunked",
       "POST /e HTTP/1.1\r\nHost: w\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
      {"bare LF line ends", "GET / HTTP/1.1\nHost: w\n\n"},
      {"HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n"},
  };
}

const std::string kBrowserGet =
    "GET /api/status HTTP/1.1\r\nHost: 10.0.0.1:7480\r\nConnection: keep-alive\r\n"
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36\r\nAccept: application/json, text/plain, */*\r\n"
    "Accept-Encoding: gzip, deflate\r\nAccept-Language: en-US,en;q=0.9\r\n"
    "Authorization: Bearer 0123456789abcdef\r\n\r\n";

std::string Ours(const std::string& in) {
  ParsedRequest r;
  const HttpParseResult result = ParseHttpRequest(in, {}, &r);
  switch (result.state) {
    case HttpParse::kComplete:
      return "ok";
    case HttpParse::kError:
      return std::to_string(result.status);
    default:
      return "incomplete";
  }
}

// Beast with the same limits as ours (8192 bytes of head, 4096 of body).
std::string Beast(const std::string& in) {
  http::request_parser<http::string_body> p;
  p.header_limit(8192);
  p.body_limit(4096);
  p.eager(true);
  boost::beast::error_code ec;
  p.put(boost::asio::buffer(in.data(), in.size()), ec);
  if (ec == http::error::need_more) return "incomplete";
  if (ec) return "refused (" + ec.message() + ")";
  return p.is_done() ? "ok" : "incomplete";
}

// evhttp answering `in` on a fresh loopback connection: the status it
// writes, or what it did instead.
class Evhttp {
 public:
  Evhttp() : base_(event_base_new()), http_(evhttp_new(base_)) {
    evhttp_set_max_headers_size(http_, 8192);
    evhttp_set_max_body_size(http_, 4096);
    evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT);
    evhttp_set_gencb(
        http_, [](evhttp_request* r, void*) { evhttp_send_reply(r, 200, "OK", nullptr); }, nullptr);
    evhttp_bound_socket* bound = evhttp_bind_socket_with_handle(http_, "127.0.0.1", 0);
    sockaddr_in a{};
    socklen_t length = sizeof a;
    if (bound)
      getsockname(evhttp_bound_socket_get_fd(bound), reinterpret_cast<sockaddr*>(&a), &length);
    address_ = a;
  }
  ~Evhttp() {
    evhttp_free(http_);
    event_base_free(base_);
  }

  std::string Answer(const std::string& in) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&address_), sizeof address_) != 0)
      return "no connection";
    [[maybe_unused]] ssize_t w = send(fd, in.data(), in.size(), MSG_NOSIGNAL);
    std::string reply;
    for (int round = 0; round < 50 && reply.find("\r\n") == std::string::npos; ++round) {
      event_base_loop(base_, EVLOOP_NONBLOCK);
      char buf[4096];
      const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) reply.append(buf, static_cast<size_t>(n));
      if (n == 0) break;
      if (n < 0) {
        timeval t{0, 1000};
        event_base_loopexit(base_, &t);
        event_base_dispatch(base_);
      }
    }
    close(fd);
    event_base_loop(base_, EVLOOP_NONBLOCK);  // evhttp sees the close
    if (reply.starts_with("HTTP/1.") && reply.size() > 12) {
      const std::string status = reply.substr(9, 3);
      return status == "200" ? "ok" : status;
    }
    return reply.empty() ? "closed, no answer" : "?";
  }

 private:
  event_base* base_;
  evhttp* http_;
  sockaddr_in address_{};
};

// Requests a second of `parse` over kBrowserGet, the best of rounds.
double Rate(double seconds, const std::function<void()>& parse) {
  using Clock = std::chrono::steady_clock;
  double best = 0;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    const auto t0 = Clock::now();
    constexpr int kRound = 2000;
    for (int i = 0; i < kRound; ++i) parse();
    best = std::max(best, kRound / std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

int Run(int argc, char** argv) {
  double seconds = 1;
  CLI::App app{"our HTTP request parser against Boost.Beast's and libevent's evhttp"};
  app.add_option("--seconds", seconds, "how long each rate is measured")
      ->check(CLI::Range(0.1, 60.0));
  CLI11_PARSE(app, argc, argv);

  Evhttp evhttp;
  fmt::print("{:<24} {:<12} {:<44} {}\n", "request", "ours", "Beast", "evhttp");
  for (const Case& c : Cases())
    fmt::print("{:<24} {:<12} {:<44} {}\n", c.what, Ours(c.request), Beast(c.request),
               evhttp.Answer(c.request));

  volatile size_t sink = 0;
  const double ours = Rate(seconds, [&] {
    ParsedRequest r;
    sink = sink + ParseHttpRequest(kBrowserGet, {}, &r).consumed;
  });
  const double beast = Rate(seconds, [&] {
    http::request_parser<http::string_body> p;
    p.header_limit(8192);
    boost::beast::error_code ec;
    sink = sink + p.put(boost::asio::buffer(kBrowserGet.data(), kBrowserGet.size()), ec);
  });
  const double ev = Rate(seconds, [&] { sink = sink + evhttp.Answer(kBrowserGet).size(); });
  fmt::print("\na browser's GET ({} bytes), requests a second on one core:\n", kBrowserGet.size());
  fmt::print("  ours    {:>12.0f}  1.00x\n", ours);
  fmt::print("  Beast   {:>12.0f}  {:.2f}x ours\n", beast, beast / ours);
  fmt::print("  evhttp  {:>12.0f}  {:.2f}x ours (a loopback connection each, and its event loop)\n",
             ev, ev / ours);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return GuardedMain("http_parsers", [&] { return Run(argc, argv); });
}
