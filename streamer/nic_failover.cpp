#include "streamer/nic_failover.h"

#include <spdlog/spdlog.h>

#include <cerrno>

#include "common/wall/nic_failover.h"

namespace tilestream {

NicFailover::NicFailover(const WallConfig& config, uint32_t server)
    : config_(config), server_(server), nic_up_(config.nics.size(), true) {
  if (auto w = LinkWatch::Open(); w.ok())
    watch_.emplace(std::move(w).value());
  else  // refused sends still make it look
    spdlog::warn("NIC failover: no link events ({}); looking when sends are refused",
                 w.status().message());
}

bool NicFailover::MaySeeChange(const std::vector<std::unique_ptr<TileStream>>& streams) {
  uint64_t refusals = 0;
  for (const auto& s : streams) {
    const RefusalCounts& r = s->sender().socket().stats().refusals;
    refusals += r.of(ENETDOWN) + r.of(ENETUNREACH) + r.of(EADDRNOTAVAIL);
  }
  const bool refused = refusals != path_refusals_;
  path_refusals_ = refusals;
  const bool event = watch_ && watch_->Changed();
  return event || refused;
}

bool NicFailover::Look(int64_t now_ns, const std::vector<std::unique_ptr<TileStream>>& streams) {
  if (now_ns < next_look_ns_) return false;
  next_look_ns_ = now_ns + kLookNs;
  if (!MaySeeChange(streams)) return false;
  for (size_t n = 0; n < config_.nics.size(); ++n)
    if (config_.nics[n].server == server_)
      nic_up_[n] = NicUsable(config_.nics[n].name, config_.nics[n].address);
  const std::vector<uint32_t> plan = FailoverNics(config_, nic_up_);
  bool moved = false;
  for (const auto& s : streams) {
    const uint32_t tile = s->tile(), from = s->nic(), to = plan[tile];
    if (to == from) continue;
    const std::string name = TileId::FromIndex(tile, config_.wall.layout).Name();
    if (const Status st = s->MoveTo(to); !st.ok()) {
      spdlog::error("tile {}: cannot move to NIC {}: {}", name, config_.nic_label(to),
                    st.message());
      continue;
    }
    moved = true;
    if (to == config_.routes[tile].nic)
      spdlog::info("tile {}: NIC {} is back: streaming from it again", name, config_.nic_label(to));
    else
      spdlog::warn("tile {}: NIC {} is down: streaming from {}", name,
                   config_.nic_label(config_.routes[tile].nic), config_.nic_label(to));
  }
  return moved;
}

}  // namespace tilestream
