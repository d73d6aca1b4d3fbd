// The windows of a display node: one mosaic window of the whole wall scaled
// down, one borderless window spanning the node's tiles at native size, or
// one window per tile, fullscreen on the tile's display (the config's
// `displays`). Tiles are addressed by their position k in the node's tile
// list. Built on Renderer; everything from one thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/wall/wall_config.h"
#include "receiver/renderer.h"

namespace tilestream {

enum class DisplayMode { kHeadless, kMosaic, kSpan, kTiles };

struct NodeDisplayOptions {
  DisplayMode mode = DisplayMode::kMosaic;
  int window_width = 1280, window_height = 480;  // mosaic
  bool windowed = false;  // tiles: ordinary windows of the tile's size, not fullscreen
  bool hidden = false;    // for tests
};

class NodeDisplay {
 public:
  static Result<std::unique_ptr<NodeDisplay>> Create(const WallConfig& config, uint32_t node,
                                                     const std::vector<uint32_t>& tiles,
                                                     const NodeDisplayOptions& options);

  void Upload(size_t k, const std::byte* pixels);
  void SetOverlay(size_t k, std::string_view text);
  // Draws and presents every window; with several, only the last waits for
  // vsync, so that N windows do not take N refreshes.
  void Show();
  Renderer::Events PollEvents() { return Renderer::PollEvents(); }
  // Draws, and saves each window as PPM: `path` with one window, else
  // path with "-N" before the extension for window N.
  Status Screenshot(const std::string& path);
  std::string Describe() const { return description_; }
  // The file of picture i of `count` saved at `path`: path itself for one,
  // else "-N" before the extension.
  static std::string ScreenshotFile(const std::string& path, size_t i, size_t count);

 private:
  struct Place {
    size_t renderer, view;
  };
  std::vector<std::unique_ptr<Renderer>> renderers_;
  std::vector<Place> places_;  // per tile position k
  std::string description_;
};

}  // namespace tilestream
