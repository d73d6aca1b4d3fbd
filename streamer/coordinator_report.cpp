// The coordinator's status, its line a second and its final report
// (streamer/coordinator_impl.h).
#include <cstdio>
#include <fstream>

#include "common/control/movie_listing.h"
#include "streamer/coordinator_impl.h"
#include "streamer/wall_metrics.h"
#include "streamer/wall_shedding.h"

namespace tilestream {
namespace {

constexpr int64_t kFinalStatsTimeoutNs = 2 * kSecond;

}  // namespace

WallStatusView Coordinator::StatusView() const {
  return {c_,
          plan_,
          sync_.master(),
          server_->synced_nodes(),
          last_second_,
          latest_,
          server_->receiver_stats(),
          shedder_,
          sync_.latency_ns(),
          NodeRtts(),
          NodeRefusals(),
          server_->leader()};
}

std::vector<std::string> Coordinator::NodeRefusals() const {
  std::vector<std::string> refusals;
  for (uint32_t n = 0; n < c_.nodes.size(); ++n) refusals.push_back(server_->NodeRefusal(n));
  return refusals;
}

std::vector<RttEstimate> Coordinator::NodeRtts() const {
  std::vector<RttEstimate> rtt;
  for (uint32_t n = 0; n < c_.nodes.size(); ++n) rtt.push_back(server_->NodeRtt(n));
  return rtt;
}

void Coordinator::StatusFields(nlohmann::json* out) const {
  AddWallStatus(StatusView(), out);
  movies_.AddStatus(out);
}

bool Coordinator::StartHttp() {
  WallEndpoints wall;
  wall.command = [this](std::string_view line) { return commands_.Handle(line); };
  wall.metrics = [this] {
    nlohmann::json movies;
    movies_.AddStatus(&movies);
    return WallMetrics(StatusView(), playback_ ? &*playback_ : nullptr,
                       movies.contains("live") ? &movies["live"] : nullptr);
  };
  wall.wall_picture = [this] { return thumbnails_.Wall(); };
  wall.tile_picture = [this](std::string_view tile) { return thumbnails_.Tile(tile); };
  if (movies_.has_movies()) wall.movies = movies_.Lister();
  wall.live_picture = movies_.LivePicture();
  auto http = HttpApi::Start(c_, std::move(wall));
  if (!http.ok()) {
    spdlog::error("{}", http.status().message());
    return false;
  }
  http_ = std::move(http).value();
  if (!http_) return true;
  server_->Watch(http_->fd(), [this] { http_->RunPending(); });
  spdlog::info("panel, REST API and /metrics on http://{}:{}/", c_.http.listen_address,
               http_->port());
  return true;
}

void Coordinator::PrintSecond() {
  server_->PingSyncNodes();
  uint64_t sent = 0, sent_again = 0;
  for (uint32_t t = 0; t < tiles_; ++t) {
    sent += latest_[t].packets;
    sent_again += latest_[t].retransmitted;
  }
  sync_.UpdateLatency(sent, sent_again);
  std::vector<StreamSummary> streams;
  for (uint32_t t = 0; t < tiles_; ++t) {
    streams.push_back(Summarize(Delta(latest_[t], previous_[t]), c_));
    previous_[t] = latest_[t];
  }
  last_second_ = streams;
  LogRefusals();
  if (options_.shed) {
    std::vector<uint32_t> nics(tiles_);
    for (uint32_t t = 0; t < tiles_; ++t) nics[t] = latest_[t].nic;
    ShedForNics(c_, nics, nic_capacity_, &shedder_);
    ShedForOverload(streams, &shedder_);
  }
  if (!options_.quiet) {
    std::string sync;
    if (server_->synced_nodes() > 0) {
      const SyncStats& st = sync_.master().stats();
      sync = fmt::format("  sync: {} nodes, {} shown, {} skipped, skew max {:.2f} ms",
                         server_->synced_nodes(), st.presented + st.partial, st.skipped,
                         sync_.master().TakeRecentMaxSkew() / 1e6);
    }
    fmt::print("{}{}\n", SecondLine((clock_.NowNs() - start_ns_) / 1e9, streams), sync);
    std::fflush(stdout);
  }
}

void Coordinator::LogRefusals() {
  refusal_lines_.clear();
  const int64_t now = clock_.NowNs();
  for (uint32_t t = 0; t < tiles_; ++t)
    refusal_log_.Look(t, TileName(c_, t), latest_[t].refusals, now, &refusal_lines_);
  for (const RefusalLog::Line& line : refusal_lines_) {
    if (line.warning)
      spdlog::warn("{}", line.text);
    else
      spdlog::info("{}", line.text);
  }
}

void Coordinator::CollectFinal() {
  const int64_t give_up = clock_.NowNs() + kFinalStatsTimeoutNs;
  for (;;) {
    Drain();
    bool all = true;
    for (bool f : final_) all = all && f;
    if (all) {
      // A tile sends its final report once its thumbnails are out.
      thumbnail_inbox_.Finish([this](int rank, auto message) { AcceptThumbnail(rank, message); });
      return;
    }
    if (clock_.NowNs() > give_up) {
      for (uint32_t t = 0; t < tiles_; ++t)
        if (!final_[t])
          spdlog::warn("tile {} (rank {}) sent no final report", TileName(c_, t), plan_.rank(t));
      return;
    }
    Sleep(1'000'000);
  }
}

void Coordinator::PrintFinal() {
  std::vector<StreamSummary> streams;
  for (uint32_t t = 0; t < tiles_; ++t) {
    streams.push_back(Summarize(latest_[t], c_));
    streams.back().host = hosts_[t];
  }
  const double seconds = (clock_.NowNs() - start_ns_) / 1e9;
  tick_timing_.latency_ns = sync_.latency_ns();
  fmt::print("{}", FinalReport(seconds, streams));
  const bool synced = !options_.bench && c_.sync.enabled;
  if (synced) fmt::print("{}\n", SyncReportLine(sync_.master()));
  if (tick_timing_.shed > 0)
    fmt::print("shed: {} ticks dropped on every tile, the tile ranks behind ({} cuts)\n",
               tick_timing_.shed, tick_timing_.shed_cuts);
  std::fflush(stdout);
  if (!options_.json_path.empty()) {
    std::ofstream out(options_.json_path);
    out << FinalReportJson(seconds, streams, c_, options_.bench, synced ? &sync_.master() : nullptr,
                           options_.bench ? nullptr : &tick_timing_);
    if (!out) spdlog::error("cannot write {}", options_.json_path);
  }
}

}  // namespace tilestream
