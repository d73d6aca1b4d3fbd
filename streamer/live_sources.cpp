#include "streamer/live_sources.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/base/clock.h"
#include "common/base/json_text.h"
#include "common/live/live_tile_frames.h"
#include "common/live/to_rgb.h"

namespace tilestream {

namespace {

// The source's stream as the receiver's stream receiver takes it: its
// payload type, its SSRC where the SDP names one (else the first sender's),
// NACKs where it offers RTX, frames handed on whole only.
TileReceiverOptions ReceiverOptions(const TileStreamDescription& d) {
  TileReceiverOptions o;
  o.assembler.tile = d.tile;
  o.assembler.payload_type = d.payload_type;
  if (d.ssrc != 0) o.assembler.ssrc = d.ssrc;
  o.assembler.queue_depth = 2;
  o.assembler.prefault = false;
  if (d.rtx_payload_type != 0) {
    o.assembler.rtx_payload_type = d.rtx_payload_type;
    o.assembler.loss.window_ns = int64_t{d.rtx_time_ms > 0 ? d.rtx_time_ms : 100} * 1'000'000;
    o.assembler.repair_frames = 2;
  }
  o.socket.bind_address = d.destination_address.empty() ? "0.0.0.0" : d.destination_address;
  o.socket.port = d.port;
  o.socket.receive_buffer = std::max<size_t>(size_t{64} << 20, 4 * d.tile.frame_bytes());
  return o;
}

// The SDP file's modification time (0 when it cannot be read).
int64_t ModifiedNs(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return 0;
  return int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// The stream an SDP file describes, if a live source can take it.
Result<TileStreamDescription> ReadSourceSdp(const LiveSourceSettings& settings) {
  auto sdp = ReadSdpFile(settings.sdp);
  if (!sdp.ok())
    return Status::InvalidArgument(
        fmt::format("live source {}: {}", settings.name, sdp.status().message()));
  if (sdp->tile.width > kMaxPictureWidth || sdp->tile.height > kMaxPictureHeight)
    return Status::InvalidArgument(fmt::format("live source {}: {}x{} is larger than {}x{}",
                                               settings.name, sdp->tile.width, sdp->tile.height,
                                               kMaxPictureWidth, kMaxPictureHeight));
  if (!ParseColorimetry(sdp->colorimetry))
    return Status::Unsupported(fmt::format("live source {}: colorimetry {} (BT709 or BT601 are)",
                                           settings.name, Printable(sdp->colorimetry)));
  return sdp;
}

}  // namespace

Result<std::unique_ptr<LiveSource>> LiveSource::Start(const LiveSourceSettings& settings,
                                                      const std::string& ring_path) {
  const int64_t mtime = ModifiedNs(settings.sdp);
  auto sdp = ReadSourceSdp(settings);
  if (!sdp.ok()) return sdp.status();
  auto ring = PictureRing::Create(ring_path);
  if (!ring.ok()) return ring.status();
  std::unique_ptr<LiveSource> s(new LiveSource(settings, std::move(ring).value()));
  s->sdp_mtime_ns_ = mtime;
  if (Status st = s->Receive(std::move(sdp).value()); !st.ok()) return st;
  return s;
}

LiveSource::LiveSource(LiveSourceSettings settings, PictureRing ring)
    : settings_(std::move(settings)), ring_(std::move(ring)) {}

LiveSource::~LiveSource() { StopReceiving(); }

Status LiveSource::Receive(TileStreamDescription sdp) {
  StopReceiving();
  std::lock_guard state(state_mu_);
  sdp_ = std::move(sdp);
  colorimetry_ = ParseColorimetry(sdp_.colorimetry).value_or(Colorimetry::kBt709);
  TileReceiverOptions o = ReceiverOptions(sdp_);
  o.on_complete = [this](uint32_t, uint32_t) {
    {
      std::lock_guard lock(mu_);
      complete_ = true;
    }
    wake_.notify_one();
  };
  auto receiver = TileReceiver::Open(std::move(o));
  if (!receiver.ok())
    return Status::IoError(fmt::format("live source {}: port {}: {}", settings_.name, sdp_.port,
                                       receiver.status().message()));
  receiver_ = std::move(receiver).value();
  {
    std::lock_guard lock(mu_);  // the converter before was joined: this one starts afresh
    stop_ = false;
    complete_ = false;
  }
  converter_ = std::thread([this] { Convert(); });
  receiver_->Start();
  return Status::Ok();
}

void LiveSource::StopReceiving() {
  std::lock_guard state(state_mu_);
  if (receiver_) receiver_->Stop();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (converter_.joinable()) converter_.join();
  receiver_.reset();
}

void LiveSource::Refresh() {
  const int64_t mtime = ModifiedNs(settings_.sdp);
  if (mtime == sdp_mtime_ns_) return;
  sdp_mtime_ns_ = mtime;
  auto sdp = ReadSourceSdp(settings_);
  if (!sdp.ok()) {
    spdlog::warn("{}; the stream is received as before", sdp.status().message());
    return;
  }
  if (sdp->tile == sdp_.tile && sdp->port == sdp_.port && sdp->payload_type == sdp_.payload_type &&
      sdp->destination_address == sdp_.destination_address && sdp->ssrc == sdp_.ssrc &&
      sdp->rtx_payload_type == sdp_.rtx_payload_type && sdp->colorimetry == sdp_.colorimetry)
    return;
  const TileStreamDescription before = sdp_;
  if (Status st = Receive(*sdp); !st.ok()) {
    spdlog::error("{}; back to the stream as it was", st.message());
    Receive(before);  // its port was ours a moment ago
    return;
  }
  {
    std::lock_guard state(state_mu_);
    ++restarts_;
  }
  spdlog::info("live source {}: {} now describes {}x{} {} on port {}: received as such",
               settings_.name, settings_.sdp, sdp_.tile.width, sdp_.tile.height,
               SamplingName(sdp_.tile.sampling), sdp_.port);
}

// Each whole frame, once, into the ring's next slot as RGB; a frame that
// came while the one before was converted replaces it (the newest counts).
void LiveSource::Convert() {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return complete_ || stop_; });
      if (stop_) return;
      complete_ = false;
    }
    const std::optional<ReadyFrame> frame = receiver_->TakeReady();
    if (!frame || !frame->complete) continue;
    const int64_t now = MonotonicNs();
    std::byte* slot = ring_.BeginPicture(sdp_.tile.width, sdp_.tile.height);
    PictureToRgb(frame->pixels, sdp_.tile, colorimetry_, slot);
    ring_.Publish(now, frame->timestamp);
    last_picture_ns_.store(now, std::memory_order_relaxed);
    pictures_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::string LiveSource::movie_dir() const { return LiveMovieDir({settings_.name, ring_.path()}); }

