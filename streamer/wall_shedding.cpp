#include "streamer/wall_shedding.h"

#include <spdlog/spdlog.h>

#include <cstdint>

#include "common/wall/nic_failover.h"

namespace tilestream {

void ShedForNics(const WallConfig& c, const std::vector<uint32_t>& nic_of_tile,
                 const std::vector<double>& capacity_bps, TickShedder* shedder) {
  const double before = shedder->ceiling();
  shedder->SetCeiling(FailoverCeiling(c, nic_of_tile, capacity_bps));
  if (shedder->ceiling() < before)
    spdlog::warn(
        "the NICs streaming now carry {:.0f}% of the wall's rate: sending {:.0f}% of the "
        "ticks, the same on every tile",
        100 * shedder->ceiling(), 100 * shedder->keep());
  else if (shedder->ceiling() > before)
    spdlog::info("the NICs streaming now carry {:.0f}% of the wall's rate",
                 100 * shedder->ceiling());
}

void ShedForOverload(const std::vector<StreamSummary>& streams, TickShedder* shedder) {
  uint64_t sent = 0, skipped = 0;
  for (const StreamSummary& s : streams) {
    sent += s.frames;
    skipped += s.skipped_ticks;
  }
  const double before = shedder->keep();
  shedder->Look(sent, skipped, static_cast<uint32_t>(streams.size()));
  if (shedder->keep() < before)
    spdlog::warn(
        "the tile ranks skipped {} of {} tile frames: sending {:.0f}% of the ticks, the same "
        "on every tile",
        skipped, sent + skipped, 100 * shedder->keep());
  else if (shedder->keep() >= 1.0 && before < 1.0)
    spdlog::info("the tile ranks keep up again: sending every tick");
}

}  // namespace tilestream
