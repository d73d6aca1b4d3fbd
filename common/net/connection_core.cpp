#include "common/net/connection_core.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/net/line_channel.h"

namespace tilestream {
namespace {

constexpr uint64_t kListenerTag = uint64_t{1} << 63;  // epoll data of the listener
constexpr uint64_t kWatchedTag = uint64_t{1} << 62;   // and of a watched fd (| its index)
constexpr size_t kReadChunk = 16384;
constexpr size_t kEvents = 256;
constexpr int64_t kAcceptPauseNs = 100 * kNsPerMs;  // out of descriptors: wait, do not spin

// The host of a peer as bytes, IPv4-mapped IPv6 as IPv4: the key of the
// per-address limits.
std::string HostKey(const sockaddr_storage& peer) {
  if (peer.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(peer).sin_addr;
    return std::string(reinterpret_cast<const char*>(&a), sizeof a);
  }
  const auto& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&a)) return std::string(reinterpret_cast<const char*>(&a) + 12, 4);
  return std::string(reinterpret_cast<const char*>(&a), sizeof a);
}

// A connection's descriptors can reach max_connections: the soft limit on
// open files is raised toward the hard one when it is lower.
void MakeRoomForConnections(uint32_t connections) {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return;
  const rlim_t wanted = std::min<rlim_t>(files.rlim_max, files.rlim_cur + connections);
  if (files.rlim_cur < wanted) {
    files.rlim_cur = wanted;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

// Try again when the socket is ready.
bool IsSoft(int err) {
  return err == EINTR || err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS || err == ENOMEM;
}

}  // namespace

ConnectionCore::ConnectionCore(const ConnectionCoreOptions& options, ConnectionProtocol* protocol)
    : options_(options),
      protocol_(protocol),
      clock_(options.clock ? options.clock : &monotonic_),
      counters_(options.counters ? options.counters : &own_counters_),
      gate_(options.limits) {}

ConnectionCore::~ConnectionCore() = default;

Result<std::unique_ptr<ConnectionCore>> ConnectionCore::Listen(const ConnectionCoreOptions& options,
                                                               ConnectionProtocol* protocol) {
  std::unique_ptr<ConnectionCore> core(new ConnectionCore(options, protocol));
  if (Status s = core->Open(); !s.ok()) return s;
  MakeRoomForConnections(options.limits.max_connections + options.limits.reserved);
  return core;
}

Status ConnectionCore::Open() {
  auto fd = ListenTcp(options_.listen_address, options_.port);
  if (!fd.ok())
    return Status::IoError(fmt::format("{}: cannot listen on {} port {}: {}", options_.name,
                                       options_.listen_address, options_.port,
                                       fd.status().message()));
  listener_ = std::move(fd).value();
  epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) return Status::IoError("epoll", errno);
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = kListenerTag;
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listener_.get(), &e);
  sockaddr_storage a{};
  socklen_t length = sizeof a;
  getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&a), &length);
  port_ = ntohs(a.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(a).sin_port
                                       : reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return Status::Ok();
}

void ConnectionCore::Watch(int fd, std::function<void()> on_readable) {
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = kWatchedTag | watched_.size();
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &e);
  watched_.push_back({fd, std::move(on_readable)});
}

// -- the loop ---------------------------------------------------------------

void ConnectionCore::Wait(int64_t timeout_ns) {
  const int64_t now = clock_->NowNs();
  int64_t until = std::min(gate_.NextDeadline(),
                           accepts_paused_until_ != 0 ? accepts_paused_until_ : kNoDeadline);
  int64_t wait_ns = std::max<int64_t>(0, timeout_ns);
  if (until != kNoDeadline) wait_ns = std::min(wait_ns, std::max<int64_t>(0, until - now));
  if (!again_.empty() || !written_.empty() || !closed_.empty()) wait_ns = 0;
  const timespec timeout{static_cast<time_t>(wait_ns / kNsPerSecond),
                         static_cast<long>(wait_ns % kNsPerSecond)};
  epoll_event events[kEvents];
  int n = epoll_pwait2(epoll_.get(), events, kEvents, &timeout, nullptr);
  if (n < 0 && errno == ENOSYS)  // a kernel before 5.11: to the millisecond, rounded up
    n = epoll_wait(epoll_.get(), events, kEvents,
                   static_cast<int>((wait_ns + kNsPerMs - 1) / kNsPerMs));
  ready_ids_.clear();
  ready_events_.clear();
  for (int i = 0; i < n; ++i) {
    ready_ids_.push_back(events[i].data.u64);
    ready_events_.push_back(events[i].events);
  }
}

void ConnectionCore::Handle() {
  accept_ready_ = false;
  for (size_t i = 0; i < ready_ids_.size(); ++i) {
    const uint64_t id = ready_ids_[i];
    if (id == kListenerTag) {
      accept_ready_ = true;
    } else if (id & kWatchedTag) {
      watched_[id & ~kWatchedTag].on_readable();
    } else {
      OnEvents(id, ready_events_[i]);
    }
  }
  ready_ids_.clear();
  // Work left from the last round, once each; then what was written. The
  // lists are swapped with a scratch one, so a round allocates nothing.
  const int64_t now = clock_->NowNs();
  scratch_.swap(again_);
  for (uint64_t id : scratch_) {
    if (!open(id)) continue;
    protocol_->Readable(id, now);
    if (open(id)) Rewatch(id, connections_.at(id));  // it may have room to read again
  }
  scratch_.clear();
  while (!written_.empty()) {
    scratch_.swap(written_);
    for (uint64_t id : scratch_) {
      if (!open(id)) continue;
      protocol_->Written(id, now);
      if (open(id)) Rewatch(id, connections_.at(id));
    }
    scratch_.clear();
  }
  OnDeadlines(now);
  if (accept_ready_ || (accepts_paused_until_ != 0 && now >= accepts_paused_until_)) Accept(now);
  Reap();
}

void ConnectionCore::OnEvents(uint64_t id, uint32_t events) {
  const auto it = connections_.find(id);
  if (it == connections_.end() || it->second.closed) return;
  Connection& c = it->second;
  if (events & EPOLLOUT) Write(id, c);
  if (c.closed) return;
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
    // A hang-up or error on one not being read (served, or its input
    // full) ends it: epoll would report it every round.
    const bool reading = !c.paused && (c.draining || c.in.size() < options_.max_input);
    const bool alive = (events & EPOLLIN) || reading ? Read(c) : false;
    if (c.draining) {
      if (!alive) Close(id);
      return;
    }
    if (!c.in.empty()) protocol_->Readable(id, clock_->NowNs());
    if (!alive) Close(id);  // after what it sent before it closed
  }
  if (open(id)) Rewatch(id, connections_.at(id));
}

bool ConnectionCore::Read(Connection& c) {
  char buffer[kReadChunk];
  while (c.draining || c.in.size() < options_.max_input) {
    const size_t room =
        c.draining ? sizeof buffer : std::min(sizeof buffer, options_.max_input - c.in.size());
    const ssize_t n = recv(c.fd.get(), buffer, room, 0);
    if (n < 0 && IsSoft(errno)) return true;
    if (n <= 0) return false;  // closed or reset
    if (!c.draining) c.in.append(buffer, static_cast<size_t>(n));
    if (static_cast<size_t>(n) < room) return true;  // the socket had no more
  }
  return true;
}

void ConnectionCore::Write(uint64_t id, Connection& c) {
  while (c.sent < c.out.size()) {
    const ssize_t n = send(c.fd.get(), c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0 && IsSoft(errno)) return Rewatch(id, c);
    if (n <= 0) return Close(id);
    c.sent += static_cast<size_t>(n);
  }
  c.out.clear();
  c.sent = 0;
  if (c.close_after_write && !c.draining) {
    shutdown(c.fd.get(), SHUT_WR);
    c.draining = true;
    c.paused = false;
    c.in.clear();
    const int64_t now = clock_->NowNs();
    gate_.Stand(id, {Yield::kFirst, now, now + kDrainNs});
  } else if (!c.close_after_write) {
    written_.push_back(id);
  }
  Rewatch(id, c);
}

void ConnectionCore::Rewatch(uint64_t id, Connection& c) {
  uint32_t want = 0;
  if (!c.paused && (c.draining || c.in.size() < options_.max_input)) want |= EPOLLIN;
  if (!c.out.empty()) want |= EPOLLOUT;
  if (c.watched == want) return;
  c.watched = want;
  epoll_event e{};
  e.events = want;
  e.data.u64 = id;
  epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, c.fd.get(), &e);
}

// -- newcomers ----------------------------------------------------------------

void ConnectionCore::Accept(int64_t now) {
  for (size_t n = 0; n < kAcceptsPerRound; ++n) {
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    UniqueFd fd(accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &length,
                        SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd.valid()) return PauseAcceptsIfOutOfFiles(now);
    ResumeAccepts(now);
    Admit(std::move(fd), peer, now);
  }
}

