#include "streamer/wall_sync.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/base/clock.h"
#include "common/wall/layout.h"
#include "streamer/control_server.h"

namespace tilestream {

WallSync::WallSync(const WallConfig& c)
    : c_(c),
      master_(c.tile_count(), c.sync.partial, kDropAfter),
      latency_(c.sync, static_cast<int64_t>(kNsPerSecond / c.wall.fps),
               static_cast<int64_t>(c.stream.reorder_ms * 1e6), c.stream.retransmission_share) {}

// Decided at its deadline and shown at once then or, with a playout
// latency, at its time on the display nodes' clock (CLOCK_REALTIME,
// synchronised).
// A leader named or given up changes the latency at once: the ticks
// opened from now on are decided where it says.
int64_t WallSync::OpenTick(uint64_t tick, uint32_t timestamp, int64_t frame_end_ns) {
  if (const bool at_wall = server_->leader() >= 0; at_wall != latency_.decided_at_wall()) {
    latency_.SetDecidedAtWall(at_wall);
    RefreshLatency();
  }
  const PlayoutLatency::TickMoments m = latency_.MomentsFor(frame_end_ns);
  const int64_t to_realtime = RealtimeNs() - MonotonicNs();
  const int64_t at = m.at_ns ? m.at_ns + to_realtime : 0;
  if (!c_.sync.enabled) return m.deadline_ns;
  std::vector<bool> takers(c_.tile_count());
  for (uint32_t t = 0; t < c_.tile_count(); ++t)
    takers[t] = master_.member(t) && !master_.left_out(t);
  const bool led = at > 0 && server_->leader() >= 0 &&
                   std::find(takers.begin(), takers.end(), true) != takers.end();
  master_.OpenTick(tick, timestamp, m.deadline_ns, at, led);
  if (!led) return m.deadline_ns;
  server_->SendOpen({tick, timestamp, m.deadline_ns + to_realtime, at, takers});
  return m.deadline_ns + master_.led_grace_ns();  // its decision may come as late
}

void WallSync::Decide(int64_t now_ns) {
  if (master_.LedOverdue(now_ns)) server_->GiveUpLeader("its decisions stopped coming");
  if (master_.unheard_in_a_row() >= kUnheard)
    server_->StopLeading(
        "the leader skipped ticks every tile had reported: the display nodes' "
        "LAN does not carry their reports (set [sync] decide = \"server\")");
  events_.clear();
  master_.Decide(now_ns, &events_);
  server_->SendSync(events_);
  LogChanges();
}

// From the largest round trip to a display node and of a tile's repairs.
void WallSync::UpdateLatency(uint64_t sent, uint64_t sent_again) {
  if (!latency_.timed()) return;
  uint64_t lost = 0;  // as the receivers said it last
  for (const ControlServer::ReceiverTileStats& r : server_->receiver_stats()) lost += r.stats.lost;
  latency_.SetSent(sent, sent_again, lost);
  RefreshLatency();
}

// The grace a leader's decisions have follows the sync's round trip.
void WallSync::RefreshLatency() {
  const int64_t before = latency_.latency_ns();
  const RttEstimate rtt = server_->LargestRtt();
  LongestRepairWait repair;  // from the tiles' last reports
  for (const ControlServer::ReceiverTileStats& r : server_->receiver_stats())
    repair.Tile(static_cast<int64_t>(r.stats.rtt_us) * 1000,
                static_cast<int64_t>(r.stats.rttvar_us) * 1000);
  master_.SetLedGrace(LeaderGraceNs(rtt.rtt_ns, rtt.rttvar_ns));
  latency_.Update(rtt.rtt_ns, rtt.rttvar_ns, repair.ns);
  if (latency_.first_copies() != copies_said_) {
    copies_said_ = latency_.first_copies();
    server_->SetNackCopies(copies_said_);
    spdlog::info("swap sync: a lost packet's first request now goes {} ({:.2f}% lost)",
                 copies_said_ == 2 ? "twice: that saves a repair round" : "once",
                 100 * latency_.lost_share());
  }
  const int64_t now = latency_.latency_ns();
  if (now == before && latency_said_) return;
  server_->SetLatency(now);
  latency_said_ = true;
  // Logged when it rises, and while it falls each tenth.
  if (now < logged_ns_ && now > logged_ns_ - logged_ns_ / 10) return;
  logged_ns_ = now;
  spdlog::info(
      "swap sync: playout latency {:.1f} ms (round trip to the farthest display node "
      "{:.1f} ms, deviation {:.1f} ms; {} repairs waited for, {:.2f}% lost; decided at the "
      "{})",
      latency_.latency_ns() / 1e6, rtt.rtt_ns / 1e6, rtt.rttvar_ns / 1e6, latency_.repair_rounds(),
      100 * latency_.lost_share(), latency_.decided_at_wall() ? "wall's side" : "server");
}

// Nothing is sent: the nodes stop with the play, and a node that had the
// leader's decision acted on it. Before, beside two CPU hogs, a report
// had 10 of 100 ticks in no count, all led by its counts: their leader's
// decisions were still to come when the play ended.
void WallSync::Finish(int64_t now_ns) {
  if (const uint64_t undecided = master_.AbandonLed())
    spdlog::warn(
        "swap sync: {} ticks had no decision from their leader when the play ended (its grace "
        "of {:.0f} ms passed): counted abandoned",
        undecided, master_.led_grace_ns() / 1e6);
  events_.clear();
  master_.Decide(now_ns, &events_);
}

// A tile left out of the swap sync for missing ticks, or taken back.
void WallSync::LogChanges() {
  master_.TakeChanges(&changes_);
  for (const SwapSyncMaster::Change& change : changes_) {
    const std::string tile = TileId::FromIndex(change.tile, c_.wall.layout).Name();
    const std::string& node = c_.nodes[c_.routes[change.tile].node].name;
    if (change.left_out)
      spdlog::warn(
          "swap sync: tile {} (display node {}) missed {} ticks in a row; the wall plays on "
          "without waiting for it until it reports a tick in time",
          tile, node, kDropAfter);
    else
      spdlog::info("swap sync: tile {} (display node {}) reports in time again: back in the sync",
                   tile, node);
  }
  changes_.clear();
}

}  // namespace tilestream
