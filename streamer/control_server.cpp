#include "streamer/control_server.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/base/clock.h"
#include "common/base/json_text.h"
#include "common/base/words.h"
#include "common/control/control_port_limits.h"
#include "common/control/control_protocol.h"
#include "common/net/datagram_port.h"
#include "common/wall/token_file.h"

namespace tilestream {
Result<std::unique_ptr<ControlServer>> ControlServer::Open(const WallConfig& config,
                                                           SwapSyncMaster* sync,
                                                           CommandHandler handler) {
  std::unique_ptr<ControlServer> s(new ControlServer(config, sync, std::move(handler)));
  s->receiver_stats_.resize(config.tile_count());
  if (!config.control.token_file.empty()) {
    auto token = ReadToken(config.control.token_file);
    if (!token.ok()) return token.status();
    s->token_ = *token;
  }
  auto fd = ListenTcp(config.control.listen_address, config.control.port);
  if (!fd.ok()) {
    return Status::IoError(
        fmt::format("control listener: {} (is another streamer running? "
                    "control.port in {} sets the port)",
                    fd.status().message(), config.source));
  }
  s->listener_ = std::move(fd).value();
  for (const DisplayNode& n : config.nodes)
    if (auto host = SocketAddress::Resolve(n.address, 0); host.ok())
      s->node_hosts_.push_back(*host);
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  getsockname(s->listener_.get(), reinterpret_cast<sockaddr*>(&a), &len);
  s->port_ = ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&a)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  // Without it the sync's lines go over TCP alone, as a wall whose UDP
  // is blocked has them.
  if (auto udp = BindUdp(config.control.listen_address, s->port_); udp.ok())
    s->sync_udp_ = std::move(udp).value();
  else
    spdlog::warn(
        "swap sync: no datagrams ({}): its lines go over TCP alone, a lost segment "
        "holding the decisions after it back",
        udp.status().message());
  return s;
}

size_t ControlServer::synced_nodes() const {
  return static_cast<size_t>(
      std::count_if(clients_.begin(), clients_.end(), [](const auto& c) { return c->node >= 0; }));
}

void ControlServer::PingSyncNodes() {
  for (auto& c : clients_)
    if (c->node >= 0) SendPing(*c);
}

// As a datagram once the node's come: a round trip that a lost segment
// does not stretch. One copy: a lost ping is one sample less.
void ControlServer::SendPing(Client& c) {
  if (c.udp_peer_length > 0)
    SendCopies(sync_udp_.get(), FormatSyncDatagram(c.udp_key, FormatPing(MonotonicNs())), 1,
               &c.udp_peer, c.udp_peer_length);
  else
    c.channel.Send(FormatPing(MonotonicNs()));
}

void ControlServer::SampleRtt(Client& c, int64_t pong_ns) {
  const int64_t now = MonotonicNs();
  if (pong_ns > now) return;
  c.rtt.Sample(now - pong_ns);
  c.channel.Send(FormatRtt(c.rtt));  // the node's repairs wait as long
  // Three in a row on joining: a round trip with some deviation by tick 0.
  if (c.rtt.samples < 3) SendPing(c);
}

void ControlServer::SetLatency(int64_t ns) {
  latency_ns_ = ns;
  for (auto& c : clients_)
    if (c->node >= 0) c->channel.Send(FormatStamp("latency", ns));
}

RttEstimate ControlServer::NodeRtt(uint32_t node) const {
  for (const auto& c : clients_)
    if (c->node == static_cast<int>(node)) return c->rtt;
  return {};
}

RttEstimate ControlServer::LargestRtt() const {
  RttEstimate most;
  for (const auto& c : clients_) {
    if (c->node < 0 || c->rtt.samples == 0) continue;
    most.rtt_ns = std::max(most.rtt_ns, c->rtt.rtt_ns);
    most.rttvar_ns = std::max(most.rttvar_ns, c->rtt.rttvar_ns);
    ++most.samples;
  }
  return most;
}

void ControlServer::Poll(int64_t timeout_ns) {
  WaitForInput(timeout_ns);
  Serve();
}

