#include "receiver/node_receiver.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/base/clock.h"
#include "common/base/json_text.h"
#include "common/image/ppm.h"
#include "receiver/node_metrics.h"
#include "receiver/node_report.h"
#include "receiver/node_setup.h"
#include "receiver/presenter.h"

namespace tilestream {
namespace {

std::vector<std::string> TileNames(const WallConfig& c, const NodeParts& p) {
  std::vector<std::string> names;
  for (const uint32_t t : p.indices) names.push_back(TileId::FromIndex(t, c.wall.layout).Name());
  return names;
}

NodeFinal Collect(const WallConfig& c, const NodeParts& p, const Presenter& presenter,
                  double seconds) {
  NodeFinal f;
  f.node = p.node->name;
  f.seconds = seconds;
  if (p.display) f.window_updates = presenter.counts().window_updates;
  if (p.sync) {
    f.sync = presenter.counts();
    f.sync->decisions_by_datagram = p.sync->decisions_by_datagram();
    f.sync->decisions_by_tcp = p.sync->decisions_by_tcp();
    f.sync->decisions_by_lan = p.sync->decisions_by_lan();
    f.sync->ticks_led = p.sync->ticks_led();
    f.sync->led_late = p.sync->led_late();
  }
  f.tile_names = TileNames(c, p);
  for (const auto& t : p.tiles) f.tiles.push_back(t->Snapshot());
  return f;
}

void PrintFinal(const NodeFinal& f, const std::string& json_path) {
  fmt::print("{}", FinalNodeText(f));
  std::fflush(stdout);
  if (json_path.empty()) return;
  std::ofstream out(json_path);
  out << JsonText(FinalNodeJson(f), 2) << "\n";
  if (!out) spdlog::error("cannot write {}", json_path);
}

// Headless, the pictures are the tiles' frames as last shown (or, without
// the swap sync, the newest complete ones), named as a display's windows.
Status SaveTiles(const WallConfig& c, NodeParts& p, const Presenter& presenter,
                 const std::string& path) {
  for (size_t k = 0; k < p.tiles.size(); ++k) {
    const std::byte* pixels = presenter.shown(k);
    if (!p.sync)
      if (auto f = p.tiles[k]->TakeReady()) pixels = f->pixels;
    const std::string name = TileId::FromIndex(p.indices[k], c.wall.layout).Name();
    if (!pixels) return Status::NotFound(fmt::format("tile {}: no frame shown to save", name));
    const TileGeometry& g = c.wall.tile;
    TS_RETURN_IF_ERROR(WritePpm(NodeDisplay::ScreenshotFile(path, k, p.tiles.size()), g.width,
                                g.height, std::span(pixels, g.frame_bytes())));
  }
  return Status::Ok();
}

}  // namespace

int RunNodeReceiver(const WallConfig& c, const NodeReceiverOptions& o,
                    const std::atomic<bool>* stop) {
  NodeParts parts;
  if (const int code = SetUpNode(c, o, &parts); code != 0) return code;
  PrintNodeStart(c, parts);
  auto metrics = NodeMetrics::Start(c, parts.node_index, &parts.tiles, TileNames(c, parts));
  if (!metrics.ok()) {
    spdlog::error("{}", metrics.status().message());
    return 1;
  }
  if (*metrics)
    spdlog::info("/metrics on http://{}:{}/metrics", c.http.node_listen_address,
                 (*metrics)->port());
  for (auto& t : parts.tiles) t->Start();

  const int64_t start = MonotonicNs();
  const auto elapsed_s = [start] { return (MonotonicNs() - start) / 1e9; };
  Presenter presenter(&parts, o.overlay, o.sync_priority);
  SecondReporter reporter(c, &parts, o.quiet);
  int64_t next_second = start + kNsPerSecond;
  while (!stop->load() && (o.duration_s <= 0 || elapsed_s() < o.duration_s)) {
    if (!presenter.Turn()) break;
    if (MonotonicNs() < next_second) continue;
    next_second += kNsPerSecond;
    reporter.Report(elapsed_s(), presenter.counts(), &presenter);
    if (*metrics) (*metrics)->SetShown(presenter.counts(), reporter.fps());
  }
  if (!o.screenshot.empty()) {
    const Status s = parts.display ? parts.display->Screenshot(o.screenshot)
                                   : SaveTiles(c, parts, presenter, o.screenshot);
    if (!s.ok()) spdlog::error("screenshot: {}", s.message());
  }
  for (auto& t : parts.tiles) t->Stop();
  PrintFinal(Collect(c, parts, presenter, elapsed_s()), o.json_path);
  return 0;
}

}  // namespace tilestream
