// configs/grafana-dashboard.json and configs/prometheus.yml against what
// the wall serves: every metric a panel asks for is one the coordinator or
// a display node exports, and promtool accepts the scrape config.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "receiver/node_metrics.h"
#include "streamer/wall_metrics.h"
#include "tests/streamer/wall_state.h"
#include "tests/support/built_paths.h"
#include "tests/support/shell.h"

namespace tilestream {
namespace {

// The families ("# TYPE name kind") of a /metrics text.
std::set<std::string> Families(const std::string& text) {
  std::set<std::string> names;
  const std::regex type("# TYPE ([a-z_]+) ");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), type); it != std::sregex_iterator();
       ++it)
    names.insert((*it)[1]);
  return names;
}

std::set<std::string> Exported() {
  const testing::WallState w;
  const Playback playback(10, 30, {});
  std::set<std::string> names = Families(WallMetrics(w.View(0), &playback));
  NodeMetricsView node;
  node.node = "n";
  const std::set<std::string> more = Families(NodeMetricsText(node));
  names.insert(more.begin(), more.end());
  return names;
}

TEST(Dashboard, EveryPanelAsksForMetricsTheWallExports) {
  std::ifstream in(TILESTREAM_SOURCE_DIR + "/configs/grafana-dashboard.json");
  const nlohmann::json dashboard = nlohmann::json::parse(in);
  const std::set<std::string> exported = Exported();
  const std::regex metric("tilestream_[a-z_]+");
  size_t asked = 0;
  for (const auto& panel : dashboard["panels"]) {
    for (const auto& target : panel["targets"]) {
      const std::string expr = target["expr"];
      for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metric);
           it != std::sregex_iterator(); ++it) {
        std::string name = it->str();
        if (name.ends_with("_bucket")) name.resize(name.size() - 7);
        EXPECT_TRUE(exported.count(name)) << panel["title"] << ": " << name;
        ++asked;
      }
    }
  }
  EXPECT_GE(asked, 12u);
}

TEST(Dashboard, PromtoolAcceptsTheScrapeConfig) {
  testing::TempDir dir;
  const auto r = testing::Shell(
      "promtool check config " + TILESTREAM_SOURCE_DIR + "/configs/prometheus.yml", dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace tilestream
