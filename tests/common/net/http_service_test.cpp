#include "common/net/http_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "tests/support/wait_for.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

class HttpServiceTest : public ::testing::Test {
 protected:
  void Start(const std::string& token = "", uint32_t max_clients = 8, uint32_t timeout_s = 5) {
    HttpServiceOptions o;
    o.token = token;
    o.max_body_bytes = 100;
    o.max_clients = max_clients;
    o.limits.timeout_s = timeout_s;
    std::vector<HttpRoute> routes;
    routes.push_back({"GET", "/hold", [this](const HttpRequest&) { return Hold(); }});
    routes.push_back({"GET", "/hello", [](const HttpRequest&) {
                        return HttpReply{200, "text/plain", "hello"};
                      }});
    routes.push_back({"POST", "/echo", [](const HttpRequest& r) {
                        return HttpReply{200, "text/plain", "[" + std::string(r.body) + "]"};
                      }});
    routes.push_back({"GET", "/tile/",
                      [](const HttpRequest& r) {
                        return HttpReply{200, "text/plain", std::string(r.rest)};
                      },
                      true});
    routes.push_back({"GET", "/page",
                      [](const HttpRequest&) {
                        return HttpReply{200, "text/html", "<p>"};
                      },
                      false, true});
    routes.push_back({"GET", "/throws",
                      [](const HttpRequest&) -> HttpReply { throw std::runtime_error("boom"); }});
    auto s = HttpService::Start(o, std::move(routes));
    ASSERT_TRUE(s.ok()) << s.status().message();
    service_ = std::move(s).value();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", service_->port());
    client_->set_read_timeout(std::chrono::seconds(10));
  }

  // A request that stays in its handler until Release() (30 s at most),
  // counting how many are in at once.
  HttpReply Hold() {
    std::unique_lock lock(mu_);
    most_in_ = std::max(most_in_, ++in_);
    released_cv_.wait_for(lock, std::chrono::seconds(30), [&] { return released_; });
    --in_;
    return {200, "text/plain", "held"};
  }
  int In() {
    std::lock_guard lock(mu_);
    return in_;
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    released_cv_.notify_all();
  }

  // What came back on a connection, and whether the server closed it.
  struct Exchange {
    std::string reply;
    bool closed = false;
  };

  // Writes `request` as it is to a fresh connection and reads until the
  // server closes it (30 s at most).
  Exchange RawExchange(const std::string& request) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(service_->port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    Exchange e;
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      pollfd p{fd, POLLIN, 0};
      while (poll(&p, 1, 30'000) > 0) {
        const ssize_t n = read(fd, buffer, sizeof buffer);
        e.closed = n <= 0;
        if (e.closed) break;
        e.reply.append(buffer, static_cast<size_t>(n));
      }
    }
    close(fd);
    return e;
  }

  // The reply's JSON error; fails the test unless it is {"ok":false,...}.
  static std::string ErrorOf(const httplib::Result& r) {
    EXPECT_TRUE(r);
    if (!r) return "";
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    const auto j = nlohmann::json::parse(r->body, nullptr, false);
    EXPECT_TRUE(j.is_object() && j.value("ok", true) == false) << r->body;
    return j.is_object() ? j.value("error", "") : "";
  }

  std::mutex mu_;
  std::condition_variable released_cv_;
  bool released_ = false;
  int in_ = 0, most_in_ = 0;
  std::unique_ptr<HttpService> service_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpServiceTest, RoutesAnswerByPathAndMethod) {
  Start();
  auto r = client_->Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello");
  r = client_->Post("/echo", "abc", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "[abc]");
  r = client_->Get("/tile/r0c1.png");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "r0c1.png");
}

TEST_F(HttpServiceTest, AnUnknownPathIs404AndAnotherMethod405WithAllow) {
  Start();
  auto r = client_->Get("/nope");
  EXPECT_THAT(ErrorOf(r), HasSubstr("no such path"));
  EXPECT_EQ(r->status, 404);
  r = client_->Get("/echo");
  EXPECT_THAT(ErrorOf(r), HasSubstr("use POST"));
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  r = client_->Post("/hello", "", "text/plain");
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "GET");
  r = client_->Delete("/hello");
  EXPECT_EQ(r->status, 405);
}

