#include "common/image/png.h"

#include <fmt/format.h>
#include <png.h>

namespace tilestream {

Result<std::string> EncodePng(uint32_t width, uint32_t height, std::span<const std::byte> rgb) {
  if (width == 0 || height == 0 || rgb.size() < size_t{width} * height * 3)
    return Status::InvalidArgument("png: no pixels");
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  const auto stride = static_cast<png_int_32>(width * 3);
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, rgb.data(), stride, nullptr))
    return Status::Internal(std::string("png: ") + image.message);
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, rgb.data(), stride, nullptr))
    return Status::Internal(std::string("png: ") + image.message);
  out.resize(size);
  return out;
}

Result<Image> ReadPng(const std::string& path, uint64_t max_pixels) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    return Status::InvalidArgument(path + ": " + image.message);
  if (uint64_t{image.width} * image.height > max_pixels) {
    png_image_free(&image);
    return Status::InvalidArgument(fmt::format("{}: {}x{} is more than {} pixels", path,
                                               image.width, image.height, max_pixels));
  }
  image.format = PNG_FORMAT_RGB;
  Image out;
  out.width = image.width;
  out.height = image.height;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  const png_color black{0, 0, 0};  // under what was transparent
  if (!png_image_finish_read(&image, &black, out.rgb.data(), 0, nullptr))
    return Status::InvalidArgument(path + ": " + image.message);
  return out;
}

}  // namespace tilestream
