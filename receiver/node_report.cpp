#include "receiver/node_report.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <nlohmann/json.hpp>

namespace tilestream {
namespace {

// Says once that a tile's stream is not of the tile's size (its frames never
// complete); returns whether it said so.
bool SayWrongGeometry(const WallConfig& c, uint32_t tile, const AssemblerStats& a) {
  const uint64_t beyond = a.malformed[static_cast<size_t>(ParseError::kLineBeyondHeight)] +
                          a.malformed[static_cast<size_t>(ParseError::kSegmentBeyondWidth)];
  if (a.frames_wrong_geometry == 0 && beyond == 0) return false;
  fmt::print(
      stderr,
      "receiver: tile {}: the stream does not fit the tile: configured {}x{}, arriving {}x{} "
      "({} frames ended short of the tile, {} packets beyond it); see tile_width/tile_height in "
      "{}\n",
      TileId::FromIndex(tile, c.wall.layout).Name(), c.wall.tile.width, c.wall.tile.height,
      a.arriving.width, a.arriving.height, a.frames_wrong_geometry, beyond, c.source);
  return true;
}

std::string FinalTileText(const std::string& name, double seconds, const TileReceiverStats& st) {
  const TileTotals s = Sum(st);
  std::string text = fmt::format(
      "tile {:<6} {:8.1f} Mbps  frames {} complete, {} incomplete  packets {}  lost {}  "
      "reordered {}  duplicate {}  late {}  malformed {}  foreign {}  out of sequence {}  "
      "placed {}  kernel drops {}\n",
      name, s.bytes * 8 / seconds / 1e6, s.complete, s.incomplete, s.packets, s.lost, s.reordered,
      s.duplicate, s.late, s.malformed, s.foreign, s.out_of_sequence, st.placement.placed,
      st.socket.kernel_drops);
  if (st.loss.nacks > 0)
    text += fmt::format(
        "tile {:<6} retransmission: {} NACKs for {} packets, {} retransmissions, {} recovered, "
        "{} too late, {} unrecoverable, {} frames repaired\n",
        name, st.loss.nacks, st.loss.requested, st.assembler.retransmitted, st.assembler.recovered,
        st.assembler.retransmit_late, st.loss.unrecoverable, st.assembler.frames_repaired);
  if (!st.receive_error.ok())
    text += fmt::format("tile {:<6} receiving stopped: {}\n", name, st.receive_error.message());
  return text;
}

nlohmann::json FinalTileJson(const std::string& name, double seconds, const TileReceiverStats& st) {
  const TileTotals s = Sum(st);
  const AssemblerStats& a = st.assembler;
  nlohmann::json malformed;  // null when none
  for (size_t e = 1; e < a.malformed.size(); ++e)
    if (a.malformed[e]) malformed[ParseErrorName(static_cast<ParseError>(e))] = a.malformed[e];
  nlohmann::json j = {{"tile", name},
                      {"mbps", s.bytes * 8 / seconds / 1e6},
                      {"bytes", s.bytes},
                      {"frames_complete", s.complete},
                      {"frames_incomplete", s.incomplete},
                      {"packets", s.packets},
                      {"lost", s.lost},
                      {"reordered", s.reordered},
                      {"duplicate", s.duplicate},
                      {"late", s.late},
                      {"malformed", malformed},
                      {"foreign_ssrc", a.foreign_ssrc},
                      {"foreign_source", a.foreign_source},
                      {"wrong_payload_type", a.wrong_payload_type},
                      {"probation", a.probation},
                      {"sequence_jump", a.sequence_jump},
                      {"timestamp_out_of_sequence", a.timestamp_out_of_sequence},
                      {"byes", a.byes},
                      {"frames_wrong_geometry", a.frames_wrong_geometry},
                      {"arriving", fmt::format("{}x{}", a.arriving.width, a.arriving.height)},
                      {"placed", st.placement.placed},
                      {"datagrams", st.socket.datagrams},
                      {"kernel_drops", st.socket.kernel_drops},
                      {"catch_ups", st.socket.catch_ups},
                      {"discarded_bytes", st.socket.discarded_bytes},
                      {"receive_syscalls", st.socket.syscalls},
                      {"gathered_bytes", st.placement.gathered},
                      {"nacks", st.loss.nacks},
                      {"nack_requested", st.loss.requested},
                      {"nack_asked_again", st.loss.asked_again},
                      {"retransmitted", a.retransmitted},
                      {"recovered", a.recovered},
                      {"retransmit_late", a.retransmit_late},
                      {"unrecoverable", st.loss.unrecoverable},
                      {"reordered_not_asked", st.loss.reordered},
                      {"not_asked_too_late", st.loss.not_asked},
                      {"repair_rtt_ms", st.loss.rtt.rtt_ns / 1e6},
                      {"repair_rtt_deviation_ms", st.loss.rtt.rttvar_ns / 1e6},
                      {"frames_repaired", a.frames_repaired},
                      {"feedback_errors", st.socket.feedback_errors},
                      {"feedback_refusals", st.socket.feedback_refusals.Text()}};
  if (!st.receive_error.ok()) j["receive_error"] = st.receive_error.message();
  return j;
}

}  // namespace

TileTotals Sum(const TileReceiverStats& s) {
  const AssemblerStats& a = s.assembler;
  return {s.socket.bytes,
          a.packets,
          a.lost,
          a.reordered,
          a.duplicate,
          a.late,
          a.malformed_total(),
          a.foreign_ssrc + a.foreign_source,
          a.wrong_payload_type + a.probation + a.sequence_jump + a.timestamp_out_of_sequence,
          a.frames_complete,
          a.frames_incomplete};
}

SecondReporter::SecondReporter(const WallConfig& c, const NodeParts* parts, bool quiet)
    : c_(c),
      p_(*parts),
      quiet_(quiet),
      tile_previous_(parts->tiles.size()),
      geometry_said_(parts->tiles.size()),
      error_said_(parts->tiles.size()) {}

void SecondReporter::Report(double elapsed_s, const PresentCounts& counts, Presenter* presenter) {
  TileTotals node;
  const bool synced = p_.sync && p_.sync->subscribed();
  const uint64_t shown = counts.shown_ticks();
  // A packet is asked for while its frame may still be shown: a frame
  // interval and the wall's playout latency, as the coordinator said it;
  // a first request goes as many times as it said.
  const int64_t latency = p_.sync ? p_.sync->latency_ns() : 0;
  const int copies = p_.sync ? p_.sync->nack_copies() : 1;
  for (size_t i = 0; i < p_.tiles.size(); ++i) {
    if (latency > 0)
      p_.tiles[i]->SetRepairWindow(static_cast<int64_t>(1e9 / c_.wall.fps) + latency);
    p_.tiles[i]->SetFirstNackCopies(copies);
    const TileReceiverStats st = p_.tiles[i]->Snapshot();
    const TileTotals s = Sum(st);
    if (!geometry_said_[i]) geometry_said_[i] = SayWrongGeometry(c_, p_.indices[i], st.assembler);
    if (!error_said_[i] && !st.receive_error.ok()) {
      error_said_[i] = true;
      spdlog::error("tile {}: receiving stopped: {}",
                    TileId::FromIndex(p_.indices[i], c_.wall.layout).Name(),
                    st.receive_error.message());
    }
    node.bytes += s.bytes, node.lost += s.lost, node.complete += s.complete,
        node.incomplete += s.incomplete, node.malformed += s.malformed;
    // The overlay: what this tile showed and received in the last second.
    const uint64_t frames =
        synced ? shown - shown_previous_ : s.complete - tile_previous_[i].complete;
    presenter->SetOverlayText(
        i, fmt::format("{}  {} FPS  {:.2f} GBIT/S  LOSS {}  {}",
                       TileId::FromIndex(p_.indices[i], c_.wall.layout).Name(), frames,
                       (s.bytes - tile_previous_[i].bytes) * 8 / 1e9, s.lost,
                       synced ? fmt::format("TICK {}", counts.last_tick) : std::string("NO SYNC")));
    if (p_.sync)
      p_.sync->ReportStats(p_.indices[i], {frames, s.lost, s.incomplete,
                                           static_cast<uint64_t>(st.loss.rtt.rtt_ns / 1000),
                                           static_cast<uint64_t>(st.loss.rtt.rttvar_ns / 1000),
                                           st.loss.requested, st.assembler.retransmit_late});
    if (i == 0) fps_ = frames;
    tile_previous_[i] = s;
  }
  shown_previous_ = shown;
  if (!quiet_) {
    fmt::print(
        "{:7.1f} s  {} tiles  {:.2f} Gbit/s  {:.1f} frames/s per tile  lost {}  incomplete {}  "
        "malformed {}\n",
        elapsed_s, p_.tiles.size(), (node.bytes - node_previous_.bytes) * 8 / 1e9,
        double(node.complete - node_previous_.complete) / p_.tiles.size(), node.lost,
        node.incomplete, node.malformed);
    std::fflush(stdout);
  }
  node_previous_ = node;
}

std::string FinalNodeText(const NodeFinal& f) {
  std::string text =
      fmt::format("final report: {:.1f} s, node {}{}\n", f.seconds, f.node,
                  f.window_updates ? fmt::format(", {} window updates", *f.window_updates) : "");
  if (f.sync)
    text += fmt::format(
        "swap sync: {} ticks presented, {} partial, {} skipped, {} tile frames released but "
        "missing here; acted on at {}\n",
        f.sync->presented, f.sync->partial, f.sync->skipped, f.sync->missing,
        f.sync->real_time ? fmt::format("SCHED_FIFO ({} windows of 100 ms over its 5-ms budget)",
                                        f.sync->windows_over_budget)
                          : std::string("normal priority"));
  for (size_t i = 0; i < f.tiles.size(); ++i)
    text += FinalTileText(f.tile_names[i], f.seconds, f.tiles[i]);
  return text;
}

nlohmann::json FinalNodeJson(const NodeFinal& f) {
  nlohmann::json j;
  j["node"] = f.node;
  j["duration_s"] = f.seconds;
  if (f.window_updates) j["window_updates"] = *f.window_updates;
  j["tiles"] = nlohmann::json::array();
  if (f.sync)
    j["sync"] = {{"presented", f.sync->presented},
                 {"partial", f.sync->partial},
                 {"skipped", f.sync->skipped},
                 {"missing", f.sync->missing},
                 {"real_time", f.sync->real_time},
                 {"windows_over_budget", f.sync->windows_over_budget},
                 {"late_decisions", f.sync->late_decisions},
                 {"decisions_by_datagram", f.sync->decisions_by_datagram},
                 {"decisions_by_tcp", f.sync->decisions_by_tcp},
                 {"decisions_by_lan", f.sync->decisions_by_lan},
                 {"ticks_led", f.sync->ticks_led},
                 {"led_late", f.sync->led_late},
                 {"late_decision_max_ms", f.sync->late_decision_max_ns / 1e6},
                 {"woke_late_max_ms", f.sync->woke_late_max_ns / 1e6}};
  for (size_t i = 0; i < f.tiles.size(); ++i)
    j["tiles"].push_back(FinalTileJson(f.tile_names[i], f.seconds, f.tiles[i]));
  return j;
}

}  // namespace tilestream
