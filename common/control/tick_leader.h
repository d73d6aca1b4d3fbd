// The swap sync decided at the wall's side (docs/decisions.md, "How the
// wall decides at its side"): the coordinator names one display node the
// leader and sends it each tick as it opens it (its deadline, its moment
// and the tiles taking part); every node sends its "complete" reports to
// the leader over the wall's LAN; the leader decides by the master's rule
// (common/control/swap_sync.h: in tick order, shown once every tile taking
// part has it, else skipped, or partial, at the deadline; and skipped when
// the leader comes to it after its moment) and tells every
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

// How long after a led tick's deadline the coordinator waits for its
// decision before it gives the leader up (SwapSyncMaster::SetLedGrace):
// the decision's way back (its datagrams'), with the round trip's
// deviations, and 100 ms for a loaded machine's wake-ups. Every tick
// opened with a leader given up is skipped: a longer grace costs that
// many more ticks when a leader really goes.
inline int64_t LeaderGraceNs(int64_t sync_rtt_ns, int64_t sync_rttvar_ns) {
  return sync_rtt_ns + 4 * sync_rttvar_ns + 100'000'000;
}

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

// Where a node's LAN socket is: a numeric IPv4 or IPv6 address, a port.
struct LanPeer {
  std::string host;
  uint16_t port = 0;
};
// Who leads, said to every node but the leader: "leader HOST PORT KEY"
// (the leader's LAN socket, and the wall's key that every datagram on the
// LAN carries), or "leader none" (the coordinator decides); to the leader:
// "lead KEY TILES POLICY" (the wall's tiles, skip or partial), then "peer
// NODE HOST PORT" for each node its decisions go to. Each line says all of
// a node's part, so that a copy by datagram may come before or after the
// line. A node says "lan PORT" once it joined.
struct LeaderLine {
  std::optional<LanPeer> at;  // none: the coordinator decides
  uint64_t key = 0;
};
std::string FormatLeader(const LeaderLine& l);
std::optional<LeaderLine> ParseLeader(std::string_view line);
struct LeadLine {
  uint64_t key = 0;
  uint32_t tiles = 0;
  bool partial = false;
};
std::string FormatLead(const LeadLine& l);
std::optional<LeadLine> ParseLead(std::string_view line);
struct PeerLine {
  uint32_t node = 0;
  LanPeer at;
};
std::string FormatPeer(const PeerLine& p);
std::optional<PeerLine> ParsePeer(std::string_view line);

std::string FormatTiles(const std::vector<bool>& tiles);
// A set of `tiles` tiles; false if malformed or naming a tile beyond.
bool ParseTiles(std::string_view hex, uint32_t tiles, std::vector<bool>* out);
std::string FormatOpen(const OpenedTick& t);
std::optional<OpenedTick> ParseOpen(std::string_view line, uint32_t tiles);
// "gone TILES": tiles whose node left the sync (its connection closed);
// the leader waits for them in no tick opened before.
std::string FormatGone(const std::vector<bool>& tiles);
std::optional<std::vector<bool>> ParseGone(std::string_view line, uint32_t tiles);
std::string FormatDecided(const LeaderDecision& d);
std::optional<LeaderDecision> ParseDecided(std::string_view line, uint32_t tiles);

// The leader also leaves a tile out as the master does: after drop_after
// ticks in a row it decided without the tile complete, it waits for the
// tile in no tick until the tile reports one still undecided (in time
// again). The master, adopting the same decisions with the same tiles
// complete, leaves it out at the same tick; without this, every tick
// already opened with a dead tile would wait for it to its deadline.
class TickLeader {
 public:
  TickLeader(uint32_t tiles, bool partial_policy, uint32_t drop_after = 3);

  // A tick opened: its copies, and ticks at or before the newest opened,
  // are ignored.
  void Open(const OpenedTick& t);
  // Tile has the tick of `timestamp` complete at now_ns; a report that
  // comes before the tick's open (its way was quicker) is kept for it. A
  // tile left out is taken back by a report before its tick's deadline,
  // even of a tick already decided without it: one that completes just
  // after the others would otherwise never come back.
  void Complete(uint32_t tile, uint32_t timestamp, int64_t now_ns);
  uint32_t tiles() const { return tiles_; }
  // Tiles whose node left the sync: no tick waiting waits for them.
  void Gone(const std::vector<bool>& tiles);
  // Appends the decisions due at now_ns (the deadlines' clock), in order.
  void Decide(int64_t now_ns, std::vector<LeaderDecision>* out);
  // When Decide next has something to do at the latest (INT64_MAX: nothing).
  int64_t next_deadline_ns() const;
  // Ticks skipped because the leader decided them after their moment (it
  // was stopped, or woke late): shown, each node would show them late.
  uint64_t skipped_late() const { return skipped_late_; }
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
  void CountMisses(const Pending& p);

  uint32_t tiles_;
  bool partial_;
  uint32_t drop_after_;
  std::vector<uint32_t> misses_;  // in a row, per tile
  std::vector<bool> left_out_;
  std::deque<Pending> pending_;
  std::vector<Recent> recent_;
  struct Decided {
    uint32_t timestamp = 0;
    int64_t deadline_ns = 0;
  };
  std::array<Decided, 8> decided_{};  // the last decided, a ring
  size_t next_decided_ = 0;
  bool opened_any_ = false;
  uint64_t skipped_late_ = 0;
  uint64_t newest_ = 0;  // tick
};

}  // namespace tilestream
