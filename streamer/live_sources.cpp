#include "streamer/live_sources.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/base/clock.h"
#include "common/base/json_text.h"
#include "common/image/bitmap_font.h"
#include "common/image/slate.h"
#include "common/image/thumbnail.h"
#include "common/live/live_tile_frames.h"
#include "common/live/to_rgb.h"

namespace tilestream {

namespace {

// The source's stream as the receiver's stream receiver takes it: its
// payload type, its SSRC where the SDP names one (else the first sender's),
// NACKs where it offers RTX, frames handed on whole only.
TileReceiverOptions ReceiverOptions(const TileStreamDescription& d, const std::string& interface) {
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
  // A unicast address is ours; a multicast group is joined on `interface`.
  o.socket.bind_address = d.destination_address.empty() ? "0.0.0.0" : d.destination_address;
  o.socket.multicast_interface = interface;
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
                                                      const std::string& ring_path, double wall_fps,
                                                      std::shared_ptr<const Image> slate) {
  const int64_t mtime = ModifiedNs(settings.sdp);
  auto sdp = ReadSourceSdp(settings);
  if (!sdp.ok()) return sdp.status();
  auto ring = PictureRing::Create(ring_path);
  if (!ring.ok()) return ring.status();
  std::unique_ptr<LiveSource> s(
      new LiveSource(settings, std::move(ring).value(), wall_fps, std::move(slate)));
  s->sdp_mtime_ns_ = mtime;
  if (Status st = s->Receive(std::move(sdp).value()); !st.ok()) return st;
  return s;
}

LiveSource::LiveSource(LiveSourceSettings settings, PictureRing ring, double wall_fps,
                       std::shared_ptr<const Image> slate)
    : settings_(std::move(settings)),
      ring_(std::move(ring)),
      min_spacing_ns_(static_cast<int64_t>(0.5e9 / wall_fps)),
      started_ns_(MonotonicNs()),
      slate_(std::move(slate)) {}

LiveSource::~LiveSource() { StopReceiving(); }

Status LiveSource::Receive(TileStreamDescription sdp) {
  StopReceiving();
  std::lock_guard state(state_mu_);
  sdp_ = std::move(sdp);
  colorimetry_ = ParseColorimetry(sdp_.colorimetry).value_or(Colorimetry::kBt709);
  TileReceiverOptions o = ReceiverOptions(sdp_, settings_.interface);
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

// Each whole frame, once, into the ring's next slot as RGB; frames that
// came while the one before was converted, or sooner than min_spacing_ns_
// after it, are coalesced into the newest (a source faster than the wall
// costs no more than two pictures a tick). The slate when it is due.
void LiveSource::Convert() {
  for (;;) {
    if (WaitForFrame()) {
      ConvertNewest();
      continue;
    }
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
    }
    ShowSlate();
  }
}

bool LiveSource::WaitForFrame() {
  std::unique_lock lock(mu_);
  // Whole hours at most: a hold of "for ever" is a wait that ends.
  const int64_t due = std::min(SlateDueNs() - MonotonicNs(), int64_t{3600} * kNsPerSecond);
  if (!wake_.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(due, 0)),
                      [this] { return complete_ || stop_; }))
    return false;  // the slate is due (or not yet: the next turn waits again)
  if (stop_) return false;
  const int64_t early = last_convert_ns_ + min_spacing_ns_ - MonotonicNs();
  if (early > 0 && wake_.wait_for(lock, std::chrono::nanoseconds(early), [this] { return stop_; }))
    return false;
  complete_ = false;
  return true;
}

void LiveSource::ConvertNewest() {
  const std::optional<ReadyFrame> frame = receiver_->TakeReady();
  if (!frame || !frame->complete) return;
  const int64_t now = MonotonicNs();
  std::byte* slot = ring_.BeginPicture(sdp_.tile.width, sdp_.tile.height);
  PictureToRgb(frame->pixels, sdp_.tile, colorimetry_, slot);
  ring_.Publish(now, frame->timestamp);
  last_convert_ns_ = now;
  last_picture_ns_.store(now, std::memory_order_relaxed);
  pictures_.fetch_add(1, std::memory_order_relaxed);
  slate_shown_.store(false, std::memory_order_relaxed);
}

int64_t LiveSource::SlateDueNs() const {
  if (slate_shown_.load(std::memory_order_relaxed)) return kNever;
  const int64_t last = last_picture_ns_.load(std::memory_order_relaxed);
  return (last != 0 ? last : started_ns_) + static_cast<int64_t>(settings_.hold_s * 1e9);
}

// The wall's slate as it is (the tiles scale it as they scale the source),
// or a black picture of the source's size saying whose signal is missing.
void LiveSource::ShowSlate() {
  if (MonotonicNs() < SlateDueNs()) return;  // woken early: not yet
  if (slate_) {
    std::byte* slot = ring_.BeginPicture(slate_->width, slate_->height);
    std::memcpy(slot, slate_->rgb.data(), slate_->rgb.size());
  } else {
    const uint32_t w = sdp_.tile.width, h = sdp_.tile.height;
    std::byte* slot = ring_.BeginPicture(w, h);
    const std::span<std::byte> rgb(slot, size_t{w} * h * 3);
    std::memset(slot, 0, rgb.size());
    const std::string text = settings_.name + ": NO SIGNAL";
    const uint32_t scale =
        std::max<uint32_t>(1, std::min(h / TextHeight(12), w / (TextWidth(text, 1) + 2)));
    DrawText(rgb, w, h, (w - std::min(w, TextWidth(text, scale))) / 2,
             (h - std::min(h, TextHeight(scale))) / 2, text, scale);
  }
  ring_.Publish(MonotonicNs(), 0);
  slate_shown_.store(true, std::memory_order_relaxed);
  spdlog::warn("live source {}: no picture for {:g} s: the wall shows the slate", settings_.name,
               settings_.hold_s);
}

Image LiveSource::Thumbnail() const {
  for (int attempt = 0; attempt < 3; ++attempt) {  // torn by the writer: the next newest
    const std::optional<RingPicture> p = ring_.Find(ring_.newest());
    if (!p) return {};
    const ThumbnailSize size = ThumbnailOf(p->width, p->height);
    Image image{size.width, size.height, std::vector<std::byte>(size.bytes())};
    MakeThumbnail(p->pixels, p->width, p->height, size, image.rgb.data());
    if (ring_.Intact(*p)) return image;
  }
  return {};
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
  const int64_t last = last_picture_ns_.load(std::memory_order_relaxed);
  if (stopped(now_ns))  // since its last picture, or since the wall started
    (*out)["silent_s"] = std::round((now_ns - (last != 0 ? last : started_ns_)) / 1e8) / 10;
  (*out)["slate"] = slate_shown_.load(std::memory_order_relaxed);
  (*out)["hold_s"] = settings_.hold_s;
  (*out)["frames"] = a.frames_complete;  // whole frames received; pictures: those converted
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

// The wall's slate for a source that stopped: the picture as it is, where
// a ring's slot holds it.
std::shared_ptr<const Image> LiveSlate(const WallConfig& c) {
  if (c.slate_path.empty() || c.live.empty()) return nullptr;
  auto image = ReadSlate(c.slate_path);
  if (image.ok() && (image->width > kMaxPictureWidth || image->height > kMaxPictureHeight))
    image = Status::InvalidArgument(fmt::format("{}x{} is larger than a live picture's {}x{}",
                                                image->width, image->height, kMaxPictureWidth,
                                                kMaxPictureHeight));
  if (image.ok()) return std::make_shared<const Image>(std::move(image).value());
  spdlog::warn("live sources: the slate {}: {}; a source that stops shows its name on black",
               c.slate_path, image.status().message());
  return nullptr;
}

Status LiveSources::Start(const WallConfig& c, int job) {
  const std::shared_ptr<const Image> slate = LiveSlate(c);
  for (const LiveSourceSettings& l : c.live) {
    const std::string ring = fmt::format("/dev/shm/tilestream-{}-{}", job, l.name);
    auto s = LiveSource::Start(l, ring, c.wall.fps, slate);
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
