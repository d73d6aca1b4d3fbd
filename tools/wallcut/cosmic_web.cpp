#include "tools/wallcut/cosmic_web.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "common/image/bitmap_font.h"

namespace tilestream {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A value in [-1, 1) fixed by (seed, octave, lattice point).
float LatticeValue(uint64_t seed, uint32_t octave, int64_t i, int64_t j) {
  const uint64_t h =
      Mix(seed ^ Mix(octave * 0x100000001b3ull ^
                     Mix(static_cast<uint64_t>(i) ^ (static_cast<uint64_t>(j) << 32))));
  return static_cast<float>(h >> 40) / static_cast<float>(1 << 23) - 1.0f;
}

float Smooth(float t) { return t * t * t * (t * (t * 6 - 15) + 10); }

// Smoothly interpolated lattice noise at (x, y) in lattice units.
float ValueNoise(uint64_t seed, uint32_t octave, double x, double y) {
  const double fx = std::floor(x), fy = std::floor(y);
  const auto i = static_cast<int64_t>(fx), j = static_cast<int64_t>(fy);
  const float u = Smooth(static_cast<float>(x - fx)), v = Smooth(static_cast<float>(y - fy));
  const float a = LatticeValue(seed, octave, i, j), b = LatticeValue(seed, octave, i + 1, j);
  const float c = LatticeValue(seed, octave, i, j + 1),
              d = LatticeValue(seed, octave, i + 1, j + 1);
  return (a + (b - a) * u) * (1 - v) + (c + (d - c) * u) * v;
}

// Dark blue through violet and orange to white: the usual look of
// simulation renders, with most of the range in the filaments.
std::array<uint8_t, 3> PaletteColour(float t) {
  static constexpr float kStops[][4] = {{0.00f, 0, 0, 0},      {0.22f, 8, 10, 48},
                                        {0.45f, 70, 30, 130},  {0.65f, 200, 70, 60},
                                        {0.82f, 255, 180, 70}, {1.00f, 255, 255, 240}};
  for (size_t s = 1; s < std::size(kStops); ++s) {
    if (t <= kStops[s][0]) {
      const float f = (t - kStops[s - 1][0]) / (kStops[s][0] - kStops[s - 1][0]);
      std::array<uint8_t, 3> c;
      for (int k = 0; k < 3; ++k)
        c[k] = static_cast<uint8_t>(
            std::lround(kStops[s - 1][k + 1] + f * (kStops[s][k + 1] - kStops[s - 1][k + 1])));
      return c;
    }
  }
  return {255, 255, 240};
}

constexpr size_t kPaletteSize = 4096;
constexpr float kMaxContrast = 40.0f;  // density / mean that maps to white

}  // namespace

Result<CosmicWeb> CosmicWeb::Create(const CosmicWebOptions& o) {
  if (o.width == 0 || o.height == 0 || o.frames == 0 || o.particle_spacing == 0)
    return Status::InvalidArgument("cosmic web: width, height, frames and spacing must be > 0");
  if (uint64_t{o.width} * o.height > (uint64_t{1} << 31))
    return Status::InvalidArgument(
        fmt::format("cosmic web: {}x{} is too large", o.width, o.height));
  CosmicWeb w(o);
  const uint32_t s = o.particle_spacing;
  w.nx_ = (o.width + s - 1) / s;
  w.ny_ = (o.height + s - 1) / s;
  const size_t n = size_t{w.nx_} * w.ny_;

  // Potential: octaves of value noise with amplitude ~ scale^2 (a red
  // spectrum: big voids, fine filaments). Scales follow the wall's height so
  // that the movie looks alike at any resolution.
  std::vector<float> phi(n);
  const double base = o.height / 2.5;
  for (uint32_t j = 0; j < w.ny_; ++j) {
    for (uint32_t i = 0; i < w.nx_; ++i) {
      const double x = (i + 0.5) * s, y = (j + 0.5) * s;
      double sum = 0, scale = base;
      for (uint32_t oct = 0; oct < 7 && scale >= 3.0 * s; ++oct, scale /= 2)
        sum += scale * scale * ValueNoise(o.seed, oct, x / scale, y / scale);
      phi[size_t{j} * w.nx_ + i] = static_cast<float>(sum);
    }
  }
  // psi = -grad phi, in pixels per unit D; and the spread of its divergence,
  // which sets the D at which the first sheets collapse.
  w.psi_x_.resize(n);
  w.psi_y_.resize(n);
  auto at = [&](int64_t i, int64_t j) {
    i = std::clamp<int64_t>(i, 0, w.nx_ - 1);
    j = std::clamp<int64_t>(j, 0, w.ny_ - 1);
    return phi[static_cast<size_t>(j) * w.nx_ + static_cast<size_t>(i)];
  };
  for (int64_t j = 0; j < w.ny_; ++j) {
    for (int64_t i = 0; i < w.nx_; ++i) {
      const size_t k = static_cast<size_t>(j) * w.nx_ + static_cast<size_t>(i);
      w.psi_x_[k] = -(at(i + 1, j) - at(i - 1, j)) / (2.0f * s);
      w.psi_y_[k] = -(at(i, j + 1) - at(i, j - 1)) / (2.0f * s);
    }
  }
  double div2 = 0;
  for (uint32_t j = 1; j + 1 < w.ny_; ++j) {
    for (uint32_t i = 1; i + 1 < w.nx_; ++i) {
      const size_t k = size_t{j} * w.nx_ + i;
      const double d =
          (w.psi_x_[k + 1] - w.psi_x_[k - 1] + w.psi_y_[k + w.nx_] - w.psi_y_[k - w.nx_]) /
          (2.0 * s);
      div2 += d * d;
    }
  }
  const double rms = std::sqrt(div2 / std::max<double>(1, double(w.nx_ - 2) * (w.ny_ - 2)));
  w.collapse_d_ = rms > 0 ? static_cast<float>(1.0 / rms) : 1.0f;

  w.density_.resize(size_t{o.width} * o.height);
  w.blurred_.resize(w.density_.size());
  w.palette_.resize(kPaletteSize);
  for (size_t k = 0; k < kPaletteSize; ++k) {
    const float ratio = kMaxContrast * static_cast<float>(k) / (kPaletteSize - 1);
    w.palette_[k] = PaletteColour(std::log1p(ratio) / std::log1p(kMaxContrast));
  }
  return w;
}

