#include "tools/wallcut/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace tilestream {
namespace {

std::string Clock(double seconds) {
  const auto s = static_cast<uint64_t>(std::max(0.0, seconds));
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

ProgressBar::ProgressBar(std::string label, uint64_t total, std::string unit, FILE* out)
    : ProgressBar(std::move(label), total, std::move(unit), out, isatty(fileno(out)) == 1) {}

ProgressBar::ProgressBar(std::string label, uint64_t total, std::string unit, FILE* out,
                         bool interactive)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      out_(out),
      interactive_(interactive),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - std::chrono::seconds(1)) {}

std::string ProgressBar::Render(const std::string& label, uint64_t done, uint64_t total,
                                const std::string& unit, uint64_t bytes, double seconds,
                                int width) {
  const double rate = seconds > 0 ? bytes / seconds / 1e6 : 0;
  std::string line = label;
  if (total > 0) {
    const double f = std::min(1.0, static_cast<double>(done) / total);
    const int filled = static_cast<int>(f * width);
    line += fmt::format(" [{}{}] {:3.0f}% {}/{} {}", std::string(filled, '#'),
                        std::string(width - filled, '-'), f * 100, done, total, unit);
  } else {
    line += fmt::format(" {} {}", done, unit);
  }
  line += fmt::format("  {:.1f} MB/s  {}", rate, Clock(seconds));
  if (total > 0 && done > 0 && done < total)
    line += fmt::format("  ETA {}", Clock(seconds / done * (total - done)));
  return line;
}

void ProgressBar::Update(uint64_t done, uint64_t bytes) {
  if (!interactive_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double s = std::chrono::duration<double>(now - start_).count();
  fmt::print(out_, "\r{}\033[K", Render(label_, done, total_, unit_, bytes, s, 30));
  std::fflush(out_);
}

void ProgressBar::Finish(uint64_t done, uint64_t bytes) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  fmt::print(out_, "{}{}\n", interactive_ ? "\r\033[K" : "",
             Render(label_, done, total_ ? total_ : done, unit_, bytes, s, 30));
  std::fflush(out_);
}

}  // namespace tilestream