bool LiveSource::stopped(int64_t now_ns) const {
  const int64_t last = last_picture_ns_.load(std::memory_order_relaxed);
  return last == 0 || now_ns - last > kStoppedNs;
}

void LiveSource::Describe(int64_t now_ns, nlohmann::json* out) const {
  std::lock_guard state(state_mu_);
  const TileReceiverStats s = receiver_ ? receiver_->Snapshot() : TileReceiverStats{};
  const AssemblerStats& a = s.assembler;
  (*out)["name"] = settings_.name;
  (*out)["live"] = true;
  (*out)["size"] = fmt::format("{}x{}", sdp_.tile.width, sdp_.tile.height);
  (*out)["sampling"] =
      fmt::format("{} {}-bit", SamplingName(sdp_.tile.sampling), SamplingDepth(sdp_.tile.sampling));
  (*out)["fit"] = settings_.fit;
  (*out)["port"] = sdp_.port;
  (*out)["receiving"] = !stopped(now_ns);
  (*out)["pictures"] = pictures_.load(std::memory_order_relaxed);
  (*out)["incomplete"] = a.frames_incomplete;
  (*out)["wrong_size"] = a.frames_wrong_geometry;
  (*out)["lost"] = a.lost;
  (*out)["recovered"] = a.recovered;
  (*out)["nack_requested"] = s.loss.requested;
  (*out)["strangers"] = a.foreign_ssrc + a.foreign_source + a.wrong_payload_type;
  (*out)["malformed"] = a.malformed_total();
  (*out)["kernel_drops"] = s.socket.kernel_drops;
  (*out)["restarts"] = restarts_;
}

Status LiveSources::Start(const WallConfig& c, int job) {
  for (const LiveSourceSettings& l : c.live) {
    const std::string ring = fmt::format("/dev/shm/tilestream-{}-{}", job, l.name);
    auto s = LiveSource::Start(l, ring);
    if (!s.ok()) return s.status();
    spdlog::info("live source {}: receiving what {} describes", l.name, l.sdp);
    sources_.push_back(std::move(s).value());
  }
  if (!sources_.empty()) watcher_ = std::thread([this] { Watch(); });
  return Status::Ok();
}

const LiveSource* LiveSources::Find(const std::string& name) const {
  for (const auto& s : sources_)
    if (s->name() == name) return s.get();
  return nullptr;
}

LiveSources::~LiveSources() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (watcher_.joinable()) watcher_.join();
}

void LiveSources::Watch() {
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; }))
    for (const auto& s : sources_) s->Refresh();
}

void LiveSources::AddStatus(int64_t now_ns, nlohmann::json* out) const {
  if (sources_.empty()) return;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : sources_) {
    nlohmann::json j;
    s->Describe(now_ns, &j);
    list.push_back(std::move(j));
  }
  (*out)["live"] = std::move(list);
}

void LiveSources::AddToListing(int64_t now_ns, nlohmann::json* listing) const {
  nlohmann::json& movies = (*listing)["movies"];
  if (!movies.is_array()) movies = nlohmann::json::array();
  for (const auto& s : sources_) {
    nlohmann::json j{{"fits", true}, {"title", "live: " + s->name()}};
    s->Describe(now_ns, &j);
    movies.push_back(std::move(j));
  }
}

}  // namespace tilestream