void CosmicWeb::Render(uint64_t index, std::span<std::byte> out) {
  const uint32_t W = options_.width, H = options_.height, s = options_.particle_spacing;
  // Growth from well before to well after the first collapse.
  const float t = options_.frames > 1
                      ? static_cast<float>(index) / static_cast<float>(options_.frames - 1)
                      : 0.5f;
  const float d = collapse_d_ * (0.4f + 2.2f * t);
  std::fill(density_.begin(), density_.end(), 0.0f);
  for (uint32_t j = 0; j < ny_; ++j) {
    for (uint32_t i = 0; i < nx_; ++i) {
      const size_t k = size_t{j} * nx_ + i;
      const float x = (i + 0.5f) * s + d * psi_x_[k] - 0.5f;
      const float y = (j + 0.5f) * s + d * psi_y_[k] - 0.5f;
      if (!(x >= 0 && y >= 0 && x < W - 1 && y < H - 1)) continue;
      const auto xi = static_cast<uint32_t>(x), yi = static_cast<uint32_t>(y);
      const float fx = x - xi, fy = y - yi;
      float* p = &density_[size_t{yi} * W + xi];  // cloud-in-cell deposit
      p[0] += (1 - fx) * (1 - fy);
      p[1] += fx * (1 - fy);
      p[W] += (1 - fx) * fy;
      p[W + 1] += fx * fy;
    }
  }
  // 3x3 box blur, separable.
  for (uint32_t y = 0; y < H; ++y) {
    const float* r = &density_[size_t{y} * W];
    float* o = &blurred_[size_t{y} * W];
    for (uint32_t x = 0; x < W; ++x)
      o[x] = r[x] + (x > 0 ? r[x - 1] : r[x]) + (x + 1 < W ? r[x + 1] : r[x]);
  }
  const float mean_inverse =
      static_cast<float>(s * s) / 9.0f;  // one particle per s*s pixels, 9 taps
  const float to_index = (kPaletteSize - 1) / kMaxContrast * mean_inverse;
  for (uint32_t y = 0; y < H; ++y) {
    const float* up = &blurred_[size_t{y > 0 ? y - 1 : y} * W];
    const float* mid = &blurred_[size_t{y} * W];
    const float* down = &blurred_[size_t{y + 1 < H ? y + 1 : y} * W];
    std::byte* o = out.data() + size_t{y} * W * 3;
    for (uint32_t x = 0; x < W; ++x) {
      const float v = (up[x] + mid[x] + down[x]) * to_index;
      const auto& c = palette_[v >= kPaletteSize - 1 ? kPaletteSize - 1 : static_cast<size_t>(v)];
      std::byte* px = o + size_t{3} * x;
      px[0] = std::byte{c[0]};
      px[1] = std::byte{c[1]};
      px[2] = std::byte{c[2]};
    }
  }
}

void DrawNumber(std::span<std::byte> rgb, uint32_t width, uint32_t height, uint32_t x, uint32_t y,
                uint64_t value, uint32_t scale) {
  DrawText(rgb, width, height, x, y, std::to_string(value), scale);
}

}  // namespace tilestream
