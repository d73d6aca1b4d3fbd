// The coordinator's class, in rooms by job (streamer/coordinator.h says what
// it does): coordinator.cpp the start-up handshake, coordinator_clock.cpp the
// frame clock and what it broadcasts, coordinator_health.cpp what the tiles
// report and which are alive, coordinator_report.cpp the status, the line a
// second and the final report. Internal to these files.
#pragma once

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/realtime.h"
#include "common/control/control_commands.h"
#include "common/control/playback.h"
#include "common/control/tick_shedder.h"
#include "common/net/link_speed.h"
#include "common/wall/nic_failover.h"
#include "common/wall/server_hosts.h"
#include "streamer/control_server.h"
#include "streamer/doorbell.h"
#include "streamer/http_api.h"
#include "streamer/launch.h"
#include "streamer/rank_messages.h"
#include "streamer/rank_plan.h"
#include "streamer/refusal_log.h"
#include "streamer/report.h"
#include "streamer/streamer_options.h"
#include "streamer/thumbnail_board.h"
#include "streamer/thumbnail_inbox.h"
#include "streamer/wall_movies.h"
#include "streamer/wall_status.h"
#include "streamer/wall_sync.h"

namespace tilestream {

inline constexpr int64_t kSecond = kNsPerSecond;
// Before tick 0, a node with no settled round trip is pinged again this often.
inline constexpr int64_t kPingAgainNs = 200'000'000;

inline std::string TileName(const WallConfig& c, uint32_t tile) {
  return TileId::FromIndex(tile, c.wall.layout).Name();
}

class Coordinator {
 public:
  Coordinator(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
              const std::atomic<bool>* stop)
      : comm_(comm),
        options_(options),
        wall_(wall),
        c_(wall.config),
        stop_(stop),
        tiles_(c_.tile_count()),
        latest_(tiles_),
        previous_(tiles_),
        heard_ns_(tiles_, 0),
        hosts_(tiles_),
        final_(tiles_, false),
        plan_(c_, static_cast<uint32_t>(std::max(1, comm.size - 1))),
        sync_(c_) {
    for (uint32_t t = 0; t < tiles_; ++t) latest_[t].nic = c_.routes[t].nic;  // until it reports
    if (auto d = DoorbellRinger::Open(comm.size); d.ok())
      doorbells_.emplace(std::move(d).value());
    else  // the tile ranks poll MPI instead
      spdlog::warn("{}", d.status().message());
  }

  // Returns the process exit code.
  int Run();

 private:
  // --- the start-up handshake (coordinator.cpp)

  // Placement, every tile ready, the SDP files, the control and web
  // listeners. False (said) when any of them failed.
  bool Start();

  // Every tile's ready message, then the plan (always: it maps ranks to
  // tiles when a rank dies). False (said) when a tile failed or was silent.
  bool CollectReady();

  // A message per tile, or one for all tiles of a rank that could not set
  // up at all.
  bool ReceiveReady(std::vector<ReadyMessage>* messages);

  // A rank that listens on loopback is rung only from its own host; one on
  // the management network from anywhere (streamer/doorbell.h). One not
  // armed has its port cleared: the plan says it polls.
  void ArmDoorbell(int rank, ReadyMessage* m);

  // The playback, and the movie library's commands when there is one.
  void SetUpPlayback();

  // Tick 0 shows on every tile only if every display node has joined the
  // swap sync: give them sync.wait_ms, then start without the missing ones.
  void WaitForDisplayNodes();

  // --- the frame clock (coordinator_clock.cpp)

  // The frame clock: tick k at start + k / fps; every tile sends the frame
  // the playback state gives for that tick, with the same RTP timestamp.
  // Commands change the state between ticks, so every tile sees a change at
  // the same tick.
  bool RunPlay();
  // The benchmark's heartbeat, once a second.
  bool RunBench();
  bool TimeUp() const;

  // The frame clock at SCHED_FIFO, within a budget (common/base/realtime.h,
  // docs/decisions.md): on a busy server a tick that waits behind the tile
  // ranks reaches every tile late. Only this thread; the HTTP side's
  // threads are running already.
  void RaiseClock();
  void LowerClock();
  void CountTick(int64_t late_ns, int64_t broadcast_ns, int64_t interval);