TEST_F(HttpServiceTest, ABodyOverTheLimitIs413) {
  Start();
  auto r = client_->Post("/echo", std::string(101, 'x'), "text/plain");
  EXPECT_THAT(ErrorOf(r), HasSubstr("too large"));
  EXPECT_EQ(r->status, 413);
  r = client_->Post("/echo", std::string(100, 'x'), "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// `curl -X POST URL` sends neither Content-Length nor a body: answered as
// an empty body (httplib alone waited for a body until its read timeout and
// then said 400).
TEST_F(HttpServiceTest, APostWithoutContentLengthHasAnEmptyBody) {
  Start();
  // Written by hand: httplib's client always adds a length.
  const Exchange e = RawExchange("POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(e.reply, HasSubstr("200 OK"));
  EXPECT_THAT(e.reply, HasSubstr("[]"));
}

// A connection that sends nothing is closed after timeout_s, so a slow
// client cannot hold a thread.
TEST_F(HttpServiceTest, ASilentConnectionIsClosedAfterTheTimeout) {
  Start("", 8, 1);
  const Exchange silent = RawExchange("");
  EXPECT_TRUE(silent.closed) << "still open after 30 s";
  EXPECT_EQ(silent.reply, "");
  const Exchange cut = RawExchange("GET /hello HTTP/1.1\r\nHost: x\r\n");  // never ends
  EXPECT_TRUE(cut.closed) << "still open after 30 s";
  EXPECT_THAT(cut.reply, ::testing::Not(HasSubstr("200 OK")));
}

// At most max_clients requests are served at once; the others wait their
// turn and are served.
TEST_F(HttpServiceTest, AtMostMaxClientsRequestsAreServedAtOnce) {
  Start("", 2);
  std::vector<std::thread> clients;
  std::atomic<int> served{0};
  for (int i = 0; i < 5; ++i) {
    clients.emplace_back([&] {
      httplib::Client c("127.0.0.1", service_->port());
      c.set_read_timeout(std::chrono::seconds(60));
      auto r = c.Get("/hold");
      if (r && r->status == 200) ++served;
    });
  }
  EXPECT_TRUE(testing::WaitFor([&] { return In() == 2; }, std::chrono::seconds(30)));
  EXPECT_FALSE(testing::WaitFor([&] { return In() > 2; }, std::chrono::seconds(1)))
      << "a third request got in";
  Release();
  for (auto& t : clients) t.join();
  EXPECT_EQ(served.load(), 5);
  EXPECT_EQ(most_in_, 2);
}

TEST_F(HttpServiceTest, WithATokenEveryRouteButTheOpenOnesNeedsIt) {
  Start("s3cret");
  auto r = client_->Get("/hello");
  EXPECT_THAT(ErrorOf(r), HasSubstr("Bearer"));
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
  r = client_->Get("/hello", {{"Authorization", "Bearer s3cre"}});
  EXPECT_EQ(r->status, 401);
  r = client_->Get("/hello", {{"Authorization", "s3cret"}});
  EXPECT_EQ(r->status, 401);
  r = client_->Get("/hello", {{"Authorization", "Bearer s3cret"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = client_->Get("/page");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "the panel's page holds no data";
}

TEST_F(HttpServiceTest, AHandlerThatThrowsIs500AndTheServiceGoesOn) {
  Start();
  auto r = client_->Get("/throws");
  EXPECT_THAT(ErrorOf(r), HasSubstr("internal"));
  EXPECT_EQ(r->status, 500);
  r = client_->Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServiceTest, APathOfAnyBytesIsQuotedEscapedInValidJson) {
  Start();
  auto r = client_->Get("/%ff%00%1b[31m\"");
  const std::string error = ErrorOf(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_THAT(error, HasSubstr("\\xff\\x00\\x1b[31m\""));
}

TEST(HttpService, ATakenPortIsAClearError) {
  auto first = HttpService::Start({}, {});
  ASSERT_TRUE(first.ok());
  HttpServiceOptions o;
  o.name = "metrics listener";
  o.port = (*first)->port();
  auto second = HttpService::Start(o, {});
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(),
              HasSubstr("metrics listener: cannot listen on 127.0.0.1 port"));
}

}  // namespace
}  // namespace tilestream
