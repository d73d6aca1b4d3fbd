#include "common/net/http_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace tilestream {
namespace {

using std::string_literals::operator""s;

struct Parsed {
  HttpParseResult result;
  ParsedRequest request;
};

Parsed Parse(std::string_view in, HttpParseLimits limits = {}) {
  Parsed p;
  p.result = ParseHttpRequest(in, limits, &p.request);
  return p;
}

int StatusOf(std::string_view in, HttpParseLimits limits = {}) {
  const Parsed p = Parse(in, limits);
  EXPECT_EQ(p.result.state, HttpParse::kError) << in;
  return p.result.status;
}

TEST(HttpParser, AGetWithItsHeaders) {
  const std::string in =
      "GET /api/status?x=1 HTTP/1.1\r\nHost: wall\r\nAuthorization: Bearer t0k\r\n\r\nGET /next";
  const Parsed p = Parse(in);
  ASSERT_EQ(p.result.state, HttpParse::kComplete);
  EXPECT_EQ(p.result.consumed, in.find("GET /next"));
  EXPECT_EQ(p.request.method, "GET");
  EXPECT_EQ(p.request.path, "/api/status") << "the query is dropped";
  EXPECT_EQ(p.request.authorization, "Bearer t0k");
  EXPECT_TRUE(p.request.keep_alive);
  EXPECT_EQ(p.request.body, "");
}

// Every prefix of a request is incomplete, never an error or a guess.
TEST(HttpParser, APrefixIsIncompleteUntilTheBodyIsWhole) {
  const std::string in = "POST /echo HTTP/1.1\r\nHost: w\r\nContent-Length: 5\r\n\r\nhello";
  for (size_t n = 0; n < in.size(); ++n) {
    ParsedRequest r;
    const HttpParseResult result = ParseHttpRequest(std::string_view(in).substr(0, n), {}, &r);
    const bool head_read = n >= in.find("hello");
    EXPECT_EQ(result.state, head_read ? HttpParse::kNeedBody : HttpParse::kIncomplete) << n;
  }
  ParsedRequest r;
  ASSERT_EQ(ParseHttpRequest(in, {}, &r).state, HttpParse::kComplete);
  EXPECT_EQ(r.body, "hello");
}

// The caller keeps the request between calls: the head is read once.
TEST(HttpParser, TheBodyArrivesOverSeveralCalls) {
  ParsedRequest r;
  std::string in =
      "PUT /x HTTP/1.1\r\nHost: w\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n";
  EXPECT_EQ(ParseHttpRequest(in, {}, &r).state, HttpParse::kNeedBody);
  EXPECT_TRUE(r.expects_continue);
  in += "ab";
  EXPECT_EQ(ParseHttpRequest(in, {}, &r).state, HttpParse::kNeedBody);
  in += "cdEXTRA";
  const HttpParseResult done = ParseHttpRequest(in, {}, &r);
  ASSERT_EQ(done.state, HttpParse::kComplete);
  EXPECT_EQ(r.body, "abcd");
  EXPECT_EQ(done.consumed, in.size() - 5);
}

TEST(HttpParser, AChunkedBody) {
  const Parsed p = Parse(
      "POST /e HTTP/1.1\r\nHost: w\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n");
  ASSERT_EQ(p.result.state, HttpParse::kComplete);
  EXPECT_EQ(p.request.body, "abcde");
  HttpParseLimits small;
  small.max_body_bytes = 4;
  EXPECT_EQ(StatusOf("POST /e HTTP/1.1\r\nHost: w\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "3\r\nabc\r\n2\r\nde\r\n",
                     small),
            413);
  EXPECT_EQ(StatusOf("POST /e HTTP/1.1\r\nHost: w\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            400);
  EXPECT_EQ(StatusOf("POST /e HTTP/1.1\r\nHost: w\r\nTransfer-Encoding: gzip\r\n\r\n"), 501);
}

TEST(HttpParser, ConnectionCloseAndHttp10) {
  EXPECT_FALSE(Parse("GET / HTTP/1.1\r\nHost: w\r\nConnection: close\r\n\r\n").request.keep_alive);
  EXPECT_FALSE(Parse("GET / HTTP/1.0\r\n\r\n").request.keep_alive);
  EXPECT_TRUE(Parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").request.keep_alive);
}

// Bare LFs end lines as CRLFs do (RFC 9112 2.2); empty lines before a
// request are skipped.
TEST(HttpParser, BareLineFeedsAndLeadingBlankLines) {
  const Parsed p = Parse("\r\n\nGET /a%20b HTTP/1.1\nHost: w\n\n");
  ASSERT_EQ(p.result.state, HttpParse::kComplete);
  EXPECT_EQ(p.request.path, "/a b");
  EXPECT_EQ(Parse("GET http://wall:7480/api/status HTTP/1.1\r\nHost: w\r\n\r\n").request.path,
            "/api/status");
}

// One test per malformed case: each is a status, never a crash or a guess.
TEST(HttpParser, MalformedRequestsAreRefusedWithTheirStatus) {
  EXPECT_EQ(StatusOf("GET /\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET  / HTTP/1.1\r\nHost: w\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("G(T / HTTP/1.1\r\nHost: w\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET x HTTP/1.1\r\nHost: w\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET /%zz HTTP/1.1\r\nHost: w\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET /%4 HTTP/1.1\r\nHost: w\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/2.0\r\nHost: w\r\n\r\n"), 505);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\n\r\n"), 400) << "no Host";
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: w\r\nNo colon\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: w\r\nBad name: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: w\r\nX: a\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: w\r\nX: a\0b\r\n\r\n"s), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: w\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: w\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            400);
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: w\r\nContent-Length: 3\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n"),
            400)
      << "both lengths: a smuggling attempt";
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: w\r\nExpect: 200-ok\r\n\r\n"), 417);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: w\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n"),
            400);
}

TEST(HttpParser, LimitsOnTheHeadAndTheBody) {
  HttpParseLimits l;
  l.max_header_bytes = 64;
  l.max_body_bytes = 10;
  EXPECT_EQ(StatusOf("GET /" + std::string(100, 'a'), l), 414) << "a line that never ends";
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: w\r\nX: " + std::string(100, 'a'), l), 431);
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nHost: w\r\nX: " + std::string(20, 'a'), l).result.state,
            HttpParse::kIncomplete);
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: w\r\nContent-Length: 11\r\n\r\n", l), 413)
      << "refused before the body is read";
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: w\r\nContent-Length: 99999999999999999999\r\n\r\n"),
            400);
}

}  // namespace
}  // namespace tilestream
