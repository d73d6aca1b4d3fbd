// The only file that touches SDL2 and OpenGL: one window, tiles drawn as
// textured quads at their views, texture uploads through pixel buffer
// objects (the copy into the PBO is the only CPU copy; the driver moves it to
// the texture), vsync on, and an overlay line per tile. Several Renderers
// (one window per tile) may live in one thread: each call makes its own GL
// context current. Not thread-safe: everything from one thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/wire/rfc4175.h"
#include "receiver/mosaic_layout.h"

namespace tilestream {

struct RendererOptions {
  int width = 1280;
  int height = 480;
  std::string title = "tilestream";
  bool fullscreen = false;
  bool borderless = false;
  int display = 0;  // SDL display index: the window goes there (fullscreen: fills it)
  bool vsync = true;
  bool hidden = false;  // for tests: no window shown
};

class Renderer {
 public:
  // `views` says where each texture goes (a view of width 0 fills the
  // window); all tiles have geometry `tile`.
  static Result<std::unique_ptr<Renderer>> Create(const RendererOptions& options, TileGeometry tile,
                                                  std::vector<TileView> views);
  ~Renderer();

  // The new picture of views[i]: tile.frame_bytes() of RGB24.
  void Upload(size_t i, const std::byte* pixels);
  // A line of text over views[i]'s top-left corner from the next Draw on;
  // empty: none.
  void SetOverlay(size_t i, std::string_view text);
  // Clears to black and draws every tile, and the overlays.
  void Draw();
  void Present();
  // The window's drawable size in pixels.
  int width() const;
  int height() const;
  // The drawn picture (after Draw, before Present), RGB24, top row first.
  std::vector<std::byte> ReadPixels() const;
  // Handles the events of every window (SDL has one queue).
  struct Events {
    bool quit = false;                  // Esc, q, or a window closed
    bool toggle_overlay = false;        // o
    std::vector<std::string> commands;  // control commands of the keys: space, arrows, Home
  };
  static Events PollEvents();

 private:
  struct Impl;
  explicit Renderer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilestream
