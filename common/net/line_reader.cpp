#include "common/net/line_reader.h"

namespace tilestream {

LineReader::Got LineReader::Next(std::string& input, std::string* line) {
  if (after_cr_ && !input.empty()) {
    if (input[0] == '\n') input.erase(0, 1);
    after_cr_ = false;
  }
  const size_t end = input.find_first_of(kLineEnds);
  if (end == std::string::npos) return input.size() > max_line_ ? Got::kTooLong : Got::kNone;
  if (end > max_line_) return Got::kTooLong;
  line->assign(input, 0, end);
  after_cr_ = input[end] == '\r';
  input.erase(0, end + 1);
  return Got::kLine;
}

bool LineReader::HasLine(const std::string& input) const {
  return input.find_first_of(kLineEnds, Skip(input)) != std::string::npos;
}

bool LineReader::Unfinished(const std::string& input) const {
  const size_t last = input.find_last_of(kLineEnds);
  return last == std::string::npos ? !input.empty() : last + 1 < input.size();
}

}  // namespace tilestream
