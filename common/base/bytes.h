// Big-endian loads and stores through memcpy: safe on unaligned, untrusted
// buffers. REQUIRES: the pointer addresses at least the accessed bytes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tilestream {

inline uint16_t LoadBE16(const std::byte* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return std::endian::native == std::endian::little ? __builtin_bswap16(v) : v;
}

inline uint32_t LoadBE32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return std::endian::native == std::endian::little ? __builtin_bswap32(v) : v;
}

inline void StoreBE16(std::byte* p, uint16_t v) {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap16(v);
  std::memcpy(p, &v, sizeof v);
}

inline void StoreBE32(std::byte* p, uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  std::memcpy(p, &v, sizeof v);
}

}  // namespace tilestream
