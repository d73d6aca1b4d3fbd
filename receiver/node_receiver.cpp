#include "receiver/node_receiver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "common/wall/token_file.h"
#include "receiver/node_display.h"
#include "receiver/sync_client.h"
#include "receiver/tile_receiver.h"
#include "receiver/tile_source.h"

namespace tilestream {
namespace {

struct Totals {
  uint64_t bytes = 0, packets = 0, lost = 0, reordered = 0, duplicate = 0, late = 0, malformed = 0,
           foreign = 0, out_of_sequence = 0, complete = 0, incomplete = 0;
};

struct SyncCounts {
  uint64_t presented = 0, partial = 0, skipped = 0, missing = 0;  // missing: released, but not here
};

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

Totals Sum(const TileReceiverStats& s) {
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

// Frames a synced tile keeps for the release of their tick: as many as
// arrive until a tick's deadline, and one more. A longer deadline
// ([sync] deadline_ms) that the queue did not follow dropped frames the
// wall then released: "missing" on a loaded machine.
size_t SyncQueueDepth(const WallConfig& c) {
  const double frames =
      static_cast<double>(c.sync.deadline_after_tick_ns(c.wall.fps)) * c.wall.fps / 1e9;
  return std::clamp<size_t>(static_cast<size_t>(std::ceil(frames)) + 1, 3, 16);
}

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

}  // namespace

int RunNodeReceiver(const WallConfig& c, const NodeReceiverOptions& o,
                    const std::atomic<bool>* stop) {
  const DisplayNode* node = nullptr;
  uint32_t node_index = 0;
  for (uint32_t n = 0; n < c.nodes.size(); ++n)
    if (c.nodes[n].name == o.node) node = &c.nodes[n], node_index = n;
  if (!node) {
    std::string names;
    for (const DisplayNode& n : c.nodes) names += (names.empty() ? "" : ", ") + n.name;
    fmt::print(stderr, "receiver: {}: no display node '{}' (the nodes are: {})\n", c.source, o.node,
               names);
    return 2;
  }
  std::mutex log_mu;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> log(nullptr, &std::fclose);
  if (!o.frame_log.empty()) {
    log.reset(std::fopen(o.frame_log.c_str(), "w"));
    if (!log) {
      fmt::print(stderr, "receiver: cannot write {}\n", o.frame_log);
      return 2;
    }
  }
  std::unique_ptr<SyncClient> sync;
  if (c.sync.enabled && o.sync) {
    SyncClientOptions so;
    so.address = c.control.client_address();
    so.port = c.control.port;
    so.node = node->name;
    if (!c.control.token_file.empty()) {
      auto token = ReadToken(c.control.token_file);
      if (!token.ok()) {
        fmt::print(stderr, "receiver: {}\n", token.status().message());
        return 2;
      }
      so.token = *token;
    }
    sync = std::make_unique<SyncClient>(std::move(so));
  }
  std::vector<std::unique_ptr<TileReceiver>> tiles;
  std::vector<uint32_t> indices;
  for (uint32_t t = 0; t < c.tile_count(); ++t) {
    if (c.routes[t].node != node_index) continue;
    auto source = ResolveTileSource(c, t);
    if (!source.ok()) {
      fmt::print(stderr, "receiver: {}\n", source.status().message());
      return 2;
    }
    TileReceiverOptions to;
    to.tile_index = t;
    to.assembler.tile = c.wall.tile;
    to.assembler.ssrc = source->ssrc;
    to.assembler.payload_type = source->payload_type;
    to.assembler.show_partial = o.show_partial || (sync && c.sync.partial);
    if (sync) to.assembler.queue_depth = SyncQueueDepth(c);
    if (sync)
      to.on_complete = [s = sync.get()](uint32_t tile, uint32_t ts) {
        s->ReportComplete(tile, ts);
      };
    PacketizerOptions plan;  // what our streamer sends: pixels go straight to their place
    plan.tile = c.wall.tile;
    plan.max_payload = c.max_udp_payload();
    plan.packing = c.stream.packing;
    if (o.placement && source->ours) to.plan = plan;
    if (o.retransmission && source->ours && c.routes[t].retransmission) {
      to.assembler.rtx_payload_type = c.stream.rtx_payload_type;
      to.assembler.loss.window_ns = static_cast<int64_t>(1e9 / c.wall.fps);
    }
    to.socket.bind_address = node->address;
    to.socket.port = c.routes[t].port;
    to.socket.receive_buffer = c.stream.receive_buffer;
    const Nic& nic = c.nics[c.routes[t].nic];
    if (!nic.address.empty() && source->ours) {
      auto source = SocketAddress::Resolve(nic.address, 0);
      if (source.ok()) to.expected_source = *source;
    }
    if (log) {
      to.on_frame = [&log_mu, f = log.get()](uint32_t tile, uint32_t ts, uint64_t sum) {
        std::lock_guard lock(log_mu);
        fmt::print(f, "{} {} {:016x}\n", tile, ts, sum);
        std::fflush(f);  // a line per frame: readable while it runs
      };
    }
    auto r = TileReceiver::Open(std::move(to));
    if (!r.ok()) {
      fmt::print(stderr, "receiver: tile {}: {}:{}: {}\n",
                 TileId::FromIndex(t, c.wall.layout).Name(), node->address, c.routes[t].port,
                 r.status().message());
      return 1;
    }
    tiles.push_back(std::move(r).value());
    indices.push_back(t);
  }
  std::unique_ptr<NodeDisplay> display;
  if (o.display.mode != DisplayMode::kHeadless) {
    auto d = NodeDisplay::Create(c, node_index, indices, o.display);
    if (!d.ok()) {
      fmt::print(stderr, "receiver: {}\n", d.status().message());
      return 1;
    }
    display = std::move(d).value();
  }
  fmt::print("receiver: node {} ({}), {} tiles of {}x{}, {}, {}\n", node->name, node->address,
             tiles.size(), c.wall.tile.width, c.wall.tile.height,
             display ? display->Describe() : "headless",
             sync ? fmt::format("swap sync via {}:{}", c.control.client_address(), c.control.port)
                  : "no swap sync");
  for (size_t i = 0; i < tiles.size(); ++i)
    fmt::print("  tile {:<6} <- {}:{}\n", TileId::FromIndex(indices[i], c.wall.layout).Name(),
               node->address, c.routes[indices[i]].port);
  std::fflush(stdout);
  for (auto& t : tiles) t->Start();

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto next = start + std::chrono::seconds(1);
  Totals previous;
  uint64_t shown = 0;
  auto last_draw = start;
  bool overlay = o.overlay;
  std::vector<std::string> overlay_text(tiles.size());
  std::vector<Totals> tile_previous(tiles.size());
  uint64_t last_tick = 0, shown_previous = 0;
  SyncCounts synced;
  std::vector<SyncEvent> events;
  std::vector<bool> got(tiles.size());
  std::vector<bool> geometry_said(tiles.size());
  // Shows the released tick on every tile of the node at once, and says when.
  auto present = [&](const SyncEvent& e) {
    if (e.decision == SyncDecision::kSkip) {
      ++synced.skipped;
      return;
    }
    ++(e.decision == SyncDecision::kPartial ? synced.partial : synced.presented);
    bool any = false;
    for (size_t i = 0; i < tiles.size(); ++i) {
      auto f = tiles[i]->TakeFrame(e.timestamp, e.decision == SyncDecision::kPartial);
      got[i] = f.has_value();
      any = any || got[i];
      if (!got[i])
        ++synced.missing;
      else if (display)
        display->Upload(i, f->pixels);
    }
    if (!any) return;
    last_tick = e.tick;
    if (display) {
      display->Show();
      last_draw = Clock::now();
      ++shown;
    }
    const int64_t now = RealtimeNs();
    for (size_t i = 0; i < tiles.size(); ++i)
      if (got[i]) sync->ReportShown(indices[i], e.timestamp, now);
  };
  while (!stop->load() && (o.duration_s <= 0 ||
                           Clock::now() - start < std::chrono::duration<double>(o.duration_s))) {
    if (sync) {
      events.clear();
      // Headless, nothing but the sync's lines needs the loop: wake for
      // them (or stop, within 100 ms), not 200 times a second.
      sync->Poll(display ? 2 : 100, &events);
      for (const SyncEvent& e : events) present(e);
    }
    if (display) {
      const Renderer::Events ev = display->PollEvents();
      if (ev.quit) break;
      for (const std::string& command : ev.commands)
        if (sync) sync->SendCommand(command);
      if (ev.toggle_overlay) {
        overlay = !overlay;
        for (size_t i = 0; i < tiles.size(); ++i)
          display->SetOverlay(i, overlay ? overlay_text[i] : "");
        last_draw = {};  // repaint now
      }
    }
    if (sync && sync->subscribed()) {
      // The coordinator decides what is shown; repaint now and then only.
      if (display && Clock::now() - last_draw > std::chrono::milliseconds(100)) {
        display->Show();
        last_draw = Clock::now();
      }
    } else if (display) {
      bool fresh = false;
      for (size_t i = 0; i < tiles.size(); ++i) {
        if (auto f = tiles[i]->TakeReady()) {
          display->Upload(i, f->pixels);
          fresh = true;
        }
      }
      // Redraw for new frames, and now and then to repaint the window; with
      // nothing new and no vsync (Xvfb, some drivers) do not spin.
      if (fresh || Clock::now() - last_draw > std::chrono::milliseconds(100)) {
        display->Show();  // vsync paces the loop where the display has it
        last_draw = Clock::now();
        shown += fresh;
      } else if (!sync) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    } else if (!sync) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (Clock::now() < next) continue;
    next += std::chrono::seconds(1);
    Totals now;
    const bool synced_now = sync && sync->subscribed();
    const uint64_t shown_now = synced.presented + synced.partial;
    for (size_t i = 0; i < tiles.size(); ++i) {
      const TileReceiverStats st = tiles[i]->Snapshot();
      const Totals s = Sum(st);
      if (!geometry_said[i]) geometry_said[i] = SayWrongGeometry(c, indices[i], st.assembler);
      now.bytes += s.bytes, now.lost += s.lost, now.complete += s.complete,
          now.incomplete += s.incomplete, now.malformed += s.malformed;
      // The overlay: what this tile showed and received in the last second.
      const uint64_t frames =
          synced_now ? shown_now - shown_previous : s.complete - tile_previous[i].complete;
      overlay_text[i] =
          fmt::format("{}  {} FPS  {:.2f} GBIT/S  LOSS {}  {}",
                      TileId::FromIndex(indices[i], c.wall.layout).Name(), frames,
                      (s.bytes - tile_previous[i].bytes) * 8 / 1e9, s.lost,
                      synced_now ? fmt::format("TICK {}", last_tick) : std::string("NO SYNC"));
      if (display && overlay) display->SetOverlay(i, overlay_text[i]);
      if (sync) sync->ReportStats(indices[i], frames, s.lost, s.incomplete);
      tile_previous[i] = s;
    }
    shown_previous = shown_now;
    if (!o.quiet) {
      fmt::print(
          "{:7.1f} s  {} tiles  {:.2f} Gbit/s  {:.1f} frames/s per tile  lost {}  incomplete {}  "
          "malformed {}\n",
          std::chrono::duration<double>(Clock::now() - start).count(), tiles.size(),
          (now.bytes - previous.bytes) * 8 / 1e9,
          double(now.complete - previous.complete) / tiles.size(), now.lost, now.incomplete,
          now.malformed);
      std::fflush(stdout);
    }
    previous = now;
  }
  if (display && !o.screenshot.empty()) {
    if (const Status s = display->Screenshot(o.screenshot); !s.ok())
      fmt::print(stderr, "receiver: screenshot: {}\n", s.message());
  }
  for (auto& t : tiles) t->Stop();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  nlohmann::json j;
  j["node"] = node->name;
  j["duration_s"] = seconds;
  if (display) j["window_updates"] = shown;
  j["tiles"] = nlohmann::json::array();
  fmt::print("final report: {:.1f} s, node {}{}\n", seconds, node->name,
             display ? fmt::format(", {} window updates", shown) : "");
  if (sync) {
    fmt::print(
        "swap sync: {} ticks presented, {} partial, {} skipped, {} tile frames released but "
        "missing here\n",
        synced.presented, synced.partial, synced.skipped, synced.missing);
    j["sync"] = {{"presented", synced.presented},
                 {"partial", synced.partial},
                 {"skipped", synced.skipped},
                 {"missing", synced.missing}};
  }
  for (size_t i = 0; i < tiles.size(); ++i) {
    const TileReceiverStats st = tiles[i]->Snapshot();
    const Totals s = Sum(st);
    const std::string name = TileId::FromIndex(indices[i], c.wall.layout).Name();
    fmt::print(
        "tile {:<6} {:8.1f} Mbps  frames {} complete, {} incomplete  packets {}  lost {}  "
        "reordered {}  "
        "duplicate {}  late {}  malformed {}  foreign {}  out of sequence {}  placed {}  kernel "
        "drops {}\n",
        name, s.bytes * 8 / seconds / 1e6, s.complete, s.incomplete, s.packets, s.lost, s.reordered,
        s.duplicate, s.late, s.malformed, s.foreign, s.out_of_sequence, st.placement.placed,
        st.socket.kernel_drops);
    if (st.loss.nacks > 0)
      fmt::print(
          "tile {:<6} retransmission: {} NACKs for {} packets, {} retransmissions, {} recovered, "
          "{} too late, {} unrecoverable, {} frames repaired\n",
          name, st.loss.nacks, st.loss.requested, st.assembler.retransmitted,
          st.assembler.recovered, st.assembler.retransmit_late, st.loss.unrecoverable,
          st.assembler.frames_repaired);
    nlohmann::json malformed;
    for (size_t e = 1; e < st.assembler.malformed.size(); ++e)
      if (st.assembler.malformed[e])
        malformed[ParseErrorName(static_cast<ParseError>(e))] = st.assembler.malformed[e];
    j["tiles"].push_back({{"tile", name},
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
                          {"foreign_ssrc", st.assembler.foreign_ssrc},
                          {"foreign_source", st.assembler.foreign_source},
                          {"wrong_payload_type", st.assembler.wrong_payload_type},
                          {"probation", st.assembler.probation},
                          {"sequence_jump", st.assembler.sequence_jump},
                          {"timestamp_out_of_sequence", st.assembler.timestamp_out_of_sequence},
                          {"frames_wrong_geometry", st.assembler.frames_wrong_geometry},
                          {"arriving", fmt::format("{}x{}", st.assembler.arriving.width,
                                                   st.assembler.arriving.height)},
                          {"placed", st.placement.placed},
                          {"datagrams", st.socket.datagrams},
                          {"kernel_drops", st.socket.kernel_drops},
                          {"receive_syscalls", st.socket.syscalls},
                          {"gathered_bytes", st.placement.gathered},
                          {"nacks", st.loss.nacks},
                          {"nack_requested", st.loss.requested},
                          {"retransmitted", st.assembler.retransmitted},
                          {"recovered", st.assembler.recovered},
                          {"retransmit_late", st.assembler.retransmit_late},
                          {"unrecoverable", st.loss.unrecoverable},
                          {"frames_repaired", st.assembler.frames_repaired},
                          {"feedback_errors", st.socket.feedback_errors}});
  }
  std::fflush(stdout);
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    out << j.dump(2) << "\n";
    if (!out) fmt::print(stderr, "receiver: cannot write {}\n", o.json_path);
  }
  return 0;
}

}  // namespace tilestream
