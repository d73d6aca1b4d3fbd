// Splits the bytes a peer sends into lines, for the control channel's
// both ends (LineChannel, common/control/control_port.h). A line ends with
// "\n", "\r\n" or a lone "\r" (every client's line end is one) and holds at
// most max_line bytes: a longer one is an error, never an unbounded buffer.
// The input is the caller's buffer, which may grow between calls; only
// Next takes from it.
#pragma once

#include <cstddef>
#include <string>

namespace tilestream {

class LineReader {
 public:
  enum class Got { kLine, kNone, kTooLong };

  explicit LineReader(size_t max_line) : max_line_(max_line) {}

  // Takes the next whole line from the front of `input` into *line,
  // without its end.
  Got Next(std::string& input, std::string* line);
  // Whether Next would find a line now.
  bool HasLine(const std::string& input) const;
  // Whether bytes have come after the last line end: a line under way.
  bool Unfinished(const std::string& input) const;
  // Whether the line under way is already longer than a line may be.
  bool Overlong(const std::string& input) const {
    return !HasLine(input) && Unfinished(input) && input.size() > max_line_;
  }

 private:
  static constexpr const char* kLineEnds = "\r\n";
  // The "\n" of a "\r\n" whose "\r" ended the last line, if it is here.
  size_t Skip(const std::string& input) const {
    return after_cr_ && !input.empty() && input[0] == '\n' ? 1 : 0;
  }

  size_t max_line_;
  bool after_cr_ = false;  // the last line ended with "\r"
};

}  // namespace tilestream
