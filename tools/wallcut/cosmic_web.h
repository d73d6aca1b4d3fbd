// A synthetic "cosmic web" movie for demos and benchmarks, so no large asset
// is ever committed. It is the 2D Zel'dovich approximation of an N-body
// simulation: particles start on a lattice and move along the gradient of a
// random potential, x = q + D(t) * psi(q); as the growth factor D rises they
// cross into sheets, filaments and knots. Each frame is the particles'
// density on the whole wall, log-scaled through a fixed colour map.
//
// Deterministic: the same seed and size give the same bytes on any machine
// (integer hashing, no library RNG). Frames grow structure monotonically, so
// no two frames of a movie are alike. Render() reuses scratch owned by the
// object: one thread per CosmicWeb.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/base/result.h"

namespace tilestream {

struct CosmicWebOptions {
  uint32_t width = 0;  // the whole wall's source frame, bezels included
  uint32_t height = 0;
  uint64_t frames = 300;
  uint64_t seed = 1;
  uint32_t particle_spacing = 2;  // pixels between particles on the start lattice
};

class CosmicWeb {
 public:
  // Precomputes the displacement field: about 12 bytes per particle plus 4
  // per pixel of scratch.
  static Result<CosmicWeb> Create(const CosmicWebOptions& options);

  // Renders frame `index` as RGB24, row-major, width * height * 3 bytes.
  // REQUIRES: out.size() >= width * height * 3; index < frames.
  void Render(uint64_t index, std::span<std::byte> out);

  const CosmicWebOptions& options() const { return options_; }

 private:
  explicit CosmicWeb(const CosmicWebOptions& o) : options_(o) {}
  CosmicWebOptions options_;
  uint32_t nx_ = 0, ny_ = 0;          // particle lattice
  std::vector<float> psi_x_, psi_y_;  // displacement per particle
  float collapse_d_ = 1;              // growth factor at which sheets form
  std::vector<float> density_, blurred_;
  std::vector<std::array<uint8_t, 3>> palette_;
};

// Draws `value` in decimal with a 3x5 pixel font scaled by `scale`, white on
// a dark box, with its top-left corner at (x, y); clipped to the image.
void DrawNumber(std::span<std::byte> rgb, uint32_t width, uint32_t height, uint32_t x, uint32_t y,
                uint64_t value, uint32_t scale);

}  // namespace tilestream