  void Broadcast(TickCommand command, uint64_t tick, uint64_t frame, uint32_t timestamp = 0,
                 int64_t interval = 0, int32_t read_ahead_step = 1, uint32_t next_in_ticks = 1);

  // Serves the control listener for up to ns, then sends the sync decisions
  // now due.
  void Wait(int64_t ns);
  static void Sleep(int64_t ns);

  // --- what the tiles report, and which are alive (coordinator_health.cpp)

  // Takes every statistics and thumbnail message waiting.
  void Drain();
  // Keeps each tile's newest thumbnail (streamer/thumbnail_board.h), if it
  // came from the tile's rank.
  void AcceptThumbnail(int rank, std::span<const std::byte> message);
  void DrainThumbnails();

  // A tile silent for 1.5 s is dead: end the job, naming it. A tile that
  // sent its final report is stopping (it got the stop signal before rank 0
  // did): stop the others too.
  enum class Health { kAlive, kStopping, kDead };
  Health CheckAlive();

  // ", on server stream2 (host stream2.lab)" on a wall of several servers.
  std::string OnServer(uint32_t tile) const;
  // "tile r0c1", or "tiles r0c0, r0c1" for a rank streaming several.
  std::string TilesOfRank(int rank) const;

  // --- status and reports (coordinator_report.cpp)

  WallStatusView StatusView() const;
  std::vector<RttEstimate> NodeRtts() const;
  std::vector<std::string> NodeRefusals() const;
  // What status adds to the playback state (streamer/wall_status.h).
  void StatusFields(nlohmann::json* out) const;

  // The panel, REST API, live picture and /metrics (streamer/http_api.h),
  // served from the control listener's poll. False (said) if it cannot listen.
  bool StartHttp();

  void PrintSecond();
  // Each kind of refused send per tile, when it starts, once a minute while
  // it goes on, and when it stops (streamer/refusal_log.h).
  void LogRefusals();
  void CollectFinal();
  void PrintFinal();

  const WallComm& comm_;
  const StreamerOptions& options_;
  const Wall& wall_;
  const WallConfig& c_;
  const std::atomic<bool>* stop_;
  const uint32_t tiles_;
  mutable MonotonicClock clock_;
  std::vector<TileStats> latest_, previous_;
  std::vector<int64_t> heard_ns_;
  int64_t last_check_ns_ = 0;  // StalledNs
  std::optional<DoorbellRinger> doorbells_;
  TickTiming tick_timing_;
  TickShedder shedder_;
  // What each NIC carries (0: unknown): the config's speed, else this
  // server's kernel's (the coordinator's host; other servers' NICs need
  // speed_gbps for a ceiling).
  const std::vector<double> nic_capacity_ =
      NicCapacities(c_, static_cast<uint32_t>(std::max(0, ServerOfHost(c_, ThisHost()))),
                    [](const std::string& name) { return KernelLinkSpeedBps(name); });
  std::optional<RealTimeBudget> clock_priority_;  // playing, where permitted
  uint64_t tick_messages_ = 0;                    // Broadcast's count: each message's sequence
  std::vector<std::string> hosts_;  // per tile: where its rank runs (its ready message)
  std::vector<bool> final_;
  const RankPlan plan_;
  int64_t start_ns_ = 0;
  WallSync sync_;
  std::unique_ptr<ControlServer> server_;
  ThumbnailBoard thumbnails_{c_.wall};
  ThumbnailInbox thumbnail_inbox_{comm_.comm, kTagThumbnail, kThumbnailMessageMaxBytes};
  std::optional<Playback> playback_;                 // play mode only
  WallMovies movies_{comm_.comm, c_, plan_, wall_};  // load, the switch, the playlist
  ControlCommands commands_{[this](nlohmann::json* j) { StatusFields(j); }};
  std::vector<StreamSummary> last_second_;
  RefusalLog refusal_log_{tiles_};
  std::vector<RefusalLog::Line> refusal_lines_;
  std::unique_ptr<HttpApi> http_;  // last: its threads stop before the rest goes
};

}  // namespace tilestream
