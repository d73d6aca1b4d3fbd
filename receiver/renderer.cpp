#include "receiver/renderer.h"

#include <GL/glew.h>
#include <SDL2/SDL.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "common/image/bitmap_font.h"

namespace tilestream {

struct Renderer::Impl {
  RendererOptions options;
  TileGeometry tile;
  std::vector<TileView> views;
  SDL_Window* window = nullptr;
  SDL_GLContext context = nullptr;
  std::vector<GLuint> textures, pbos;
  int width = 0, height = 0;  // drawable size
  struct Overlay {
    GLuint texture = 0;
    int width = 0, height = 0;  // 0: none
  };
  std::vector<Overlay> overlays;
  std::vector<std::byte> text_pixels;

  void MakeCurrent() {
    if (SDL_GL_GetCurrentContext() != context) SDL_GL_MakeCurrent(window, context);
  }
  Status Open();
  void CreateTextures();

  ~Impl() {
    if (context) {
      if (!textures.empty())
        glDeleteTextures(static_cast<GLsizei>(textures.size()), textures.data());
      if (!pbos.empty()) glDeleteBuffers(static_cast<GLsizei>(pbos.size()), pbos.data());
      for (const Overlay& o : overlays)
        if (o.texture) glDeleteTextures(1, &o.texture);
      SDL_GL_DeleteContext(context);
    }
    if (window) SDL_DestroyWindow(window);
    SDL_QuitSubSystem(SDL_INIT_VIDEO);
  }
};

Renderer::Renderer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Renderer::~Renderer() = default;

// The window, its OpenGL context and GLEW's entry points.
Status Renderer::Impl::Open() {
  const RendererOptions& o = options;
  SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
  Uint32 flags = SDL_WINDOW_OPENGL | (o.hidden ? SDL_WINDOW_HIDDEN : SDL_WINDOW_SHOWN);
  int x = SDL_WINDOWPOS_CENTERED_DISPLAY(o.display), y = SDL_WINDOWPOS_CENTERED_DISPLAY(o.display);
  if (o.fullscreen) flags |= SDL_WINDOW_FULLSCREEN_DESKTOP;
  if (o.borderless) {
    flags |= SDL_WINDOW_BORDERLESS;
    SDL_Rect bounds{};
    if (SDL_GetDisplayBounds(o.display, &bounds) == 0) x = bounds.x, y = bounds.y;
  }
  window = SDL_CreateWindow(o.title.c_str(), x, y, o.width, o.height, flags);
  if (!window) return Status::Unsupported(fmt::format("SDL window: {}", SDL_GetError()));
  context = SDL_GL_CreateContext(window);
  if (!context) return Status::Unsupported(fmt::format("OpenGL context: {}", SDL_GetError()));
  SDL_GL_MakeCurrent(window, context);
  glewExperimental = GL_TRUE;
  // GLEW loads the GL entry points first and then queries GLX, which fails
  // with NO_GLX_DISPLAY where it cannot see the display (EGL, some Xvfb
  // runs): harmless when the entry points we use are there.
  const GLenum e = glewInit();
  const bool usable =
      e == GLEW_OK || (e == GLEW_ERROR_NO_GLX_DISPLAY && glGenBuffers && glMapBuffer);
  if (!usable)
    return Status::Unsupported(
        fmt::format("GLEW: {} ({})", reinterpret_cast<const char*>(glewGetErrorString(e)), e));
  SDL_GL_SetSwapInterval(o.vsync ? 1 : 0);
  SDL_GL_GetDrawableSize(window, &width, &height);
  return Status::Ok();
}

// A texture and a pixel buffer object per view, of the tile's size.
void Renderer::Impl::CreateTextures() {
  const size_t n = views.size();
  textures.resize(n);
  pbos.resize(n);
  glGenTextures(static_cast<GLsizei>(n), textures.data());
  glGenBuffers(static_cast<GLsizei>(n), pbos.data());
  for (size_t i = 0; i < n; ++i) {
    const TileView& v = views[i];
    // One texel per screen pixel: exact; scaled: filtered.
    const bool exact =
        v.width == static_cast<int>(tile.width) && v.height == static_cast<int>(tile.height);
    glBindTexture(GL_TEXTURE_2D, textures[i]);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, exact ? GL_NEAREST : GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, exact ? GL_NEAREST : GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, static_cast<GLsizei>(tile.width),
                 static_cast<GLsizei>(tile.height), 0, GL_RGB, GL_UNSIGNED_BYTE, nullptr);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbos[i]);
    glBufferData(GL_PIXEL_UNPACK_BUFFER, static_cast<GLsizeiptr>(tile.frame_bytes()), nullptr,
                 GL_STREAM_DRAW);
  }
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);  // rows of width * 3 bytes
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
}

Result<std::unique_ptr<Renderer>> Renderer::Create(const RendererOptions& o, TileGeometry tile,
                                                   std::vector<TileView> views) {
  if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0)
    return Status::Unsupported(
        fmt::format("SDL video: {} (no display? use --headless)", SDL_GetError()));
  auto impl = std::make_unique<Impl>();
  impl->options = o;
  impl->tile = tile;
  impl->views = std::move(views);
  if (Status s = impl->Open(); !s.ok()) return s;
  for (TileView& v : impl->views)
    if (v.width == 0 || v.height == 0) v = {v.tile, 0, 0, impl->width, impl->height};
  impl->overlays.resize(impl->views.size());
  impl->CreateTextures();
  if (glGetError() != GL_NO_ERROR) return Status::Internal("OpenGL set-up failed");
  return std::unique_ptr<Renderer>(new Renderer(std::move(impl)));
}

