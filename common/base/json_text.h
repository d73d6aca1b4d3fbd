// Text for the outside world that never breaks on text from it: JSON lines
// built with nlohmann::json whose strings may hold any bytes a client sent
// (invalid UTF-8 becomes U+FFFD instead of an exception), the control
// channel's replies, and log lines that quote outside text with every byte
// that is not printable ASCII escaped (no terminal escapes, no NULs, no
// line breaks from a peer reach a log or a journal).
//
// Plain functions; thread-safe. They allocate: for replies and events, never
// per packet.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace tilestream {

// `j` as JSON text (one line unless indent >= 0); never throws.
std::string JsonText(const nlohmann::json& j, int indent = -1);

// {"ok":false,"error":message} and {"ok":true} as one line.
std::string ErrorReply(std::string_view message);
std::string OkReply();

// Fields of a reply from a peer, read without trusting its types: `key` of
// object `j` when it has that type, else `fallback`. Never throw.
bool JsonBool(const nlohmann::json& j, const char* key, bool fallback = false);
std::string JsonString(const nlohmann::json& j, const char* key, std::string_view fallback);

// `text` for a log line or an error message: printable ASCII as it is, every
// other byte as \xNN, a backslash as \\; at most `max_bytes` of `text`
// quoted, then "...".
std::string Printable(std::string_view text, size_t max_bytes = 80);

}  // namespace tilestream
