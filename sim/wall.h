// The simulated wall's parts (sim/wall_model.h says what runs): its
// set-up and run (wall_model.cpp), the streamer's side (wall_server.cpp:
// the tick clock, the tile ranks, the sync master, the shedder and NIC
// failover) and the display nodes' (wall_nodes.cpp: receiving, repairs,
// presenting). One class: the events of both sides reach into the network
// and clock they share. Not thread-safe: the simulation is one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/control/movie_loads.h"
#include "common/control/node_round_trip.h"
#include "common/control/playback.h"
#include "common/control/playout_latency.h"
#include "common/control/present_schedule.h"
#include "common/control/swap_sync.h"
#include "common/control/sync_datagram.h"
#include "common/control/tick_leader.h"
#include "common/control/tick_shedder.h"
#include "common/receive/frame_assembler.h"
#include "common/send/tile_sender.h"
#include "common/wall/wall_config.h"
#include "sim/event_queue.h"
#include "sim/path.h"
#include "sim/sim_sockets.h"
#include "sim/wall_model.h"

namespace tilestream::sim {

inline constexpr int64_t kSecond = 1'000'000'000;
inline constexpr int64_t kNicLookNs = 100'000'000;  // streamer/nic_failover.h's kLookNs

// A tile's pixels: frame f of tile t, a pattern that differs per tile and
// frame, so that a frame shown on the wrong tile or at the wrong tick fails.
uint64_t Checksum(std::span<const std::byte> pixels);

class Wall {
 public:
  explicit Wall(const Scenario& s);
  WallReport Run();

 private:
  struct Queued {
    uint32_t timestamp = 0;
    int64_t due_ns = 0, window_ns = 0;
  };
  struct Tile {
    uint32_t index = 0, node = 0;
    std::unique_ptr<TileSender> sender;
    std::unique_ptr<Packetizer> plan;
    std::unique_ptr<FrameAssembler> assembler;
    int64_t nack_timer_ns = LossTracker::kNever;
    uint32_t nic = 0;
    bool hurry = false;                          // the frame being sent missed its tick
    std::optional<Queued> queued;                // the next tick's frame, waiting for it
    bool ended = false;                          // its BYE said
    uint64_t skipped_ticks = 0, sent_ticks = 0;  // since the shedder last looked
    TileCounters counters;
    size_t stalled_bytes = 0;  // waiting in its socket while its node is stopped
    bool sends_fail = false;   // kSendsFail: its socket broken
  };
  struct Node {
    // The sync's TCP and its datagrams on paths of their own: a segment
    // TCP sends again later does not hold back a datagram sent now.
    std::unique_ptr<Path> media, feedback, sync_out, sync_back, datagrams_out, datagrams_back;
    std::unique_ptr<TcpStream> to_node, to_server;
    int64_t clock_offset_ns = 0;
    double clock_drift = 0;  // its clock's rate less one
    int64_t stopped_until_ns = 0;
    std::vector<std::function<void()>> while_stopped;
    std::vector<std::pair<int64_t, int64_t>> stops;  // when it is stopped
    std::vector<uint32_t> tiles;
    NodeRoundTrip trip;
    bool hello_sent = false;  // its first datagram, on joining
    // The sync's datagrams (common/control/sync_datagram.h), as the
    // control server and the node's sync client have them.
    uint64_t key = 0;
    DecisionCarrier carrier;
    SyncEventFilter filter;
    PresentSchedule schedule;
    int64_t wake_ns = INT64_MAX;  // the presenter's next wake-up (virtual clock)
    // The wall's LAN (sim/wall_leader.cpp): the switch's port to the node,
    // both ways; the leader it reports to (-1: none), whether it leads, and
    // as the leader, the ticks it decides and the lines its datagrams carry.
    std::unique_ptr<Path> lan;
    int follows = -1;
    bool leading = false;
    std::unique_ptr<TickLeader> leader;
    DecisionCarrier lan_carrier, decided_carrier;
    int64_t lead_wake_ns = INT64_MAX;
    // The coordinator's view: its datagrams have come (it may lead), and it
    // was given up as a leader (never again: stopped, dead, cut off).
    bool datagrams_seen = false, demoted = false;
  };

