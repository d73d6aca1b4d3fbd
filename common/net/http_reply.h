// HTTP replies of the web side (HttpService): the JSON error of each
// status the service says itself, and a reply as it goes on the wire.
#pragma once

#include <string>
#include <string_view>

namespace tilestream {

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;

  // {"ok":false,"error":message}; the message is escaped.
  static HttpReply Error(int status, std::string_view message);
};

// The service's own error for `status` (400, 401, 404, 408, 413, 414, 417,
// 429, 431, 501, 503, 505): {"ok":false,"error":what it means}.
HttpReply HttpErrorReply(int status);

// `r` as HTTP/1.1 bytes: status line, Content-Type, Content-Length,
// Connection (keep-alive or close), `extra` (whole header lines, "Allow:
// GET\r\n"), then the body unless it answers a HEAD.
std::string FormatHttpReply(const HttpReply& r, bool head, bool keep_alive,
                            std::string_view extra = "");

// The reason phrase of a status ("Not Found"); "Unknown" for others.
const char* HttpReasonPhrase(int status);

}  // namespace tilestream