void ControlServer::WaitForInput(int64_t timeout_ns) {
  fds_.clear();
  for (const auto& [fd, unused] : watched_) fds_.push_back({fd, POLLIN, 0});
  fds_.push_back({listener_.get(), POLLIN, 0});
  fds_.push_back({sync_udp_.get(), POLLIN, 0});  // -1 (none): ignored
  for (const auto& c : clients_)
    fds_.push_back({c->channel.fd(),
                    static_cast<short>(POLLIN | (c->channel.wants_write() ? POLLOUT : 0)), 0});
  // Not at all while lines from the last call are still waiting; else to
  // the nanosecond (ppoll), so that a tick waited for here is not late.
  bool backlog = false;
  for (const auto& c : clients_) backlog = backlog || c->channel.has_line();
  const int64_t wait_ns = backlog ? 0 : std::max<int64_t>(0, timeout_ns);
  const timespec timeout{static_cast<time_t>(wait_ns / 1'000'000'000),
                         static_cast<long>(wait_ns % 1'000'000'000)};
  ready_ = ppoll(fds_.data(), fds_.size(), &timeout, nullptr);
}

void ControlServer::Serve() {
  const int ready = ready_;
  ready_ = 0;
  const size_t first = watched_.size() + 2;  // the first client's
  for (size_t i = 0; ready > 0 && i < watched_.size(); ++i)
    if (fds_[i].revents & POLLIN) watched_[i].second();
  for (size_t i = first; ready > 0 && i < fds_.size(); ++i) {
    Client& c = *clients_[i - first];
    if (fds_[i].revents & POLLOUT) c.channel.Flush();
    if (!(fds_[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    c.channel.Receive();
  }
  if (ready > 0 && (fds_[first - 1].revents & POLLIN)) ReceiveSyncDatagrams();
  // At most kLinesPerPoll lines of each client per call, so that a flood
  // from one cannot hold up the frame clock; the rest wait in its buffer
  // (which has a limit) for the next call. Lines that arrived before a
  // close are still handled.
  const int64_t now = MonotonicNs();
  for (auto& c : clients_) {
    HandleLines(*c, now);
    EnforceDeadlines(*c, now);
  }
  // New connections after the lines of those taken before: a client taken
  // in the last call has its line read before a newcomer may evict it.
  if (ready > 0 && (fds_[first - 2].revents & POLLIN)) Accept();
  for (auto& c : clients_)
    if (!c->channel.open()) Drop(*c);
  std::erase_if(clients_, [](const auto& c) { return !c->channel.open(); });
}

void ControlServer::HandleLines(Client& c, int64_t now) {
  for (size_t n = 0; n < kLinesPerPoll; ++n) {
    auto line = c.channel.NextLine();
    if (!line) break;
    c.times.last_line_ns = now;
    Handle(c, *line);
  }
}

// A line under way for line_timeout_s is a client holding a place without
// saying anything (a byte every few seconds keeps TCP and any idle bound
// content); so is a command connection without a line for idle_timeout_s
// (common/control/control_port_limits.h).
void ControlServer::EnforceDeadlines(Client& c, int64_t now) {
  if (!c.channel.open()) return;
  switch (CheckControlDeadlines(&c.times, c.channel.has_unfinished_line(), c.node >= 0, now,
                                config_.control)) {
    case ControlDeadline::kNone:
      return;
    case ControlDeadline::kLineTooSlow:
      c.channel.Send(ErrorReply(
          fmt::format("a line not ended within {} s: closing", config_.control.line_timeout_s)));
      return c.channel.Close("line too slow");
    case ControlDeadline::kIdle:
      c.channel.Send(
          ErrorReply(fmt::format("idle for {} s: closing", config_.control.idle_timeout_s)));
      return c.channel.Close("idle");
  }
}

bool ControlServer::Admits(const sockaddr_storage& peer) {
  const auto open = static_cast<size_t>(std::count_if(
      clients_.begin(), clients_.end(), [](const auto& c) { return c->channel.open(); }));
  const bool from_node = std::any_of(node_hosts_.begin(), node_hosts_.end(),
                                     [&](const SocketAddress& n) { return n.SameHost(peer); });
  if (ControlPortHasRoom(open, config_.control, config_.nodes.size(), from_node)) return true;
  // The stalest command connection gives its place up, so that one just
  // taken, whose first line is still on its way, outlasts the dribblers.
  // Sync connections stay.
  // Of those taken in this same call, only one that began a line and did
  // not end it: a storm of newcomers must not evict a good client taken
  // among them before its line came.
  Client* stalest = nullptr;
  for (auto& c : clients_)
    if (c->node < 0 && c->channel.open() &&
        (c->accepted_in != accept_calls_ || c->times.line_started_ns >= 0) &&
        (!stalest || StalerThan(c->times, stalest->times)))
      stalest = c.get();
  if (!stalest) return false;
  stalest->channel.Send(ErrorReply("the control port is full: closed for a newer client"));
  stalest->channel.Close("evicted");
  return true;
}

// At most kAcceptsPerPoll connections a call, like lines: a storm of
// connections waits in the accept queue and cannot hold the frame clock up.
// A client that speaks at once (wallctl, a display node) has its first
// line read and answered as it is taken: what it asked is answered even
// if a storm of newcomers evicts it later.
void ControlServer::Accept() {
  ++accept_calls_;
  for (size_t n = 0; n < kAcceptsPerPoll; ++n) {
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    UniqueFd fd(accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &length,
                        SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd.valid()) return;
    DetectDeadPeer(fd.get());
    auto c = std::make_unique<Client>();
    c->channel = LineChannel(std::move(fd), config_.control.max_line_bytes);
    c->authorised = token_.empty();
    const int64_t now = MonotonicNs();
    c->times.last_line_ns = now;
    c->accepted_in = accept_calls_;
    if (!Admits(peer)) {
      c->channel.Send(
          ErrorReply(fmt::format("too many clients (at most {})", config_.control.max_clients)));
      continue;
    }
    Client& taken = *clients_.emplace_back(std::move(c));
    taken.channel.Receive();
    HandleLines(taken, now);
    if (taken.channel.has_unfinished_line()) taken.times.line_started_ns = now;
  }
}

// Also for lines that came before the peer closed (a sync report, a last
// command): a closed channel just drops the reply. A connection closed for a
// wrong token is no longer authorised, so nothing after that runs.
void ControlServer::Handle(Client& c, const std::string& line) {
  if (c.node >= 0) {  // a sync connection
    if (auto pong = ParseStamp("pong", line)) return SampleRtt(c, *pong);
    if (auto r = ParseSyncReport(line)) return HandleSyncReport(c, *r);
    // Anything else on a sync connection is a command (the receiver's keys).
  }
  const auto [word, rest] = SplitFirstWord(line);
  if (word.empty()) return;
  if (word == "auth" && c.node < 0) {
    if (token_.empty()) {  // nothing to check on this listener
      c.channel.Send(OkReply());
      return;
    }
    c.authorised = ConstantTimeEquals(rest, token_);
    if (!c.authorised) {
      c.channel.Send(ErrorReply("wrong token"));
      c.channel.Close("wrong token");
      return;
    }
    c.channel.Send(OkReply());
    return;
  }
  if (!c.authorised) {
    c.channel.Send(ErrorReply("this listener needs 'auth TOKEN' first"));
    c.channel.Close("not authorised");
    return;
  }
  if (word == "sync" && c.node < 0) return Subscribe(c, rest);
  c.channel.Send(handler_ ? handler_(line) : ErrorReply("unknown command: " + Printable(word)));
}

// A node's own tiles only.
void ControlServer::HandleSyncReport(Client& c, const SyncReport& r) {
  if (r.tile >= config_.tile_count() ||
      config_.routes[r.tile].node != static_cast<uint32_t>(c.node))
    return;
  switch (r.kind) {
    case SyncReport::Kind::kComplete:
      sync_->Complete(r.tile, r.timestamp);
      break;
    case SyncReport::Kind::kShown:
      sync_->Shown(r.tile, r.timestamp, r.shown_ns);
      break;
    case SyncReport::Kind::kStats:
      receiver_stats_[r.tile] = {true, r.stats};
      break;
  }
}

// Datagrams from anyone: taken only with a synced node's key, and then
// only its sync reports and pongs (never a command); where the last one
// came from is where its decisions go. At most kDatagramsPerPoll a call,
// like lines.
void ControlServer::ReceiveSyncDatagrams() {
  constexpr int kDatagramsPerPoll = 256;
  std::array<char, kMaxSyncDatagram + 1> buffer;
  for (int n = 0; n < kDatagramsPerPoll; ++n) {
    sockaddr_storage from{};
    socklen_t length = sizeof from;
    const ssize_t got = recvfrom(sync_udp_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from), &length);
    if (got < 0) return;
    const auto d = ParseSyncDatagram({buffer.data(), static_cast<size_t>(got)});
    if (!d) continue;
    Client* c = nullptr;
    for (auto& client : clients_)
      if (client->node >= 0 && client->udp_key != 0 && client->udp_key == d->key &&
          client->channel.open())
        c = client.get();
    if (!c) continue;
    c->udp_peer = from;
    c->udp_peer_length = length;
    for (size_t i = 0; i < d->count; ++i) {
      if (auto pong = ParseStamp("pong", d->lines[i]))
        SampleRtt(*c, *pong);
      else if (auto r = ParseSyncReport(d->lines[i]); r && r->kind == SyncReport::Kind::kComplete)
        HandleSyncReport(*c, *r);
    }
  }
}

void ControlServer::Subscribe(Client& c, std::string_view words) {
  if (!config_.sync.enabled) {
    c.channel.Send(
        ErrorReply(fmt::format("swap sync is off (sync.enabled in {})", config_.source)));
    return;
  }
  const size_t space = words.find(' ');
  const std::string node_name(words.substr(0, space));
  const std::string_view said = space == std::string_view::npos ? "" : words.substr(space + 1);
  int node = -1;
  for (size_t n = 0; n < config_.nodes.size(); ++n)
    if (config_.nodes[n].name == node_name) node = static_cast<int>(n);
  if (node < 0) {
    c.channel.Send(ErrorReply(
        fmt::format("no display node '{}' in {}", Printable(node_name), config_.source)));
    return;
  }
  if (const std::string refusal = GeometryRefusal(static_cast<uint32_t>(node), said);
      !refusal.empty()) {
    c.channel.Send(ErrorReply(refusal));
    return;
  }
  // A restarted receiver may reconnect before its old connection is seen
  // closing: the newest connection of a node wins.
  for (auto& other : clients_) {
    if (other.get() != &c && other->node == node) {
      Drop(*other);
      other->channel.Close("replaced by a new connection of the node");
    }
  }
  c.node = node;
  c.rtt = {};
  c.udp_peer_length = 0;
  c.carrier.Clear();
  c.udp_key = 0;
  if (sync_udp_.valid() && getrandom(&c.udp_key, sizeof c.udp_key, 0) != sizeof c.udp_key)
    c.udp_key = 0;  // no key, no datagrams: TCP alone
  nlohmann::json tiles = nlohmann::json::array();
  for (uint32_t t = 0; t < config_.tile_count(); ++t) {
    if (config_.routes[t].node != static_cast<uint32_t>(node)) continue;
    sync_->SetMember(t, true);
    tiles.push_back(TileId::FromIndex(t, config_.wall.layout).Name());
  }
  nlohmann::json reply = {{"ok", true}, {"sync", node_name}, {"tiles", tiles}};
  if (c.udp_key != 0) reply["udp_key"] = FormatSyncKey(c.udp_key);
  c.channel.Send(JsonText(reply));
  c.channel.Send(FormatPing(MonotonicNs()));  // a round trip before the first tick
  if (latency_ns_ > 0) c.channel.Send(FormatStamp("latency", latency_ns_));
}

// A node that says its tile size (receivers since issue 44) must have the
// wall's: one that assumed another (a movie cut for 320x200 tiles played to
// receivers started for 640x400) would show nothing, and the cause would be
// in its own log only.
std::string ControlServer::GeometryRefusal(uint32_t node, std::string_view said) {
  std::string refusal;
  const TileGeometry& wall = config_.wall.tile;
  if (!said.empty()) {
    const auto size = ParseSize(said, "the tile size", 1, kMaxTileDimension);
    if (!size.ok()) {  // said by the node: printable, bounded
      refusal = fmt::format("display node '{}': its tile size '{}' is not WxH within {}x{}",
                            config_.nodes[node].name, Printable(said), kMaxTileDimension,
                            kMaxTileDimension);
    } else if (size->width != wall.width || size->height != wall.height) {
      refusal = fmt::format(
          "display node '{}' has tiles of {}x{}, but the wall streams {}x{}: start its receiver "
          "with the wall's tile size",
          config_.nodes[node].name, size->width, size->height, wall.width, wall.height);
    }
  }
  // A node already synced keeps its place, and what a stranger says in its
  // name is refused without showing the node as refused.
  const bool synced = std::any_of(clients_.begin(), clients_.end(),
                                  [&](const auto& c) { return c->node == static_cast<int>(node); });
  if (synced) return refusal;
  if (!refusal.empty() && refusal != refusals_[node])
    spdlog::error("swap sync: {}; the wall plays on without it", refusal);
  refusals_[node] = refusal;
  return refusal;
}

void ControlServer::Drop(Client& c) {
  if (c.node < 0) return;
  for (uint32_t t = 0; t < config_.tile_count(); ++t)
    if (config_.routes[t].node == static_cast<uint32_t>(c.node)) sync_->SetMember(t, false);
  c.node = -1;
}

void ControlServer::SendSync(const std::vector<SyncEvent>& events) {
  if (events.empty()) return;
  for (auto& c : clients_) {
    if (c->node < 0) continue;
    for (const SyncEvent& e : events) {
      c->channel.Send(FormatSyncEvent(e));
      c->carrier.Add(e);
    }
    if (c->udp_peer_length > 0)
      SendCopies(sync_udp_.get(), c->carrier.Datagram(c->udp_key), kSyncCopies, &c->udp_peer,
                 c->udp_peer_length);
  }
}

}  // namespace tilestream