  void SetUpTiles();
  void SetUpNodes();
  void Tick(uint64_t tick);
  void StartFrame(Tile& t, uint32_t timestamp, int64_t window_ns);
  void BeginFrame(Tile& t, const Queued& f);
  void Burst(uint32_t tile);
  void Sent(uint32_t tile, std::vector<Datagram>&& datagrams);
  void Receive(uint32_t tile, const std::shared_ptr<std::vector<Datagram>>& batch);
  void Admit(Tile& t, const Datagram& d);
  void AskForLost(uint32_t tile);
  void EndStreams();
  void ScheduleDecide();
  void Decide();
  // The sync's datagrams: `copies` of one, each lost or not on its way.
  void SendDatagram(uint32_t node, bool to_node, const std::string& datagram, int copies);
  void AtNode(uint32_t node, const std::string& line);
  void AtNodeDatagram(uint32_t node, const std::string& datagram);
  void AtServerDatagram(uint32_t node, const std::string& datagram);
  // The node's presenter (receiver/presenter.cpp): the held decisions due
  // by now shown, and a wake-up at the next one's moment.
  void ShowDue(uint32_t node);
  void Show(uint32_t node, const SyncEvent& e);
  // A fault may excuse a show late on the virtual clock: the node's sync
  // path down, or the node stopped, in the last 3 s.
  bool Excused(uint32_t node) const;
  void AtServer(uint32_t node, const std::string& line,
                NodeRoundTrip::Via via = NodeRoundTrip::Via::kLine);
  void Ping(uint32_t node, NodeRoundTrip::Via via);
  // The decision at the wall's side (sim/wall_leader.cpp), as the control
  // server and the nodes' sync clients have it: the coordinator names the
  // first node it may, sends it each tick it opens, takes its decisions,
  // and gives it up when they stop coming; the leader decides; every node
  // reports to it over the LAN.
  void ChooseLeader();
  void GiveUpLeader();
  void SayLeader();
  static std::string LanHost(uint32_t node);
  static constexpr uint16_t kLanPort = 7000;
  void OpenLed(uint64_t tick, uint32_t timestamp, const PlayoutLatency::TickMoments& m,
               const std::vector<bool>& takers);
  // A line to the leader by its connection and by datagram, each datagram
  // carrying the lines before it (the ticks opened, the tiles gone).
  void ToLeader(const std::string& line);
  void AtLeaderLine(uint32_t node, const std::string& line);
  void Lead(uint32_t node);
  void SendLan(uint32_t from, uint32_t to, const std::string& datagram);
  void AtNodeLan(uint32_t node, const std::string& datagram);
  void Second();
  void UpdateLatency();
  void LookAtNics();
  void ApplyFaults();
  bool Stopped(uint32_t node) const { return q_.now() < nodes_[node].stopped_until_ns; }
  // What the node's clock is ahead of the virtual one now.
  int64_t ClockOffsetNs(const Node& n) const {
    return n.clock_offset_ns + static_cast<int64_t>(n.clock_drift * static_cast<double>(q_.now()));
  }
  int Refusal(uint32_t tile);
  void NodeDies(uint32_t node);
  // Runs `what` at the node now, or when it runs again.
  void OnNode(uint32_t node, std::function<void()> what);
  const std::byte* FrameOf(uint32_t tile, uint32_t timestamp);
  // Of pixels_ and checksums_: frame `slot` (a movie's generation times
  // kFrames, plus its frame) of tile.
  size_t PixelIndex(uint32_t tile, uint32_t slot) const {
    return (size_t{slot / kFrames} * tiles_.size() + tile) * kFrames + slot % kFrames;
  }
  void Load(const Fault& f);

  Scenario s_;
  EventQueue q_;
  SimSockets sockets_;
  Rng rng_;
  WallConfig c_;
  int64_t interval_ns_;
  std::vector<Tile> tiles_;
  std::vector<Node> nodes_;
  // The coordinator.
  TickShedder shedder_;
  // Its movies: the first, then one per kLoad or kLoadFails of the
  // scenario (each kFrames frames), as the coordinator plays them.
  static constexpr uint32_t kFrames = 4;
  Playback playback_;
  MovieLoads movies_;
  SwapSyncMaster master_;
  PlayoutLatency latency_;
  std::vector<double> capacity_;      // bits per second per NIC; 0: unknown, no limit
  std::vector<int64_t> nic_free_ns_;  // when each NIC has sent what it was given
  // What a NIC's queue holds before a send blocks: a qdisc of 1000
  // datagrams (txqueuelen's default), as time at its speed.
  int64_t NicQueueNs(uint32_t nic) const {
    return capacity_[nic] > 0
               ? static_cast<int64_t>(1000.0 * (c_.stream.mtu + 14) * 8e9 / capacity_[nic])
               : 0;
  }
  std::vector<bool> nic_up_;
  std::vector<SyncEvent> events_;
  int64_t decide_at_ = INT64_MAX;
  int leader_ = -1;         // the node that decides the ticks opened now; -1: the coordinator
  bool no_leader_ = false;  // the LAN carried no reports: the coordinator decides
  DecisionCarrier open_carrier_;
  static constexpr uint64_t kWallKey = 0x5eed'1a4e'0000'0000ULL;
  int64_t next_tick_ns_ = 0;
  int64_t play_start_ns_ = 200'000'000;  // after the joins' round trips on a LAN
  int64_t play_end_ns_ = 0;
  uint32_t timestamp_base_ = 0x5eed0000;
  std::vector<int64_t> late_until_, late_by_;  // per tile: kRankLate
  // Pixels: kFrames frames per tile and movie, and what each timestamp
  // carried (its slot: see PixelIndex).
  std::vector<std::vector<std::byte>> pixels_;  // PixelIndex; or one zero frame
  std::vector<uint64_t> checksums_;
  std::unordered_map<uint32_t, uint32_t> frame_of_timestamp_;
  // Per tick, the tiles that take part (as the master has it: at its
  // open and its release); per node, whether a
  // fault (its link down, stopped) may excuse a tile that did not show it.
  std::unordered_map<uint32_t, std::vector<bool>> takers_;
  std::vector<bool> faulted_;
  // Per released tick, when its tiles showed it on the virtual clock.
  struct Shows {
    int64_t first = INT64_MAX, last = INT64_MIN;
    uint32_t count = 0;
  };
  std::unordered_map<uint32_t, Shows> shows_;
  WallReport r_;
};

}  // namespace tilestream::sim
