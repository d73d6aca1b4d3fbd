// The HTTP request parser (common/net/http_parser.h) with any bytes, whole
// and as they would arrive over a connection, a piece at a time (the first
// byte picks the piece size): both ways must say the same, a request
// consumed must lie within the input, and a body must keep to its limit.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/net/http_parser.h"

namespace {

using tilestream::HttpParse;
using tilestream::HttpParseLimits;
using tilestream::HttpParseResult;
using tilestream::ParsedRequest;

constexpr HttpParseLimits kLimits{256, 64};

HttpParseResult Whole(std::string_view in, ParsedRequest* r) {
  return tilestream::ParseHttpRequest(in, kLimits, r);
}

// As the service calls it: after each piece, until complete or an error.
HttpParseResult InPieces(std::string_view in, size_t piece, ParsedRequest* r) {
  HttpParseResult result;
  for (size_t n = piece;; n += piece) {
    result = tilestream::ParseHttpRequest(in.substr(0, std::min(n, in.size())), kLimits, r);
    if (result.state == HttpParse::kComplete || result.state == HttpParse::kError || n >= in.size())
      return result;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = data[0] % 16 + 1;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  ParsedRequest whole, pieces;
  const HttpParseResult a = Whole(in, &whole);
  const HttpParseResult b = InPieces(in, piece, &pieces);
  if (a.state != b.state || a.status != b.status || a.consumed != b.consumed) __builtin_trap();
  if (a.consumed > in.size()) __builtin_trap();
  if (a.state == HttpParse::kComplete) {
    if (whole.body != pieces.body || whole.path != pieces.path) __builtin_trap();
    if (whole.body.size() > kLimits.max_body_bytes || whole.path.empty()) __builtin_trap();
  }
  return 0;
}
