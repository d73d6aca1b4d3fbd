// The swap sync's time-critical lines over UDP (docs/decisions.md, "Sync
// decisions that never wait for a lost segment"): the nodes' "complete"
// reports up, the coordinator's decisions down, and the round trip's
// "ping"/"pong". A lost TCP segment holds every later line back until TCP
// repairs it, two round trips or a 200 ms timeout later; a lost datagram
// costs nothing, because each one is sent kSyncCopies times and every
// decision datagram also carries the decisions before it. The TCP
// connection stays: it joins a node, gives it its key, carries everything
// else, and carries the same reports and decisions too, so that a wall
// whose UDP is blocked plays as before. Each side takes a line once,
// whichever way it came first.
//
// A datagram is text: "tsync KEY" (16 hex digits, the node's key, drawn
// for each sync connection and said in the reply to "sync NODE"), then one
// sync line per line. Datagrams come from anyone: a wrong key, a line too
// long, too many lines or bytes, and the datagram is refused whole.
// Plain logic, no sockets; not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "common/control/swap_sync.h"

namespace tilestream {

// Copies of each datagram: at 2% loss all three are lost once in 125,000.
inline constexpr int kSyncCopies = 3;
inline constexpr size_t kMaxSyncDatagram = 1200;  // under any path's MTU
inline constexpr size_t kMaxSyncDatagramLines = 16;

std::string FormatSyncKey(uint64_t key);
std::optional<uint64_t> ParseSyncKey(std::string_view hex);

// "tsync KEY\nLINE\nLINE...". REQUIRES: the lines fit kMaxSyncDatagram.
std::string FormatSyncDatagram(uint64_t key, std::string_view lines);

// A datagram's key and lines (views into it); nullopt if malformed.
struct SyncDatagram {
  uint64_t key = 0;
  std::array<std::string_view, kMaxSyncDatagramLines> lines;
  size_t count = 0;
};
std::optional<SyncDatagram> ParseSyncDatagram(std::string_view datagram);
// Its lines are views of the datagram: a temporary would leave them dangling.
std::optional<SyncDatagram> ParseSyncDatagram(std::string&& datagram) = delete;

// The decisions for one node (or the ticks opened for a leader, its
// decisions for the coordinator: common/control/tick_leader.h): each
// datagram carries the last kCarried lines, so that one lost on the way
// arrives with the next; the oldest are left out where they would not fit
// kMaxSyncDatagram.
class DecisionCarrier {
 public:
  static constexpr size_t kCarried = 8;
  void Add(const SyncEvent& e) { Add(FormatSyncEvent(e)); }
  void Add(std::string line);
  // "tsync KEY" and the lines carried, oldest first.
  std::string Datagram(uint64_t key) const;
  void Clear() { lines_.clear(); }

 private:
  std::deque<std::string> lines_;
};

// A node's decisions, each taken once and in tick order, whichever path
// brought it first: a decision for a tick at or before one already taken
// is a copy (or came too late to be shown in order) and is dropped.
class SyncEventFilter {
 public:
  bool Accept(const SyncEvent& e) {
    if (any_ && e.tick <= last_) return false;
    any_ = true;
    last_ = e.tick;
    return true;
  }
  // A new sync session: the coordinator's ticks start again.
  void Reset() { any_ = false; }

 private:
  bool any_ = false;
  uint64_t last_ = 0;
};

}  // namespace tilestream
