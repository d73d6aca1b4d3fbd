// The state of this host's network interfaces, for moving tile streams off
// a NIC that goes down (docs/streamer.md, "NIC failover"). LinkWatch
// listens to the kernel's link and address events (rtnetlink) without
// blocking: a look costs one system call, and says only whether anything
// changed; NicUsable then reads the state itself. Not thread-safe.
#pragma once

#include <string>

#include "common/base/result.h"
#include "common/base/unique_fd.h"

namespace tilestream {

class LinkWatch {
 public:
  static Result<LinkWatch> Open();
  // Whether a link or address event came since the last call (reads them
  // all; never blocks).
  bool Changed();

 private:
  UniqueFd fd_;
};

// Whether interface `name` is up with a carrier (IFF_UP and IFF_RUNNING)
// and holds `address` (when not empty). `name` "default" (no interface of
// its own): only the address counts.
bool NicUsable(const std::string& name, const std::string& address);

}  // namespace tilestream
