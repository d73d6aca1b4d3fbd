// Says in the log when the kernel starts refusing a tile's sends, by errno
// (common/net/send_errors.h), and how many it refused while it lasts: a
// line when a kind starts, one a minute with the count while it goes on,
// one when a minute passed without any. Nothing per datagram: it reads the
// counters the tile ranks report. No MPI; not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/net/send_errors.h"

namespace tilestream {

class RefusalLog {
 public:
  static constexpr int64_t kPeriodNs = 60'000'000'000;

  explicit RefusalLog(size_t tiles) : kinds_(tiles) {}

  struct Line {
    bool warning = false;  // a kind started or goes on; else it stopped
    std::string text;
  };
  // Looks at tile `tile`'s counters at `now_ns`; appends the lines to log.
  void Look(size_t tile, const std::string& tile_name, const RefusalCounts& refusals,
            int64_t now_ns, std::vector<Line>* lines);

 private:
  struct Kind {
    bool active = false;
    int64_t logged_ns = 0;
    uint64_t logged = 0;  // the count at the last line
  };
  std::vector<std::array<Kind, RefusalCounts::kSlots>> kinds_;
};

}  // namespace tilestream
