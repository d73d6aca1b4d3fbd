// Words and numbers of a text line: the one tokenizer and number parser of
// every line protocol (the control channel, swap sync) and of the small
// text formats (SDP, "WxH" sizes). A blank is a space or a tab; runs of
// blanks separate as one; nothing allocates; text from outside is never
// trusted: every number is whole and in range or refused.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <string_view>
#include <system_error>
#include <utility>

namespace tilestream {

inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// A movie's name in the library (its directory's), or a live source's: 1
// to 128 of A-Z a-z 0-9 . _ - and not starting with a dot (so never "..",
// nor a path).
inline bool ValidMovieName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name[0] == '.') return false;
  for (const char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '.' || ch == '_' || ch == '-'))
      return false;
  return true;
}

// `s` without blanks (and a trailing '\r') at either end.
inline std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && (IsBlank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Splits `line` into at most N words (views into it); false if it has more.
template <size_t N>
bool SplitWords(std::string_view line, std::array<std::string_view, N>* words, size_t* count) {
  *count = 0;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i == line.size()) break;
    size_t end = i;
    while (end < line.size() && !IsBlank(line[end])) ++end;
    if (*count == N) return false;
    (*words)[(*count)++] = line.substr(i, end - i);
    i = end;
  }
  return true;
}

// The first word and the rest of the line after the blanks that follow it.
inline std::pair<std::string_view, std::string_view> SplitFirstWord(std::string_view line) {
  size_t start = 0;
  while (start < line.size() && IsBlank(line[start])) ++start;
  size_t end = start;
  while (end < line.size() && !IsBlank(line[end])) ++end;
  size_t rest = end;
  while (rest < line.size() && IsBlank(line[rest])) ++rest;
  return {line.substr(start, end - start), line.substr(rest)};
}

// All of `s` as a decimal integer that fits T ("-" only where T is signed;
// no "+", no blanks, no base prefix).
template <typename T>
bool ParseInteger(std::string_view s, T* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// All of `s` as a finite decimal real.
inline bool ParseReal(std::string_view s, double* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size() && std::isfinite(*out);
}

}  // namespace tilestream
