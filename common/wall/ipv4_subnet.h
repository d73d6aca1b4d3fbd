// An IPv4 subnet written "10.99.0.0/24" (the config's [mpi] network).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tilestream {

struct Ipv4Subnet {
  uint32_t base = 0;  // host byte order, already masked
  uint32_t mask = 0;  // host byte order

  // nullopt unless `text` is a dotted quad, a slash and a prefix of 0..32.
  static std::optional<Ipv4Subnet> Parse(std::string_view text);
  // `address` in host byte order.
  bool Contains(uint32_t address) const { return (address & mask) == base; }
};

}  // namespace tilestream
