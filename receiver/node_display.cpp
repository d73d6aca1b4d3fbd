#include "receiver/node_display.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/image/ppm.h"
#include "receiver/mosaic_layout.h"

namespace tilestream {

Result<std::unique_ptr<NodeDisplay>> NodeDisplay::Create(const WallConfig& c, uint32_t node_index,
                                                         const std::vector<uint32_t>& tiles,
                                                         const NodeDisplayOptions& o) {
  auto d = std::make_unique<NodeDisplay>();
  const DisplayNode& node = c.nodes[node_index];
  auto add = [&](const RendererOptions& ro, std::vector<TileView> views,
                 const std::vector<size_t>& ks) -> Status {
    auto r = Renderer::Create(ro, c.wall.tile, std::move(views));
    if (!r.ok()) return r.status();
    for (size_t v = 0; v < ks.size(); ++v) d->places_[ks[v]] = {d->renderers_.size(), v};
    d->renderers_.push_back(std::move(r).value());
    return Status::Ok();
  };
  d->places_.resize(tiles.size());
  std::vector<size_t> all(tiles.size());
  for (size_t k = 0; k < tiles.size(); ++k) all[k] = k;
  RendererOptions ro;
  ro.hidden = o.hidden;
  ro.title = fmt::format("tilestream: {} ({})", node.name, c.wall.layout.ToString());
  switch (o.mode) {
    case DisplayMode::kHeadless:
      return Status::InvalidArgument("a headless node has no display");
    case DisplayMode::kMosaic:
      ro.width = o.window_width, ro.height = o.window_height;
      TS_RETURN_IF_ERROR(add(ro, MosaicLayout(c.wall, tiles, ro.width, ro.height), all));
      d->description_ = fmt::format("mosaic window {}x{}", ro.width, ro.height);
      break;
    case DisplayMode::kSpan: {
      auto views = SpanLayout(c.wall, tiles, &ro.width, &ro.height);
      ro.borderless = true;
      ro.display = node.displays.empty() ? 0 : node.displays[0];
      TS_RETURN_IF_ERROR(add(ro, std::move(views), all));
      d->description_ = fmt::format("one {}x{} window spanning the tiles from display {}", ro.width,
                                    ro.height, ro.display);
      break;
    }
    case DisplayMode::kTiles:
      for (size_t k = 0; k < tiles.size(); ++k) {
        RendererOptions t = ro;
        t.title = fmt::format("tilestream: {}", TileId::FromIndex(tiles[k], c.wall.layout).Name());
        t.width = static_cast<int>(c.wall.tile.width),
        t.height = static_cast<int>(c.wall.tile.height);
        t.fullscreen = !o.windowed;
        t.display = c.routes[tiles[k]].display;
        t.vsync = k + 1 == tiles.size();
        TS_RETURN_IF_ERROR(add(t, {{tiles[k], 0, 0, 0, 0}}, {k}));  // the view fills the window
      }
      d->description_ = fmt::format("{} window(s), one per tile, {}", tiles.size(),
                                    o.windowed ? "windowed" : "fullscreen on their displays");
      break;
  }
  return d;
}

void NodeDisplay::Upload(size_t k, const std::byte* pixels) {
  renderers_[places_[k].renderer]->Upload(places_[k].view, pixels);
}

void NodeDisplay::SetOverlay(size_t k, std::string_view text) {
  renderers_[places_[k].renderer]->SetOverlay(places_[k].view, text);
}

void NodeDisplay::Show() {
  for (auto& r : renderers_) r->Draw();
  for (auto& r : renderers_) r->Present();
}

std::string NodeDisplay::ScreenshotFile(const std::string& path, size_t i, size_t count) {
  if (count == 1) return path;
  const std::filesystem::path p(path);
  return (p.parent_path() / fmt::format("{}-{}{}", p.stem().string(), i, p.extension().string()))
      .string();
}

Status NodeDisplay::Screenshot(const std::string& path) {
  for (size_t i = 0; i < renderers_.size(); ++i) {
    renderers_[i]->Draw();
    const std::string file = ScreenshotFile(path, i, renderers_.size());
    const Renderer& r = *renderers_[i];
    TS_RETURN_IF_ERROR(WritePpm(file, static_cast<uint32_t>(r.width()),
                                static_cast<uint32_t>(r.height()), r.ReadPixels()));
  }
  return Status::Ok();
}

}  // namespace tilestream
