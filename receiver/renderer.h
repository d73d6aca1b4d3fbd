// The only file that touches SDL2 and OpenGL: one window, tiles drawn as
// textured quads at their views, texture uploads through pixel buffer
// objects (the copy into the PBO is the only CPU copy; the driver moves it to
// the texture), vsync on. Not thread-safe: create, upload, draw and present
// from one thread (the one that owns the GL context).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/rfc4175.h"
#include "receiver/mosaic_layout.h"

namespace tilestream {

struct RendererOptions {
  int width = 1280;
  int height = 480;
  std::string title = "tilestream";
  bool fullscreen = false;
  int display = 0;    // SDL display index for fullscreen
  bool vsync = true;
  bool hidden = false;  // for tests: no window shown
};

class Renderer {
 public:
  // `views` says where each texture goes; all tiles have geometry `tile`.
  static Result<std::unique_ptr<Renderer>> Create(const RendererOptions& options, TileGeometry tile,
                                                  std::vector<TileView> views);
  ~Renderer();

  // The new picture of views[i]: tile.frame_bytes() of RGB24.
  void Upload(size_t i, const std::byte* pixels);
  // Clears to black and draws every tile.
  void Draw();
  void Present();
  // The drawn picture (after Draw, before Present), RGB24, top row first.
  std::vector<std::byte> ReadPixels() const;
  // Handles window events; true once the user asked to quit (Esc, q, close).
  bool PollQuit();

 private:
  struct Impl;
  explicit Renderer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilestream
