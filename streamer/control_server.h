// The coordinator's TCP listener (docs/control.md): one line per command,
// one JSON line per reply, for wallctl and the joystick client; and the
// display nodes' swap-sync connections, which say "sync NODE" and then
// speak the sync lines of common/control/swap_sync.h (their side here:
// streamer/control_sync.cpp). The sync's time-critical lines also come and
// go as datagrams on the same port number (common/control/sync_datagram.h).
//
// Its connections run on the connection core as common/control/control_port.h
// says: lines, deadlines, who yields to a newcomer, and two places beyond
// control.max_clients for each display node, from its address only: however
// many others connect, a node can join the swap sync. This is what the
// lines mean: "auth TOKEN" (when the config names a token file, every client
// says it first), "sync NODE [WxH]", and the commands, which the coordinator
// answers. A client that breaks a rule is closed alone; nothing a client
// sends can stop the server.
//
// Single-threaded: Poll() waits on the listener and every client, reads,
// answers, and returns; the coordinator calls it instead of sleeping. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/base/rtt_estimate.h"
#include "common/control/control_port.h"
#include "common/control/node_round_trip.h"
#include "common/control/swap_sync.h"
#include "common/control/sync_datagram.h"
#include "common/control/tick_leader.h"
#include "common/net/udp_socket.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// Answers one command line (not "auth" or "sync") with one JSON line.
using CommandHandler = std::function<std::string(const std::string& line)>;

class ControlServer {
 public:
  // Listens on the config's control address and port; reads the token file
  // when the config names one (then every client must "auth TOKEN" first).
  // Its connections' deadlines are on `clock` (tests drive it; else
  // CLOCK_MONOTONIC).
  static Result<std::unique_ptr<ControlServer>> Open(const WallConfig& config, SwapSyncMaster* sync,
                                                     CommandHandler handler,
                                                     Clock* clock = nullptr);

