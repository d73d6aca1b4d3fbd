#include "common/net/http_reply.h"

#include <fmt/format.h>

#include "common/base/json_text.h"

namespace tilestream {
namespace {

// What an error status says in its JSON.
const char* ReasonOf(int status) {
  switch (status) {
    case 401:
      return "this listener needs 'Authorization: Bearer TOKEN'";
    case 404:
      return "no such path";
    case 408:
      return "request not received in time";
    case 413:
      return "request body too large";
    case 414:
      return "request line too long";
    case 417:
      return "only 'Expect: 100-continue' is understood";
    case 429:
      return "too many requests from this address";
    case 431:
      return "request headers too large";
    case 501:
      return "only the chunked transfer coding is understood";
    case 503:
      return "busy: too many requests waiting";
    case 505:
      return "only HTTP/1.0 and HTTP/1.1 are spoken";
    default:
      return "bad request";
  }
}

}  // namespace

HttpReply HttpReply::Error(int status, std::string_view message) {
  return {status, "application/json", ErrorReply(message)};
}

HttpReply HttpErrorReply(int status) { return HttpReply::Error(status, ReasonOf(status)); }

std::string FormatHttpReply(const HttpReply& r, bool head, bool keep_alive,
                            std::string_view extra) {
  std::string out =
      fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n",
                  r.status, HttpReasonPhrase(r.status), r.content_type, r.body.size(),
                  keep_alive ? "keep-alive" : "close");
  out += extra;
  out += "\r\n";
  if (!head) out += r.body;
  return out;
}

const char* HttpReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

}  // namespace tilestream
