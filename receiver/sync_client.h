// A display node's swap-sync connection to the streamer's coordinator
// (docs/control.md): "sync NODE" once connected, then "complete" for every
// frame a tile has whole and "shown" for every tick presented; back come
// the decisions (present, skip, partial) for each tick.
//
// The time-critical lines (complete, the decisions, ping and pong) also go
// as datagrams when the coordinator gives the connection a key
// (common/control/sync_datagram.h): a decision comes whichever way is
// first, once.
//
// The coordinator may start after the receiver, stop and start again: Poll
// connects when it is not connected, at most four times a second, and until it is
// subscribed the node shows frames as they come (unsynced). Report* may be
// called from any thread (the tiles' network threads); Poll (or WaitForInput
// then Read) from one.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/base/pi_mutex.h"
#include "common/base/rtt_estimate.h"
#include "common/base/unique_fd.h"
#include "common/control/swap_sync.h"
#include "common/control/sync_datagram.h"
#include "common/net/line_channel.h"
#include "common/wire/rfc4175.h"

namespace tilestream {

struct SyncClientOptions {
  std::string address;  // the coordinator's control address
  uint16_t port = 0;
  std::string token;  // sent as "auth TOKEN" first when not empty
  std::string node;   // this display node's name in the config
  // This node's tile size, said at the join ("sync NODE WxH") so that the
  // coordinator refuses a node that assumed another size; 0x0: not said.
  TileGeometry tile;
};

class SyncClient {
 public:
  explicit SyncClient(SyncClientOptions options) : options_(std::move(options)) {}

  // Waits up to timeout_ms for decisions and appends them; (re)connects
  // when due. Prints one line when the connection comes or goes.
  void Poll(int timeout_ms, std::vector<SyncEvent>* events) {
    if (WaitForInput(timeout_ms)) Read(events);
  }
  // Poll in two halves, so that a caller can time the work apart from the
  // wait: true when there is something to read (or a line to flush).
  bool WaitForInput(int timeout_ms);
  void Read(std::vector<SyncEvent>* events);
  // The coordinator has taken this node into the sync.
  bool subscribed() const;
  // The wall's playout latency, as the coordinator last said ("latency
  // NS"); 0: none said.
  int64_t latency_ns() const { return latency_ns_.load(std::memory_order_relaxed); }
  // The round trip the coordinator measured to this node ("rtt"): the
  // tiles' repairs wait that long to ask again until they measured theirs.
  const SharedRtt* rtt() const { return &rtt_; }
  // Decisions taken, by the way that brought each first.
  uint64_t decisions_by_datagram() const { return by_datagram_.load(std::memory_order_relaxed); }
  uint64_t decisions_by_tcp() const { return by_tcp_.load(std::memory_order_relaxed); }

  void ReportComplete(uint32_t tile, uint32_t timestamp);
  void ReportShown(uint32_t tile, uint32_t timestamp, int64_t shown_ns);
  void ReportStats(uint32_t tile, const TileRepairStats& stats);
  // A control command (the window's keys); its reply is printed only if it
  // is an error.
  void SendCommand(const std::string& line);

 private:
  void Connect();
  void Lost(const std::string& why);
  void Send(const std::string& line);
  // The reply to "sync NODE": subscribed, with datagrams if it gave a key.
  void Subscribed(const std::string& key);
  // The decisions and pings that came as datagrams.
  void ReadDatagrams(std::vector<SyncEvent>* events);
  void Take(const SyncEvent& e, bool by_datagram, std::vector<SyncEvent>* events) {
    if (!filter_.Accept(e)) return;
    events->push_back(e);
    (by_datagram ? by_datagram_ : by_tcp_).fetch_add(1, std::memory_order_relaxed);
  }

  SyncClientOptions options_;
  mutable PiMutex mu_;  // guards channel_, udp_ and subscribed_; Poll may run real-time
  LineChannel channel_;
  UniqueFd udp_;  // connected to the coordinator's port; invalid: TCP alone
  uint64_t udp_key_ = 0;
  SyncEventFilter filter_;  // Poll's thread only
  bool subscribed_ = false;
  int64_t next_attempt_ns_ = 0;
  std::string last_error_;  // printed once until it changes
  std::atomic<int64_t> latency_ns_{0};
  SharedRtt rtt_;
  std::atomic<uint64_t> by_datagram_{0}, by_tcp_{0};
};

}  // namespace tilestream
