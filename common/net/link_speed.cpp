#include "common/net/link_speed.h"

#include <net/if.h>

#include <charconv>
#include <fstream>

namespace tilestream {

std::optional<double> KernelLinkSpeedBps(std::string_view interface, const std::string& sysfs_net) {
  if (interface.empty() || interface.size() >= IFNAMSIZ || interface == "." || interface == ".." ||
      interface.find('/') != std::string_view::npos)
    return std::nullopt;
  std::ifstream in(sysfs_net + "/" + std::string(interface) + "/speed");
  std::string text;
  // Reading fails for loopback and a link that is down (EINVAL).
  if (!in || !std::getline(in, text) || text.size() > 16) return std::nullopt;
  long long mbps = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), mbps);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (mbps <= 0 || mbps > 100'000'000) return std::nullopt;  // -1: SPEED_UNKNOWN
  return static_cast<double>(mbps) * 1e6;
}

}  // namespace tilestream
