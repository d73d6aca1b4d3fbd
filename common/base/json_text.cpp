#include "common/base/json_text.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace tilestream {

std::string JsonText(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ErrorReply(std::string_view message) {
  return JsonText(nlohmann::json{{"ok", false}, {"error", std::string(message)}});
}

std::string OkReply() { return JsonText(nlohmann::json{{"ok", true}}); }

bool JsonBool(const nlohmann::json& j, const char* key, bool fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::string JsonString(const nlohmann::json& j, const char* key, std::string_view fallback) {
  if (!j.is_object()) return std::string(fallback);
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}

std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out;
  const std::string_view shown = text.substr(0, max_bytes);
  out.reserve(shown.size() + 3);
  for (const char ch : shown) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

}  // namespace tilestream
