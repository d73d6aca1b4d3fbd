// The coordinator's TCP listener (docs/control.md): one line per command,
// one JSON line per reply, for wallctl and the joystick client; and the
// display nodes' swap-sync connections, which say "sync NODE" and then
// speak the sync lines of common/control/swap_sync.h.
//
// Single-threaded: Poll() waits on the listener and every client, reads,
// answers, and returns; the coordinator calls it instead of sleeping. A
// client that breaks a limit (line length, slow reader, wrong token) is
// closed alone; nothing a client sends can stop the server. At most
// control.max_clients at once, and two more for each display node of the
// config, from its address only: however many others connect, a node can
// join the swap sync. When full, a new connection takes the place of the
// stalest command connection (the oldest line under way, else the longest
// without a line), so that slow or idle clients cannot keep a good one out. Lines of at most
// control.max_line_bytes, ended within control.line_timeout_s of their first byte; a command
// connection without a whole line for control.idle_timeout_s is closed (sync connections talk every
// tick). The sync's time-critical lines also come and go as datagrams on
// the same port number (common/control/sync_datagram.h). Not thread-safe.
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/base/rtt_estimate.h"
#include "common/control/control_port_limits.h"
#include "common/control/swap_sync.h"
#include "common/control/sync_datagram.h"
#include "common/net/line_channel.h"
#include "common/net/udp_socket.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// Answers one command line (not "auth" or "sync") with one JSON line.
using CommandHandler = std::function<std::string(const std::string& line)>;

class ControlServer {
 public:
  static constexpr size_t kLinesPerPoll = 32;    // per client
  static constexpr size_t kAcceptsPerPoll = 64;  // new connections

  // Listens on the config's control address and port; reads the token file
  // when the config names one (then every client must "auth TOKEN" first).
  static Result<std::unique_ptr<ControlServer>> Open(const WallConfig& config, SwapSyncMaster* sync,
                                                     CommandHandler handler);

  // Waits until input arrives or timeout_ns passed, and handles it.
  void Poll(int64_t timeout_ns);
  // Poll in two: the wait, then the handling, which must follow it.
  void WaitForInput(int64_t timeout_ns);
  void Serve();
  // Poll also wakes when `fd` is readable, and then calls on_readable (the
  // HTTP side's mailbox, streamer/http_api.h).
  void Watch(int fd, std::function<void()> on_readable) {
    watched_.push_back({fd, std::move(on_readable)});
  }
  // Sends sync decisions to every synced display node.
  void SendSync(const std::vector<SyncEvent>& events);
  uint16_t port() const { return port_; }
  size_t synced_nodes() const;
  // Asks every synced node for a round trip ("ping"; once a second).
  void PingSyncNodes();
  // Tells every synced node the playout latency ("latency NS"), now and
  // whenever a node joins.
  void SetLatency(int64_t ns);
  // The round trip measured on node `node`'s sync connection (none: zero),
  // and the largest over the synced nodes, for the playout latency.
  RttEstimate NodeRtt(uint32_t node) const;
  RttEstimate LargestRtt() const;

  // What each tile's receiver said last (its "stats" line), for status.
  struct ReceiverTileStats {
    bool known = false;
    TileRepairStats stats;  // frames: shown in its last second
  };
  const std::vector<ReceiverTileStats>& receiver_stats() const { return receiver_stats_; }
  // Why display node `node` (config order) was last refused at its join;
  // empty once it joined, or never refused.
  const std::string& NodeRefusal(uint32_t node) const { return refusals_[node]; }

 private:
  struct Client {
    LineChannel channel;
    bool authorised = false;
    int node = -1;             // the display node this connection syncs, or -1
    ControlLineTimes times;    // its last whole line, the line under way
    uint64_t accepted_in = 0;  // the Accept call that took it
    RttEstimate rtt;           // a sync connection's, from ping to pong
    // A sync connection's datagrams (common/control/sync_datagram.h): its
    // key, where its datagrams come from (length 0: none yet), and the
    // decisions each datagram to it carries.
    uint64_t udp_key = 0;
    sockaddr_storage udp_peer{};
    socklen_t udp_peer_length = 0;
    DecisionCarrier carrier;
  };

  ControlServer(const WallConfig& config, SwapSyncMaster* sync, CommandHandler handler)
      : config_(config),
        sync_(sync),
        handler_(std::move(handler)),
        refusals_(config.nodes.size()) {}
  void Accept();
  // Whether another connection from `peer` may be taken now; when full,
  // the stalest command connection is closed for it.
  bool Admits(const sockaddr_storage& peer);
  // Handles the lines waiting from `c` (kLinesPerPoll at most).
  void HandleLines(Client& c, int64_t now);
  // Closes a client past its line or idle bound.
  void EnforceDeadlines(Client& c, int64_t now);
  void Handle(Client& client, const std::string& line);
  // `sync NODE [WxH]`: the node joins, if its tiles are the wall's size.
  void Subscribe(Client& client, std::string_view words);
  // Why the node of a join saying tiles of `said` is refused; empty: it
  // may join. Said once on the streamer's log per node and reason.
  std::string GeometryRefusal(uint32_t node, std::string_view said);
  // The sync reports and round trips that came as datagrams.
  void ReceiveSyncDatagrams();
  void HandleSyncReport(Client& c, const SyncReport& r);
  void SampleRtt(Client& c, int64_t pong_ns);
  void SendPing(Client& c);
  void Drop(Client& client);

  const WallConfig& config_;
  SwapSyncMaster* sync_;
  CommandHandler handler_;
  UniqueFd listener_;
  UniqueFd sync_udp_;  // the sync's datagrams, on the control port's number
  uint16_t port_ = 0;
  std::string token_;
  std::vector<std::unique_ptr<Client>> clients_;
  uint64_t accept_calls_ = 0;              // Accept calls so far
  std::vector<SocketAddress> node_hosts_;  // the config's display nodes
  std::vector<ReceiverTileStats> receiver_stats_;
  std::vector<std::string> refusals_;  // per display node: NodeRefusal
  int64_t latency_ns_ = 0;
  std::vector<std::pair<int, std::function<void()>>> watched_;
  std::vector<pollfd> fds_;  // WaitForInput's, for Serve
  int ready_ = 0;            // ppoll's answer
};

}  // namespace tilestream
