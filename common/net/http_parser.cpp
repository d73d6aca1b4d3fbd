#include "common/net/http_parser.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace tilestream {
namespace {

constexpr size_t kMaxChunkLine = 256;  // a chunk's size and extensions

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar);
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The next line of `in` from `*at` without its end (CRLF or a bare LF,
// RFC 9112 2.2); nullopt when it has not all come. A CR elsewhere is left
// in the line, where the checks refuse it.
std::optional<std::string_view> NextLine(std::string_view in, size_t* at) {
  const size_t end = in.find('\n', *at);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view line = in.substr(*at, end - *at);
  if (line.ends_with('\r')) line.remove_suffix(1);
  *at = end + 1;
  return line;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// The path of a request target: origin-form ("/a?b"), absolute-form
// ("http://host/a"), or "*"; percent-decoded, the query dropped.
bool DecodeTarget(std::string_view target, std::string* path) {
  if (target == "*") {
    *path = "*";
    return true;
  }
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() < scheme.size() || !EqualsNoCase(target.substr(0, scheme.size()), scheme))
      continue;
    const size_t slash = target.find('/', scheme.size());
    target = slash == std::string_view::npos ? "/" : target.substr(slash);
  }
  if (!target.starts_with('/')) return false;
  target = target.substr(0, target.find('?'));
  path->clear();
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] != '%') {
      path->push_back(target[i]);
      continue;
    }
    const int high = i + 2 < target.size() ? HexValue(target[i + 1]) : -1;
    const int low = high >= 0 ? HexValue(target[i + 2]) : -1;
    if (low < 0) return false;
    path->push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return true;
}

// "GET /path HTTP/1.1": 0, or the error status.
int ParseRequestLine(std::string_view line, ParsedRequest* out, bool* http10) {
  const size_t a = line.find(' ');
  const size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
  if (b == std::string_view::npos || line.find(' ', b + 1) != std::string_view::npos) return 400;
  const std::string_view method = line.substr(0, a), target = line.substr(a + 1, b - a - 1),
                         version = line.substr(b + 1);
  if (!IsToken(method) || target.empty()) return 400;
  for (char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return 400;
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return version.starts_with("HTTP/") ? 505 : 400;
  if (!DecodeTarget(target, &out->path)) return 400;
  out->method = method;
  *http10 = version == "HTTP/1.0";
  out->keep_alive = !*http10;
  return 0;
}

// One "Name: value" line into *out: 0, or the error status.
int ParseHeader(std::string_view line, ParsedRequest* out, int* hosts, bool* has_length) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) return 400;
  const std::string_view name = line.substr(0, colon), value = Trim(line.substr(colon + 1));
  for (char c : value)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return 400;
  if (EqualsNoCase(name, "Host")) {
    ++*hosts;
  } else if (EqualsNoCase(name, "Content-Length")) {
    if (value.empty() || value.size() > 18 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return 400;
    const uint64_t length = std::stoull(std::string(value));
    if (*has_length && length != out->content_length) return 400;
    *has_length = true;
    out->content_length = length;
  } else if (EqualsNoCase(name, "Transfer-Encoding")) {
    if (!EqualsNoCase(value, "chunked")) return 501;
    out->chunked = true;
  } else if (EqualsNoCase(name, "Connection")) {
    for (size_t at = 0; at <= value.size();) {
      const size_t comma = std::min(value.find(',', at), value.size());
      const std::string_view option = Trim(value.substr(at, comma - at));
      if (EqualsNoCase(option, "close")) out->keep_alive = false;
      if (EqualsNoCase(option, "keep-alive")) out->keep_alive = true;
      at = comma + 1;
    }
  } else if (EqualsNoCase(name, "Expect")) {
    if (!EqualsNoCase(value, "100-continue")) return 417;
    out->expects_continue = true;
  } else if (EqualsNoCase(name, "Authorization")) {
    if (!out->authorization.empty()) return 400;
    out->authorization = value;
  }
  return 0;
}

