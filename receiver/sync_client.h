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
// With a playout latency the ticks may be decided at the wall's side
// (common/control/tick_leader.h): the node binds a LAN socket and says its
// port; the coordinator says who leads. A node reports each complete frame
// to the leader too, over the LAN, and takes the leader's decisions from
// it; the node that leads decides the ticks the coordinator opens with it,
// at their deadlines (Poll's caller wakes for them: lead_due_ns).
//
// The coordinator may start after the receiver, stop and start again: Poll
// connects when it is not connected, at most four times a second, and until it is
// subscribed the node shows frames as they come (unsynced). Report* may be
// called from any thread (the tiles' network threads); Poll (or WaitForInput
// then Read) from one.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/pi_mutex.h"
#include "common/base/rtt_estimate.h"
#include "common/base/unique_fd.h"
#include "common/control/swap_sync.h"
#include "common/control/sync_datagram.h"
#include "common/control/tick_leader.h"
#include "common/net/line_channel.h"
#include "common/net/udp_socket.h"
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
    if (WaitForInput(timeout_ms) || lead_due_ns() <= RealtimeNs()) Read(events);
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
  // How many copies of a first request the tiles send, as the coordinator
  // last said ("nack_copies N", 1 or 2); 1: none said.
  int nack_copies() const { return nack_copies_.load(std::memory_order_relaxed); }
  // The round trip the coordinator measured to this node ("rtt"): the
  // tiles' repairs wait that long to ask again until they measured theirs.
  const SharedRtt* rtt() const { return &rtt_; }
  // Decisions taken, by the way that brought each first.
  uint64_t decisions_by_datagram() const { return by_datagram_.load(std::memory_order_relaxed); }
  uint64_t decisions_by_tcp() const { return by_tcp_.load(std::memory_order_relaxed); }
  uint64_t decisions_by_lan() const { return by_lan_.load(std::memory_order_relaxed); }
  // Leading: ticks decided here, and those skipped for coming to them after
  // their moment.
  uint64_t ticks_led() const { return led_.load(std::memory_order_relaxed); }
  uint64_t led_late() const { return led_late_.load(std::memory_order_relaxed); }
  // When (CLOCK_REALTIME) the ticks this node leads are next due to be
  // decided (INT64_MAX: none, or not leading); Read decides them. Poll's
  // thread.
  int64_t lead_due_ns() const { return leader_ ? leader_->next_deadline_ns() : INT64_MAX; }

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
  enum class Way : uint8_t { kTcp, kDatagram, kLan };
  void Take(const SyncEvent& e, Way way, std::vector<SyncEvent>* events) {
    if (!filter_.Accept(e)) return;
    events->push_back(e);
    (way == Way::kTcp        ? by_tcp_
     : way == Way::kDatagram ? by_datagram_
                             : by_lan_)
        .fetch_add(1, std::memory_order_relaxed);
  }
  // A line from the coordinator, either way: a decision, or the leader's.
  // False: neither.
  bool TakeLine(std::string_view line, Way way, std::vector<SyncEvent>* events);
  // Who leads, and the lines to the leader (common/control/tick_leader.h).
  bool TakeLeaderLine(std::string_view line);
  // The LAN's datagrams: reports, for the leader; the leader's decisions.
  void ReadLan(std::vector<SyncEvent>* events);
  // Leading: the decisions due, taken here and sent to every node and the
  // coordinator.
  void Lead(std::vector<SyncEvent>* events);
  void OpenLan();

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
  std::atomic<int> nack_copies_{1};
  SharedRtt rtt_;
  std::atomic<uint64_t> by_datagram_{0}, by_tcp_{0}, by_lan_{0}, led_{0}, led_late_{0};
  // The wall's LAN (guarded by mu_: the tiles' threads report to the
  // leader): its socket, the leader's, the wall's key.
  UniqueFd lan_;
  uint16_t lan_port_ = 0;
  std::optional<SocketAddress> leader_at_;
  uint64_t wall_key_ = 0;
  // Leading (Poll's thread): the ticks, where each node's LAN socket is,
  // and the lines each datagram carries.
  std::unique_ptr<TickLeader> leader_;
  std::vector<std::optional<SocketAddress>> peers_;  // by node
  DecisionCarrier lan_carrier_, decided_carrier_;
  std::vector<LeaderDecision> decided_;
};

}  // namespace tilestream
