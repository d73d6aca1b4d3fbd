#include "receiver/sync_client.h"

#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <time.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/base/clock.h"
#include "common/base/json_text.h"
#include "common/net/datagram_port.h"

namespace tilestream {
namespace {

constexpr int64_t kRetryNs = 250'000'000;  // a refused connect costs nothing

}  // namespace

bool SyncClient::subscribed() const {
  std::lock_guard lock(mu_);
  return subscribed_;
}

void SyncClient::Connect() {
  next_attempt_ns_ = MonotonicNs() + kRetryNs;
  auto fd = ConnectTcp(options_.address, options_.port, 200);
  if (!fd.ok()) return;  // the coordinator is not up (yet): try again later, quietly
  std::lock_guard lock(mu_);
  channel_ = LineChannel(std::move(fd).value());
  if (!options_.token.empty()) channel_.Send("auth " + options_.token);
  channel_.Send("sync " + options_.node +
                (options_.tile.width > 0
                     ? fmt::format(" {}x{}", options_.tile.width, options_.tile.height)
                     : ""));
}

void SyncClient::Lost(const std::string& why) {
  {
    std::lock_guard lock(mu_);
    if (subscribed_)
      fmt::print("receiver: swap sync with {}:{} lost ({})\n", options_.address, options_.port,
                 why);
    subscribed_ = false;
    channel_ = LineChannel();
    udp_.reset();
    udp_key_ = 0;
    lan_.reset();
    leader_at_.reset();
  }
  leader_.reset();
  std::fflush(stdout);
}

bool SyncClient::WaitForInput(int timeout_ms) {
  int fd = -1, udp = -1, lan = -1;
  short wanted = POLLIN;
  {
    std::lock_guard lock(mu_);
    if (channel_.open()) fd = channel_.fd();
    if (channel_.wants_write()) wanted |= POLLOUT;  // a line the socket did not take at once
    udp = udp_.get();
    lan = lan_.get();
  }
  if (fd < 0) {
    if (MonotonicNs() >= next_attempt_ns_) Connect();
    {
      std::lock_guard lock(mu_);
      fd = channel_.open() ? channel_.fd() : -1;
    }
    // Not connected: wait without the lock, which the tiles' network
    // threads take for every complete frame (Report*). Held through this
    // sleep, it stalled them up to 100 ms a frame: a node whose sync was
    // refused or absent lost most of its frames on a loaded machine.
    if (fd < 0) {
      if (timeout_ms > 0) poll(nullptr, 0, timeout_ms);
      return false;
    }
  }
  pollfd p[3] = {{fd, wanted, 0}, {udp, POLLIN, 0}, {lan, POLLIN, 0}};  // -1: none, ignored
  return poll(p, 3, timeout_ms) > 0;
}

void SyncClient::Read(std::vector<SyncEvent>* events) {
  std::vector<std::string> lines;
  bool open;
  {
    std::lock_guard lock(mu_);
    channel_.Receive();
    channel_.Flush();
    while (auto line = channel_.NextLine()) lines.push_back(std::move(*line));
    open = channel_.open();
  }
  ReadDatagrams(events);
  ReadLan(events);
  for (const std::string& line : lines) {
    if (TakeLine(line, Way::kTcp, events)) continue;
    if (auto ping = ParseStamp("ping", line)) {  // the coordinator measures the round trip
      Send(FormatPong(*ping));
      continue;
    }
    if (auto rtt = ParseRtt(line)) {
      rtt_.Set(*rtt);
      continue;
    }
    if (auto latency = ParseStamp("latency", line)) {
      latency_ns_.store(*latency, std::memory_order_relaxed);
      continue;
    }
    if (auto copies = ParseStamp("nack_copies", line)) {
      if (*copies == 1 || *copies == 2)
        nack_copies_.store(static_cast<int>(*copies), std::memory_order_relaxed);
      continue;
    }
    // A JSON reply: to auth, or to sync.
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (JsonBool(j, "ok")) {
      if (j.contains("sync")) Subscribed(JsonString(j, "udp_key", ""));
      continue;
    }
    const std::string error = Printable(JsonString(j, "error", line), 200);
    if (subscribed()) {  // the reply to a key's command
      spdlog::warn("{}", error);
      continue;
    }
    if (error != last_error_) spdlog::warn("swap sync refused: {}", error);
    last_error_ = error;
    Lost(error);
    return;
  }
  if (!open) return Lost("the coordinator closed the connection");
  Lead(events);
}

void SyncClient::Subscribed(const std::string& key) {
  filter_.Reset();                                   // the coordinator's ticks, from its first
  nack_copies_.store(1, std::memory_order_relaxed);  // until this one says more
  std::lock_guard lock(mu_);
  subscribed_ = true;
  last_error_.clear();
  if (const auto k = ParseSyncKey(key)) {
    if (auto udp = ConnectUdp(options_.address, options_.port); udp.ok()) {
      udp_ = std::move(udp).value();
      udp_key_ = *k;
      // Where this node's datagrams come from: the decisions go there.
      SendCopies(udp_.get(), FormatSyncDatagram(udp_key_, ""), kSyncCopies);
      OpenLan();
    }
  }
  fmt::print("receiver: swap sync with the coordinator at {}:{}{}\n", options_.address,
             options_.port, udp_.valid() ? " (and datagrams)" : "");
  std::fflush(stdout);
}

// At most 64 a call; each a decision datagram (or ping) with this
// connection's key, anything else dropped.
void SyncClient::ReadDatagrams(std::vector<SyncEvent>* events) {
  std::array<char, kMaxSyncDatagram + 1> buffer;
  for (int n = 0; n < 64; ++n) {
    std::unique_lock lock(mu_);
    if (!udp_.valid()) return;
    const ssize_t got = recv(udp_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (got < 0) return;
    const auto d = ParseSyncDatagram(std::string_view(buffer.data(), static_cast<size_t>(got)));
    if (!d || d->key != udp_key_) continue;
    for (size_t i = 0; i < d->count; ++i) {
      if (auto ping = ParseStamp("ping", d->lines[i])) {
        SendCopies(udp_.get(), FormatSyncDatagram(udp_key_, FormatPong(*ping)), 1);
      } else {
        lock.unlock();  // the leader's lines take it
        TakeLine(d->lines[i], Way::kDatagram, events);
        lock.lock();
      }
    }
  }
}

void SyncClient::Send(const std::string& line) {
  std::lock_guard lock(mu_);
  if (subscribed_) channel_.Send(line);
}

void SyncClient::ReportStats(uint32_t tile, const TileRepairStats& stats) {
  Send(FormatStats(tile, stats));
}

void SyncClient::SendCommand(const std::string& line) { Send(line); }

void SyncClient::ReportComplete(uint32_t tile, uint32_t timestamp) {
  const std::string line = FormatComplete(tile, timestamp);
  std::lock_guard lock(mu_);
  if (!subscribed_) return;
  channel_.Send(line);
  if (udp_.valid()) SendCopies(udp_.get(), FormatSyncDatagram(udp_key_, line), kSyncCopies);
  if (leader_at_ && lan_.valid())
    SendCopies(lan_.get(), FormatSyncDatagram(wall_key_, line), kSyncCopies, &leader_at_->storage,
               leader_at_->length);
}

void SyncClient::ReportShown(uint32_t tile, uint32_t timestamp, int64_t shown_ns) {
  Send(FormatShown(tile, timestamp, shown_ns));
}

}  // namespace tilestream
