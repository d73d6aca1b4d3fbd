#include "common/net/link_watch.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace tilestream {

Result<LinkWatch> LinkWatch::Open() {
  LinkWatch w;
  w.fd_.reset(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE));
  if (!w.fd_.valid()) return Status::IoError("netlink socket", errno);
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  local.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
  if (bind(w.fd_.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)
    return Status::IoError("netlink bind", errno);
  return w;
}

bool LinkWatch::Changed() {
  std::array<char, 8192> buffer;
  bool changed = false;
  for (;;) {
    const ssize_t n = recv(fd_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n > 0) {
      changed = true;
      continue;
    }
    // ENOBUFS: events were lost, so something changed.
    return changed || (n < 0 && errno == ENOBUFS);
  }
}

namespace {

bool SameAddress(const sockaddr* a, const std::string& address) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, text, sizeof text);
  else if (a->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, text, sizeof text);
  return address == text;
}

}  // namespace

bool NicUsable(const std::string& name, const std::string& address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return true;  // cannot tell: leave the tiles where they are
  const bool any_device = name == "default";
  bool up = any_device, holds = address.empty();
  for (const ifaddrs* i = list; i; i = i->ifa_next) {
    if (!any_device && std::strcmp(i->ifa_name, name.c_str()) != 0) continue;
    if (!any_device) up = (i->ifa_flags & IFF_UP) && (i->ifa_flags & IFF_RUNNING);
    if (i->ifa_addr && !holds) holds = SameAddress(i->ifa_addr, address);
  }
  freeifaddrs(list);
  return up && holds;
}

}  // namespace tilestream