void Renderer::Upload(size_t i, const std::byte* pixels) {
  impl_->MakeCurrent();
  const size_t bytes = impl_->tile.frame_bytes();
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, impl_->pbos[i]);
  // Orphan the old storage so the driver need not wait for the last upload.
  glBufferData(GL_PIXEL_UNPACK_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr, GL_STREAM_DRAW);
  if (void* p = glMapBuffer(GL_PIXEL_UNPACK_BUFFER, GL_WRITE_ONLY)) {
    std::memcpy(p, pixels, bytes);
    glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
    glBindTexture(GL_TEXTURE_2D, impl_->textures[i]);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, static_cast<GLsizei>(impl_->tile.width),
                    static_cast<GLsizei>(impl_->tile.height), GL_RGB, GL_UNSIGNED_BYTE, nullptr);
  }
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
}

void Renderer::SetOverlay(size_t i, std::string_view text) {
  Impl::Overlay& o = impl_->overlays[i];
  if (text.empty()) {
    o.width = o.height = 0;
    return;
  }
  impl_->MakeCurrent();
  // Readable at a glance from a few metres: ~1/60 of the view's height.
  const uint32_t scale = static_cast<uint32_t>(std::max(2, impl_->views[i].height / 300));
  o.width = static_cast<int>(TextWidth(text, scale));
  o.height = static_cast<int>(TextHeight(scale));
  impl_->text_pixels.assign(static_cast<size_t>(o.width) * o.height * 3, std::byte{0});
  DrawText(impl_->text_pixels, static_cast<uint32_t>(o.width), static_cast<uint32_t>(o.height), 0,
           0, text, scale);
  if (!o.texture) {
    glGenTextures(1, &o.texture);
    glBindTexture(GL_TEXTURE_2D, o.texture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  }
  glBindTexture(GL_TEXTURE_2D, o.texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, o.width, o.height, 0, GL_RGB, GL_UNSIGNED_BYTE,
               impl_->text_pixels.data());
}

void Renderer::Draw() {
  impl_->MakeCurrent();
  glViewport(0, 0, impl_->width, impl_->height);
  glMatrixMode(GL_PROJECTION);
  glLoadIdentity();
  glOrtho(0, impl_->width, impl_->height, 0, -1, 1);  // y down, window pixels
  glMatrixMode(GL_MODELVIEW);
  glLoadIdentity();
  glClearColor(0, 0, 0, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  glEnable(GL_TEXTURE_2D);
  glColor3f(1, 1, 1);
  for (size_t i = 0; i < impl_->views.size(); ++i) {
    const TileView& v = impl_->views[i];
    glBindTexture(GL_TEXTURE_2D, impl_->textures[i]);
    glBegin(GL_QUADS);
    glTexCoord2f(0, 0), glVertex2i(v.x, v.y);
    glTexCoord2f(1, 0), glVertex2i(v.x + v.width, v.y);
    glTexCoord2f(1, 1), glVertex2i(v.x + v.width, v.y + v.height);
    glTexCoord2f(0, 1), glVertex2i(v.x, v.y + v.height);
    glEnd();
  }
  for (size_t i = 0; i < impl_->views.size(); ++i) {
    const Impl::Overlay& o = impl_->overlays[i];
    if (o.width == 0) continue;
    const int x = impl_->views[i].x + 8, y = impl_->views[i].y + 8;
    glBindTexture(GL_TEXTURE_2D, o.texture);
    glBegin(GL_QUADS);
    glTexCoord2f(0, 0), glVertex2i(x, y);
    glTexCoord2f(1, 0), glVertex2i(x + o.width, y);
    glTexCoord2f(1, 1), glVertex2i(x + o.width, y + o.height);
    glTexCoord2f(0, 1), glVertex2i(x, y + o.height);
    glEnd();
  }
  glDisable(GL_TEXTURE_2D);
}

void Renderer::Present() {
  impl_->MakeCurrent();
  SDL_GL_SwapWindow(impl_->window);
}

int Renderer::width() const { return impl_->width; }
int Renderer::height() const { return impl_->height; }

std::vector<std::byte> Renderer::ReadPixels() const {
  impl_->MakeCurrent();
  const int w = impl_->width, h = impl_->height;
  std::vector<std::byte> bottom_up(static_cast<size_t>(w) * h * 3), out(bottom_up.size());
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, bottom_up.data());
  const size_t row = static_cast<size_t>(w) * 3;
  for (int y = 0; y < h; ++y)
    std::memcpy(out.data() + y * row, bottom_up.data() + static_cast<size_t>(h - 1 - y) * row, row);
  return out;
}

Renderer::Events Renderer::PollEvents() {
  SDL_Event e;
  Events out;
  while (SDL_PollEvent(&e)) {
    if (e.type == SDL_QUIT) out.quit = true;
    if (e.type == SDL_WINDOWEVENT && e.window.event == SDL_WINDOWEVENT_CLOSE) out.quit = true;
    if (e.type != SDL_KEYDOWN || e.key.repeat) continue;
    if (e.key.keysym.sym == SDLK_ESCAPE || e.key.keysym.sym == SDLK_q) out.quit = true;
    switch (e.key.keysym.sym) {
      case SDLK_o:
        out.toggle_overlay = true;
        break;
      case SDLK_SPACE:
        out.commands.emplace_back("toggle");
        break;
      case SDLK_LEFT:
        out.commands.emplace_back("step -1");
        break;
      case SDLK_RIGHT:
        out.commands.emplace_back("step +1");
        break;
      case SDLK_UP:
        out.commands.emplace_back("speed 2");
        break;
      case SDLK_DOWN:
        out.commands.emplace_back("speed 1");
        break;
      case SDLK_HOME:
        out.commands.emplace_back("seek 0");
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace tilestream
