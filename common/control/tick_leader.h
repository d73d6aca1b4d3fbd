// The swap sync decided at the wall's side (docs/decisions.md, "How the
// wall decides at its side"): the coordinator names one display node the
// leader and sends it each tick as it opens it (its deadline, its moment
// and the tiles taking part); every node sends its "complete" reports to
// the leader over the wall's LAN; the leader decides by the master's rule
// (common/control/swap_sync.h: in tick order, shown once every tile taking
// part has it, else skipped, or partial, at the deadline) and tells every
// node, and the coordinator, which counts the decision as its own. The
// report and the decision then cross the LAN, not the path to the server:
// the playout latency saves a round trip of that path.
//
// A tick is decided only by the leader it was opened with (the
// coordinator's SwapSyncMaster waits for it), so no two deciders can split
// a tick. The lines, coordinator to leader: "open TS TICK DEADLINE_NS AT_NS
// TILES"; leader to coordinator: "decided DECISION TILES", DECISION a
// decision's line (FormatSyncEvent) and TILES the tiles complete at the
// decision. TILES is hex, 4 tiles a digit, tile 0 the first digit's lowest
// bit. Parsers take untrusted text: nullopt on anything malformed. Plain
// logic, no sockets; not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/control/swap_sync.h"

namespace tilestream {

// A wall of more tiles is decided by its coordinator: the lines would not
// fit a sync datagram with the ones they carry.
inline constexpr uint32_t kMaxLedTiles = 256;

struct OpenedTick {
  uint64_t tick = 0;
  uint32_t timestamp = 0;
  int64_t deadline_ns = 0;   // CLOCK_REALTIME, the nodes' synchronised clock
  int64_t at_ns = 0;         // when it is shown, the same clock
  std::vector<bool> takers;  // per tile
};

struct LeaderDecision {
  SyncEvent event;
  std::vector<bool> complete;  // per tile, when it was decided
};

std::string FormatTiles(const std::vector<bool>& tiles);
// A set of `tiles` tiles; false if malformed or naming a tile beyond.
bool ParseTiles(std::string_view hex, uint32_t tiles, std::vector<bool>* out);
std::string FormatOpen(const OpenedTick& t);
std::optional<OpenedTick> ParseOpen(std::string_view line, uint32_t tiles);
std::string FormatDecided(const LeaderDecision& d);
std::optional<LeaderDecision> ParseDecided(std::string_view line, uint32_t tiles);

class TickLeader {
 public:
  TickLeader(uint32_t tiles, bool partial_policy);

  // A tick opened: its copies, and ticks at or before the newest opened,
  // are ignored.
  void Open(const OpenedTick& t);
  // Tile has the tick of `timestamp` complete; a report that comes before
  // the tick's open (its way was quicker) is kept for it.
  void Complete(uint32_t tile, uint32_t timestamp);
  // Appends the decisions due at now_ns (the deadlines' clock), in order.
  void Decide(int64_t now_ns, std::vector<LeaderDecision>* out);
  // When Decide next has something to do at the latest (INT64_MAX: nothing).
  int64_t next_deadline_ns() const;
  // No longer leading: every tick undecided forgotten (the coordinator
  // skips them).
  void Reset();

 private:
  static constexpr size_t kMaxPending = 256;
  struct Pending {
    OpenedTick t;
    std::vector<bool> complete;
  };
  struct Recent {  // the last timestamps a tile reported complete
    std::array<uint32_t, 16> timestamps{};
    size_t next = 0, count = 0;
  };
  bool AllComplete(const Pending& p) const;
  bool Reported(uint32_t tile, uint32_t timestamp) const;

  uint32_t tiles_;
  bool partial_;
  std::deque<Pending> pending_;
  std::vector<Recent> recent_;
  bool opened_any_ = false;
  uint64_t newest_ = 0;  // tick
};

}  // namespace tilestream
