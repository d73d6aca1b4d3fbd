// A NIC's speed as the kernel reports it: /sys/class/net/NAME/speed, which
// the kernel fills from the driver's ETHTOOL_GLINKSETTINGS, in Mbit/s.
// Loopback, a virtio NIC that reports none, a link that is down or a name
// that is no interface have no known speed (nullopt): nothing is assumed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tilestream {

// Bits per second, or nullopt when unknown. `sysfs_net` is where the
// interfaces' directories are (tests point it elsewhere). The name is
// checked first (1..15 characters, no '/', not "." or ".."): it comes
// from a config.
std::optional<double> KernelLinkSpeedBps(std::string_view interface,
                                         const std::string& sysfs_net = "/sys/class/net");

}  // namespace tilestream