// The request line and headers, their blank line included.
int ParseHead(std::string_view head, const HttpParseLimits& limits, ParsedRequest* out) {
  size_t at = 0;
  std::optional<std::string_view> line = NextLine(head, &at);
  bool http10 = false;
  if (const int e = ParseRequestLine(*line, out, &http10); e != 0) return e;
  int hosts = 0;
  bool has_length = false;
  while ((line = NextLine(head, &at)) && !line->empty()) {
    if (line->front() == ' ' || line->front() == '\t') return 400;  // obsolete folding
    if (const int e = ParseHeader(*line, out, &hosts, &has_length); e != 0) return e;
  }
  if ((!http10 && hosts != 1) || hosts > 1) return 400;  // RFC 9112 3.2
  if (out->chunked && has_length) return 400;            // RFC 9112 6.1: smuggling
  if (out->content_length > limits.max_body_bytes) return 413;
  return 0;
}

// A chunked body from `in` into *body: the bytes it took, 0 while it has
// not all come, or -status. Every line (a chunk's size and extensions, a
// trailer) is at most kMaxChunkLine, and no line starts past `max_raw`:
// the encoding's overhead is bounded as the body is.
int64_t DecodeChunked(std::string_view in, size_t max_body, size_t max_raw, std::string* body) {
  body->clear();
  size_t at = 0;
  for (;;) {
    if (at > max_raw) return -413;
    const size_t line_start = at;
    const std::optional<std::string_view> line = NextLine(in, &at);
    if (!line) return in.size() - line_start > kMaxChunkLine + 1 ? -400 : 0;  // + its CR
    if (line->size() > kMaxChunkLine) return -400;
    const std::string_view size_text = Trim(line->substr(0, line->find(';')));
    uint64_t size = 0;
    for (char c : size_text) {
      if (HexValue(c) < 0 || size > max_body) return -400;
      size = size * 16 + HexValue(c);
    }
    if (size_text.empty()) return -400;
    if (size == 0) break;
    if (body->size() + size > max_body) return -413;
    if (in.size() - at < size + 2) return 0;
    body->append(in.substr(at, size));
    at += size;
    if (in.substr(at, 2) != "\r\n" && in.substr(at, 1) != "\n") return -400;
    at += in[at] == '\r' ? 2 : 1;
  }
  for (;;) {  // trailers, dropped, up to the blank line
    if (at > max_raw) return -431;
    const size_t line_start = at;
    const std::optional<std::string_view> line = NextLine(in, &at);
    if (!line) return in.size() - line_start > kMaxChunkLine + 1 ? -431 : 0;
    if (line->size() > kMaxChunkLine) return -431;
    if (line->empty()) return static_cast<int64_t>(at);
  }
}

// Where the head (request line and headers) ends: after its blank line;
// npos when that has not come.
size_t HeadEnd(std::string_view in) {
  size_t at = 0;
  while (std::optional<std::string_view> line = NextLine(in, &at))
    if (line->empty()) return at;
  return std::string_view::npos;
}

HttpParseResult Error(int status) { return {HttpParse::kError, status, 0}; }

}  // namespace

HttpParseResult ParseHttpRequest(std::string_view in, const HttpParseLimits& limits,
                                 ParsedRequest* out) {
  if (out->header_bytes == 0) {
    // Blank lines before a request are ignored (RFC 9112 2.2).
    const size_t start = std::min(in.find_first_not_of("\r\n"), in.size());
    const std::string_view rest = in.substr(start);
    const size_t end = HeadEnd(rest.substr(0, limits.max_header_bytes));
    if (end == std::string_view::npos) {
      if (rest.size() <= limits.max_header_bytes) return {};
      return Error(
          rest.substr(0, limits.max_header_bytes).find('\n') == std::string_view::npos ? 414 : 431);
    }
    if (const int e = ParseHead(rest.substr(0, end), limits, out); e != 0) return Error(e);
    out->header_bytes = start + end;
  }
  const std::string_view body = in.substr(out->header_bytes);
  if (out->chunked) {
    const int64_t taken =
        DecodeChunked(body, limits.max_body_bytes,
                      2 * limits.max_body_bytes + limits.max_header_bytes, &out->body);
    if (taken < 0) return Error(static_cast<int>(-taken));
    if (taken == 0) return {HttpParse::kNeedBody, 0, 0};
    return {HttpParse::kComplete, 0, out->header_bytes + static_cast<size_t>(taken)};
  }
  if (body.size() < out->content_length) return {HttpParse::kNeedBody, 0, 0};
  out->body = body.substr(0, out->content_length);
  return {HttpParse::kComplete, 0, out->header_bytes + out->content_length};
}

}  // namespace tilestream
