// Reads one HTTP/1.x request (RFC 9112) from the front of a connection's
// input, for HttpService. The bytes are untrusted: the request line and
// headers may take at most max_header_bytes, the body at most
// max_body_bytes (by Content-Length or chunked), and whatever breaks the
// grammar is an error status, never a guess. Stateless functions; the
// caller keeps the ParsedRequest between calls while a request arrives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tilestream {

struct HttpParseLimits {
  size_t max_header_bytes = 8192;
  size_t max_body_bytes = 4096;
};

// What a request says that the service acts on; the rest is checked and
// dropped.
struct ParsedRequest {
  std::string method;
  std::string path;  // percent-decoded, without the query; "*" for OPTIONS *
  std::string authorization;
  std::string body;
  bool keep_alive = true;  // HTTP/1.1 unless "Connection: close"
  bool expects_continue = false;
  bool chunked = false;
  uint64_t content_length = 0;
  size_t header_bytes = 0;  // 0 until the headers are read
};

enum class HttpParse {
  kIncomplete,  // the headers are not all here yet
  kNeedBody,    // the headers are read; the body is not all here
  kComplete,    // *out is the request; `consumed` bytes were it
  kError,       // `status` says why (400, 413, 414, 417, 431, 501, 505)
};

struct HttpParseResult {
  HttpParse state = HttpParse::kIncomplete;
  int status = 0;
  size_t consumed = 0;
};

// Parses the request at the front of `in`: its headers once (into *out,
// which must start as ParsedRequest{}), then its body each call until it
// is whole. After kComplete or kError start the next request with a fresh
// ParsedRequest.
HttpParseResult ParseHttpRequest(std::string_view in, const HttpParseLimits& limits,
                                 ParsedRequest* out);

}  // namespace tilestream