// A client that speaks at once (wallctl, a display node, a scraper) has
// what it said read and handled as it is taken: what it asked is answered
// even if a storm of newcomers evicts it later.
void ConnectionCore::Admit(UniqueFd fd, const sockaddr_storage& peer, int64_t now) {
  const uint64_t id = next_id_++;
  uint64_t evicted = 0;
  const bool reserved = options_.reserved && options_.reserved(peer);
  const std::string address = HostKey(peer);
  const ConnectionGate::Verdict v = gate_.Admit(id, address, now, reserved, &evicted);
  if (evicted != 0) {
    counters_->evicted.fetch_add(1, std::memory_order_relaxed);
    SayAndClose(evicted, protocol_->Eviction());
  }
  if (v != ConnectionGate::Verdict::kAdmitted) {
    counters_->refused.fetch_add(1, std::memory_order_relaxed);
    const std::string refusal = protocol_->Refusal();
    [[maybe_unused]] ssize_t r =
        send(fd.get(), refusal.data(), refusal.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    return;
  }
  DetectDeadPeer(fd.get());
  const int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = id;
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd.get(), &e);
  Connection& c = connections_[id];
  c.fd = std::move(fd);
  c.address = address;
  c.watched = EPOLLIN;
  counters_->accepted.fetch_add(1, std::memory_order_relaxed);
  CountOpen();
  protocol_->Opened(id, now);
  OnEvents(id, EPOLLIN);
}

// Out of descriptors, the listener stays readable: stop watching it for a
// moment instead of spinning on it.
void ConnectionCore::PauseAcceptsIfOutOfFiles(int64_t now) {
  if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM) return;
  accepts_paused_until_ = now + kAcceptPauseNs;
  epoll_event e{};
  e.data.u64 = kListenerTag;
  epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, listener_.get(), &e);
}

void ConnectionCore::ResumeAccepts(int64_t now) {
  if (accepts_paused_until_ == 0 || now < accepts_paused_until_) return;
  accepts_paused_until_ = 0;
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = kListenerTag;
  epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, listener_.get(), &e);
}

// -- deadlines and closing ----------------------------------------------------

void ConnectionCore::OnDeadlines(int64_t now) {
  if (gate_.NextDeadline() > now) return;
  expired_.clear();
  gate_.Expired(now, &expired_);
  for (uint64_t id : expired_) {
    if (!open(id)) continue;
    if (!connections_.at(id).draining) protocol_->Expired(id);
    Close(id);
  }
}

void ConnectionCore::SayAndClose(uint64_t id, const std::string& bytes) {
  const auto it = connections_.find(id);
  if (it == connections_.end() || it->second.closed) return;
  if (!bytes.empty()) {
    [[maybe_unused]] ssize_t r =
        send(it->second.fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  Close(id);
}

bool ConnectionCore::open(uint64_t id) const {
  const auto it = connections_.find(id);
  return it != connections_.end() && !it->second.closed;
}

bool ConnectionCore::Send(uint64_t id, std::string_view bytes) {
  if (!open(id)) return false;
  Connection& c = connections_.at(id);
  if (c.close_after_write) return false;
  if (c.out.size() - c.sent + bytes.size() > options_.max_output) {
    Close(id);  // the peer reads too slowly
    return false;
  }
  const bool waiting = !c.out.empty();  // for EPOLLOUT already
  c.out.append(bytes);
  if (!waiting) Write(id, c);
  return open(id);
}

void ConnectionCore::Stand(uint64_t id, const Standing& standing) {
  if (open(id) && !connections_.at(id).draining) gate_.Stand(id, standing);
}

void ConnectionCore::Pause(uint64_t id, bool paused) {
  if (!open(id)) return;
  Connection& c = connections_.at(id);
  c.paused = paused;
  Rewatch(id, c);
}

void ConnectionCore::Again(uint64_t id) { again_.push_back(id); }

bool ConnectionCore::TakeRequest(uint64_t id) {
  return gate_.TakeRequest(connections_.at(id).address, clock_->NowNs());
}

void ConnectionCore::CloseAfterWrite(uint64_t id) {
  if (!open(id)) return;
  Connection& c = connections_.at(id);
  c.close_after_write = true;
  if (c.out.empty()) Write(id, c);  // nothing queued: shut it now
}

void ConnectionCore::Close(uint64_t id) {
  const auto it = connections_.find(id);
  if (it == connections_.end() || it->second.closed) return;
  it->second.closed = true;
  it->second.fd.reset();  // which leaves the epoll set
  gate_.Remove(id);
  closed_.push_back(id);
}

void ConnectionCore::Reap() {
  while (!closed_.empty()) {
    scratch_.swap(closed_);
    for (uint64_t id : scratch_) {
      connections_.erase(id);
      protocol_->Closed(id);
    }
    scratch_.clear();
  }
  CountOpen();
}

void ConnectionCore::CountOpen() { counters_->open.store(gate_.open(), std::memory_order_relaxed); }

}  // namespace tilestream