  // Waits until input arrives or timeout_ns passed, and handles it.
  void Poll(int64_t timeout_ns) {
    WaitForInput(timeout_ns);
    Serve();
  }
  // Poll in two: the wait, then the handling, which must follow it.
  void WaitForInput(int64_t timeout_ns) { port_->core().Wait(timeout_ns); }
  void Serve() { port_->core().Handle(); }
  // Poll also wakes when `fd` is readable, and then calls on_readable (the
  // HTTP side's mailbox, streamer/http_api.h).
  void Watch(int fd, std::function<void()> on_readable) {
    port_->core().Watch(fd, std::move(on_readable));
  }
  // Sends sync decisions to every synced display node.
  void SendSync(const std::vector<SyncEvent>& events);
  // -- the decision at the wall's side (streamer/control_leader.cpp) --
  // The node that leads (config order), deciding the ticks opened now; -1:
  // the coordinator decides (no playout latency, `decide = "server"`, no
  // node whose datagrams and LAN socket are known).
  int leader() const { return leader_node_; }
  // A tick opened with the leader: to it by line and by datagram.
  void SendOpen(const OpenedTick& t);
  // Its ticks waiting are skipped and the next node leads (logged, why).
  void GiveUpLeader(std::string_view why);
  // The same, and no node leads again: the coordinator decides (why logged).
  void StopLeading(std::string_view why);
  uint16_t port() const { return port_number_; }
  size_t synced_nodes() const;
  // Asks every synced node for a round trip ("ping"; once a second), or
  // only those whose round trip is not settled yet.
  void PingSyncNodes(bool unsettled_only = false);
  // Tells every synced node the playout latency ("latency NS"), now and
  // whenever a node joins.
  void SetLatency(int64_t ns);
  // Tells every synced node how many copies of a lost packet's first
  // request its tiles send ("nack_copies N", 1 or 2), now and whenever a
  // node joins.
  void SetNackCopies(int copies);
  // The round trip measured on node `node`'s sync connection (none: zero),
  // and the largest over the synced nodes whose estimate is settled
  // (NodeRoundTrip::settled), for the playout latency; its `samples` is
  // how many such nodes.
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
    bool authorised = false;
    int node = -1;       // the display node this connection syncs, or -1
    NodeRoundTrip trip;  // a sync connection's, from ping to pong
    // A sync connection's datagrams (common/control/sync_datagram.h): its
    // key, where its datagrams come from (length 0: none yet), and the
    // decisions each datagram to it carries.
    uint64_t udp_key = 0;
    sockaddr_storage udp_peer{};
    socklen_t udp_peer_length = 0;
    DecisionCarrier carrier;
    // Its LAN socket's port ("lan PORT"; 0: not said), and whether it was
    // given up as the wall's leader (never again on this connection).
    uint16_t lan_port = 0;
    bool demoted = false;
  };

  ControlServer(const WallConfig& config, SwapSyncMaster* sync, CommandHandler handler)
      : config_(config),
        sync_(sync),
        handler_(std::move(handler)),
        refusals_(config.nodes.size()) {}
  bool FromNode(const sockaddr_storage& peer) const;
  void Send(uint64_t id, std::string_view line) { port_->Send(id, line); }
  void Handle(uint64_t id, const std::string& line);
  void Closed(uint64_t id);

  // -- the sync's side (streamer/control_sync.cpp) --
  // Opens the sync's datagram socket, when it can.
  void OpenSyncDatagrams();
  // `sync NODE [WxH]`: the node joins, if its tiles are the wall's size.
  void Subscribe(uint64_t id, Client& client, std::string_view words);
  // Why the node of a join saying tiles of `said` is refused; empty: it
  // may join. Said once on the streamer's log per node and reason.
  std::string GeometryRefusal(uint32_t node, std::string_view said);
  // A sync connection's line: a pong or a sync report; false: neither.
  bool HandleSyncLine(uint64_t id, Client& c, const std::string& line);
  // The sync reports and round trips that came as datagrams.
  void ReceiveSyncDatagrams();
  void HandleSyncReport(const Client& c, const SyncReport& r);
  void SampleRtt(uint64_t id, Client& c, int64_t pong_ns, NodeRoundTrip::Via via);
  void SendPing(uint64_t id, const Client& c, NodeRoundTrip::Via via);
  void Drop(Client& client);
  // The leader's side: a node's "lan PORT" and its leader's "decided".
  bool HandleLeaderLine(uint64_t id, Client& c, std::string_view line);
  void ChooseLeader();
  void SayLeader(uint64_t id, Client& c);
  void SendPeer(const Client& c);
  // A line to the leader by its connection and by datagram, each datagram
  // carrying the lines before it (the ticks opened, the tiles gone).
  void ToLeader(const std::string& line);
  bool MayLead(const Client& c) const {
    return c.node >= 0 && c.udp_peer_length > 0 && c.lan_port > 0 && !c.demoted;
  }

  const WallConfig& config_;
  SwapSyncMaster* sync_;
  CommandHandler handler_;
  std::unique_ptr<ControlPort> port_;
  UniqueFd sync_udp_;  // the sync's datagrams, on the control port's number
  uint16_t port_number_ = 0;
  std::string token_;
  std::map<uint64_t, Client> clients_;     // by connection, in the order taken
  std::vector<SocketAddress> node_hosts_;  // the config's display nodes
  std::vector<ReceiverTileStats> receiver_stats_;
  std::vector<std::string> refusals_;  // per display node: NodeRefusal
  int64_t latency_ns_ = 0;
  int nack_copies_ = 1;
  int leader_node_ = -1;
  uint64_t leader_id_ = 0;  // its connection
  uint64_t wall_key_ = 0;   // of the LAN's datagrams, drawn at the first choice
  bool no_leader_ = false;  // StopLeading
  DecisionCarrier leader_carrier_;
};

}  // namespace tilestream
