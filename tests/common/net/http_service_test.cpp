#include "common/net/http_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace tilestream {
namespace {

using testing::HasSubstr;

class HttpServiceTest : public ::testing::Test {
 protected:
  void Start(const std::string& token = "") {
    HttpServiceOptions o;
    o.token = token;
    o.max_body_bytes = 100;
    std::vector<HttpRoute> routes;
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

  // The reply's JSON error; fails the test unless it is {"ok":false,...}.
  static std::string ErrorOf(const httplib::Result& r) {
    EXPECT_TRUE(r);
    if (!r) return "";
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    const auto j = nlohmann::json::parse(r->body, nullptr, false);
    EXPECT_TRUE(j.is_object() && j.value("ok", true) == false) << r->body;
    return j.is_object() ? j.value("error", "") : "";
  }

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

// `curl -X POST URL` sends neither Content-Length nor a body: answered at
// once, not after a read timeout.
TEST_F(HttpServiceTest, APostWithoutContentLengthHasAnEmptyBody) {
  Start();
  const auto start = std::chrono::steady_clock::now();
  // A request written by hand: httplib's client always adds a length.
  const std::string request = "POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(service_->port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::string reply(4096, '\0');
  size_t got = 0;
  for (ssize_t n; (n = read(fd, reply.data() + got, reply.size() - got)) > 0;) got += n;
  close(fd);
  reply.resize(got);
  EXPECT_THAT(reply, HasSubstr("200 OK"));
  EXPECT_THAT(reply, HasSubstr("[]"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
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
