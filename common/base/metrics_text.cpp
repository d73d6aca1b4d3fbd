#include "common/base/metrics_text.h"

#include <fmt/format.h>

#include <cmath>

namespace tilestream {
namespace {

// Label values: \ " and line feed escaped; HELP text: \ and line feed.
void AppendEscaped(std::string_view text, bool quote, std::string* out) {
  for (const char c : text) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '\n') {
      *out += "\\n";
    } else if (c == '"' && quote) {
      *out += "\\\"";
    } else {
      *out += c;
    }
  }
}

}  // namespace

void MetricsText::Family(std::string_view name, std::string_view type, std::string_view help) {
  family_ = std::string(name);
  text_ += fmt::format("# HELP {} ", name);
  AppendEscaped(help, false, &text_);
  text_ += fmt::format("\n# TYPE {} {}\n", name, type);
}

void MetricsText::Start(std::string_view suffix, const MetricLabels& labels) {
  text_ += family_;
  text_ += suffix;
  if (labels.size() == 0) return;
  char sep = '{';
  for (const auto& [key, value] : labels) {
    text_ += sep;
    text_ += key;
    text_ += "=\"";
    AppendEscaped(value, true, &text_);
    text_ += '"';
    sep = ',';
  }
  text_ += '}';
}

void MetricsText::Sample(const MetricLabels& labels, double value, std::string_view suffix) {
  Start(suffix, labels);
  if (std::isnan(value)) {
    text_ += " NaN\n";
  } else if (std::isinf(value)) {
    text_ += value > 0 ? " +Inf\n" : " -Inf\n";
  } else {
    text_ += fmt::format(" {}\n", value);
  }
}

void MetricsText::Sample(const MetricLabels& labels, uint64_t value, std::string_view suffix) {
  Start(suffix, labels);
  text_ += fmt::format(" {}\n", value);
}

}  // namespace tilestream
