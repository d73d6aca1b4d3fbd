// NIC failover for one tile rank (docs/streamer.md, "NIC failover"): looks
// at this server's NICs when the kernel reports a link or address event
// (common/net/link_watch.h), or when a tile's sends are refused as a NIC
// or route going away does (ENETDOWN, ENETUNREACH, EADDRNOTAVAIL), at most
// every kLookNs; moves the rank's tiles off NICs that are down, balanced
// over the NICs that are up (common/wall/nic_failover.h), and back once
// theirs returns. Logs each move. No MPI; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/net/link_watch.h"
#include "common/wall/wall_config.h"
#include "streamer/tile_stream.h"

namespace tilestream {

class NicFailover {
 public:
  static constexpr int64_t kLookNs = 100'000'000;

  // `server`: the server this rank runs on (its NICs are the ones it sees).
  NicFailover(const WallConfig& config, uint32_t server);

  // Looks when due and something may have changed; true when a tile moved
  // (its socket, and so its feedback fd, changed).
  bool Look(int64_t now_ns, const std::vector<std::unique_ptr<TileStream>>& streams);

 private:
  bool MaySeeChange(const std::vector<std::unique_ptr<TileStream>>& streams);

  const WallConfig& config_;
  uint32_t server_;
  std::optional<LinkWatch> watch_;
  std::vector<bool> nic_up_;
  int64_t next_look_ns_ = 0;
  uint64_t path_refusals_ = 0;  // the streams' ENETDOWN + ENETUNREACH + EADDRNOTAVAIL so far
};

}  // namespace tilestream
