#include "common/wall/ipv4_subnet.h"

#include <arpa/inet.h>

#include <string>

namespace tilestream {

std::optional<Ipv4Subnet> Ipv4Subnet::Parse(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view prefix = text.substr(slash + 1);
  if (prefix.empty() || prefix.size() > 2) return std::nullopt;
  int bits = 0;
  for (char ch : prefix) {
    if (ch < '0' || ch > '9') return std::nullopt;
    bits = bits * 10 + (ch - '0');
  }
  in_addr address{};
  if (bits > 32 || inet_pton(AF_INET, std::string(text.substr(0, slash)).c_str(), &address) != 1)
    return std::nullopt;
  const uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return Ipv4Subnet{ntohl(address.s_addr) & mask, mask};
}

}  // namespace tilestream
