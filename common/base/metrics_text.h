// Prometheus' text exposition format (version 0.0.4), built line by line:
// a family's # HELP and # TYPE, then its samples with escaped label values.
// The coordinator's and the display nodes' /metrics (docs/operations.md).
// Built per scrape, never per packet; not thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace tilestream {

using MetricLabels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

class MetricsText {
 public:
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

  // Starts family `name` of `type` ("counter", "gauge", "histogram").
  void Family(std::string_view name, std::string_view type, std::string_view help);
  // A sample of the family started last: name + suffix ("_bucket", "") and
  // labels (values escaped: backslash, quote, line feed).
  void Sample(const MetricLabels& labels, double value, std::string_view suffix = "");
  void Sample(const MetricLabels& labels, uint64_t value, std::string_view suffix = "");

  const std::string& text() const { return text_; }

 private:
  void Start(std::string_view suffix, const MetricLabels& labels);
  std::string text_;
  std::string family_;
};

}  // namespace tilestream
