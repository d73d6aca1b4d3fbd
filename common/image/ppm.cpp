#include "common/image/ppm.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iterator>

namespace tilestream {
namespace {

// Reads the next whitespace-separated decimal header field, skipping
// comments. Returns false on anything else.
bool NextField(std::span<const std::byte> d, size_t* pos, uint64_t* out) {
  while (*pos < d.size()) {
    const char c = static_cast<char>(d[*pos]);
    if (c == '#') {
      while (*pos < d.size() && static_cast<char>(d[*pos]) != '\n') ++*pos;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++*pos;
    } else {
      break;
    }
  }
  uint64_t v = 0;
  size_t digits = 0;
  while (*pos < d.size() && digits < 10) {
    const char c = static_cast<char>(d[*pos]);
    if (c < '0' || c > '9') break;
    v = v * 10 + static_cast<uint64_t>(c - '0');
    ++*pos;
    ++digits;
  }
  *out = v;
  const bool more =
      *pos < d.size() && static_cast<char>(d[*pos]) >= '0' && static_cast<char>(d[*pos]) <= '9';
  return digits > 0 && !more;
}

}  // namespace

Result<Image> ParsePpm(std::span<const std::byte> d, const std::string& name) {
  if (d.size() < 2 || static_cast<char>(d[0]) != 'P' || static_cast<char>(d[1]) != '6')
    return Status::InvalidArgument(name + ": not a binary PPM (P6) image");
  size_t pos = 2;
  uint64_t w = 0, h = 0, maxval = 0;
  if (!NextField(d, &pos, &w) || !NextField(d, &pos, &h) || !NextField(d, &pos, &maxval))
    return Status::InvalidArgument(name + ": malformed PPM header");
  if (maxval != 255)
    return Status::Unsupported(
        fmt::format("{}: PPM maxval {} (only 8-bit, 255, is supported)", name, maxval));
  if (w == 0 || h == 0 || w > 65535 || h > 65535)
    return Status::InvalidArgument(fmt::format("{}: PPM size {}x{} is out of range", name, w, h));
  if (pos >= d.size()) return Status::InvalidArgument(name + ": PPM has no pixel data");
  ++pos;  // the single whitespace byte after maxval
  const size_t bytes = w * h * 3;
  if (d.size() - pos < bytes)
    return Status::InvalidArgument(
        fmt::format("{}: PPM {}x{} needs {} bytes of pixels, the file has {}", name, w, h, bytes,
                    d.size() - pos));
  Image img;
  img.width = static_cast<uint32_t>(w);
  img.height = static_cast<uint32_t>(h);
  img.rgb.assign(d.begin() + static_cast<ptrdiff_t>(pos),
                 d.begin() + static_cast<ptrdiff_t>(pos + bytes));
  return img;
}

Result<Image> ReadPpm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path, errno);
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::IoError(path, errno);
  return ParsePpm({reinterpret_cast<const std::byte*>(data.data()), data.size()}, path);
}

Status WritePpm(const std::string& path, uint32_t width, uint32_t height,
                std::span<const std::byte> rgb) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Status::IoError(path, errno);
  const std::string header = fmt::format("P6\n{} {}\n255\n", width, height);
  const bool ok =
      std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
      std::fwrite(rgb.data(), 1, size_t{width} * height * 3, f) == size_t{width} * height * 3;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) return Status::IoError(path, ok ? errno : err);
  return Status::Ok();
}

}  // namespace tilestream
