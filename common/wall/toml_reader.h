// Reading TOML with messages an operator can act on: every problem becomes
// "file:line: key: problem", all of them are collected (not just the first),
// and unknown keys are errors so that typos never pass silently. Internal to
// common/ (wall config, tile store manifest). Not thread-safe.
#pragma once

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/base/result.h"

namespace tilestream {

// The TOML document in `text`; a syntax error is "source:line: TOML syntax:
// what", the one message an operator needs to find it.
inline Result<toml::table> ParseToml(std::string_view text, std::string_view source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: TOML syntax: {}", source, e.source().begin.line, e.description()));
  }
}

// Collects "file:line: key: problem" messages while reading TOML.
class TomlReader {
 public:
  TomlReader(std::string source, std::vector<std::pair<std::string, int>>* key_lines)
      : source_(std::move(source)), key_lines_(key_lines) {}

  void Error(const toml::node* node, const std::string& key, const std::string& problem) {
    const int line = node ? static_cast<int>(node->source().begin.line) : 0;
    errors_.push_back(line > 0 ? fmt::format("{}:{}: {}: {}", source_, line, key, problem)
                               : fmt::format("{}: {}: {}", source_, key, problem));
  }
  const std::vector<std::string>& errors() const { return errors_; }

  void Remember(const toml::node& node, const std::string& key) {
    if (key_lines_) key_lines_->emplace_back(key, static_cast<int>(node.source().begin.line));
  }

  void CheckKeys(const toml::table& t, const std::string& path,
                 std::initializer_list<std::string_view> allowed) {
    for (auto&& [k, v] : t) {
      if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end()) {
        std::string list;
        for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        Error(&v, Join(path, k.str()), fmt::format("unknown key (known here: {})", list));
      }
    }
  }

  static std::string Join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

  template <typename T>
  void Int(const toml::table& t, const std::string& path, std::string_view key, int64_t min,
           int64_t max, T* out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = Join(path, key);
    Remember(*n, name);
    const auto v = n->value_exact<int64_t>();
    if (!v) return Error(n, name, fmt::format("expected an integer, got {}", TypeName(*n)));
    if (*v < min || *v > max)
      return Error(n, name, fmt::format("{} is outside {}..{}", *v, min, max));
    *out = static_cast<T>(*v);
  }

  void Float(const toml::table& t, const std::string& path, std::string_view key, double min,
             double max, double* out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = Join(path, key);
    Remember(*n, name);
    if (!n->is_number())
      return Error(n, name, fmt::format("expected a number, got {}", TypeName(*n)));
    const double v = n->value<double>().value_or(0);
    if (!(v >= min && v <= max))
      return Error(n, name, fmt::format("{} is outside {}..{}", v, min, max));
    *out = v;
  }

  void String(const toml::table& t, const std::string& path, std::string_view key,
              std::string* out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = Join(path, key);
    Remember(*n, name);
    if (!n->is_string())
      return Error(n, name, fmt::format("expected a string, got {}", TypeName(*n)));
    *out = *n->value<std::string>();
  }

  void Bool(const toml::table& t, const std::string& path, std::string_view key, bool* out) {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = Join(path, key);
    Remember(*n, name);
    if (!n->is_boolean())
      return Error(n, name, fmt::format("expected true or false, got {}", TypeName(*n)));
    *out = *n->value<bool>();
  }

  // An array whose elements each pass `element` (which reports its own errors).
  template <typename F>
  void Array(const toml::table& t, const std::string& path, std::string_view key, F element) {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = Join(path, key);
    Remember(*n, name);
    const toml::array* a = n->as_array();
    if (!a) return Error(n, name, fmt::format("expected an array, got {}", TypeName(*n)));
    for (size_t i = 0; i < a->size(); ++i) element(*a->get(i), fmt::format("{}[{}]", name, i));
  }

  static std::string TypeName(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::table:
        return "a table";
      case toml::node_type::array:
        return "an array";
      case toml::node_type::string:
        return "a string";
      case toml::node_type::integer:
        return "an integer";
      case toml::node_type::floating_point:
        return "a float";
      case toml::node_type::boolean:
        return "a boolean";
      default:
        return "a date/time";
    }
  }

 private:
  std::string source_;
  std::vector<std::pair<std::string, int>>* key_lines_;
  std::vector<std::string> errors_;
};

// A [section] that must be a table if present.
inline const toml::table* Section(TomlReader& r, const toml::table& root, std::string_view name) {
  const toml::node* n = root.get(name);
  if (!n) return nullptr;
  if (!n->is_table()) {
    r.Error(n, std::string(name), "expected a table [" + std::string(name) + "]");
    return nullptr;
  }
  return n->as_table();
}

// An [[array]] of tables.
template <typename F>
void TableArray(TomlReader& r, const toml::table& root, std::string_view name, F each) {
  const toml::node* n = root.get(name);
  if (!n) return;
  const toml::array* a = n->as_array();
  if (!a || !a->is_array_of_tables()) {
    r.Error(n, std::string(name), "expected an array of tables [[" + std::string(name) + "]]");
    return;
  }
  for (size_t i = 0; i < a->size(); ++i)
    each(*a->get(i)->as_table(), fmt::format("{}[{}]", name, i));
}

inline std::string JoinLines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += (s.empty() ? "" : "\n") + l;
  return s;
}

}  // namespace tilestream
