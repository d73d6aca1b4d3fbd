#include "common/net/http_service.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "common/base/clock.h"
#include "common/base/json_text.h"
#include "common/base/unique_fd.h"
#include "common/net/fair_queue.h"
#include "common/net/http_parser.h"
#include "common/net/http_reply.h"
#include "common/net/line_channel.h"

namespace tilestream {
namespace {

constexpr uint64_t kListenerId = 0;  // epoll data of the listener
constexpr uint64_t kWakeId = 1;      // and of the eventfd that wakes the loop
constexpr uint64_t kFirstConnectionId = 2;
constexpr uint32_t kKeepAliveRequests = 100;  // per connection, then it is closed
constexpr size_t kAcceptsPerLoop = 64;        // then the connections' own events
constexpr size_t kReadChunk = 16384;
constexpr size_t kEvents = 256;
constexpr int64_t kAcceptPauseNs = 100 * kNsPerMs;  // out of descriptors: wait, do not spin
constexpr std::string_view kBearer = "Bearer ";

// The host of a peer as bytes, IPv4-mapped IPv6 as IPv4: the key of the
// per-address limit and of the queue's turns.
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

// A request read whole and routed, waiting for a worker.
struct Job {
  uint64_t id = 0;
  const HttpRoute* route = nullptr;
  ParsedRequest request;
  std::string rest;
  bool head = false;
};

// A handler's reply, for the network thread to send.
struct Answer {
  uint64_t id = 0;
  HttpReply reply;
  bool head = false;
  bool keep_alive = false;
};

struct Connection {
  UniqueFd fd;
  std::string address;
  std::string in;
  std::string out;
  size_t sent = 0;
  ParsedRequest request;
  bool continued = false;    // "100 Continue" sent for this request
  bool close_after = false;  // once `out` is written
  uint32_t served = 0;
  uint32_t watched = EPOLLIN;  // the epoll events asked for now
};

}  // namespace

struct HttpService::Impl {
  HttpServiceOptions options;
  std::vector<HttpRoute> routes;
  HttpCounters own_counters;
  HttpCounters* counters = &own_counters;
  HttpGate gate{HttpLimits{}};
  UniqueFd listener, epoll, wake;
  std::unordered_map<uint64_t, Connection> connections;
  uint64_t next_id = kFirstConnectionId;
  int64_t accepts_paused_until = 0;
  std::thread loop;
  std::vector<std::thread> workers;
  std::atomic<bool> stopping{false};

  std::mutex mu;  // guards what follows
  std::condition_variable work_cv;
  FairQueue<Job> queue;      // by client address in turn
  std::vector<Answer> done;  // from the workers
  bool workers_stop = false;

  // -- the network thread --------------------------------------------------

  void Run() {
    std::vector<epoll_event> events(kEvents);
    std::vector<uint64_t> expired;
    int64_t next_deadline = HttpGate::kNever;
    while (!stopping.load(std::memory_order_relaxed)) {
      next_deadline = gate.NextDeadline();
      const int n = epoll_wait(epoll.get(), events.data(), kEvents, WaitMs(next_deadline));
      bool accept = false;
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[i].data.u64;
        if (id == kListenerId) {
          accept = true;
        } else if (id == kWakeId) {
          uint64_t count;
          [[maybe_unused]] ssize_t r = read(wake.get(), &count, sizeof count);
        } else {
          OnEvents(id, events[i].events);
        }
      }
      TakeReplies();
      const int64_t now = MonotonicNs();
      if (now >= next_deadline) {  // new deadlines since are later: none missed
        expired.clear();
        gate.Expired(now, &expired);
        for (uint64_t id : expired) OnDeadline(id);
      }
      // New connections after the events of those taken before: one taken
      // in the last round has its request read before a newcomer may evict it.
      if (accept || (accepts_paused_until != 0 && now >= accepts_paused_until)) Accept(now);
    }
  }

  int WaitMs(int64_t next) const {
    if (accepts_paused_until != 0) next = std::min(next, accepts_paused_until);
    if (next == HttpGate::kNever) return -1;
    const int64_t ms = (next - MonotonicNs() + kNsPerMs - 1) / kNsPerMs;
    return static_cast<int>(std::clamp<int64_t>(ms, 0, 60'000));
  }

  // Asks epoll for `events` of the connection, a system call only when
  // they change: a kept-alive client's requests cost none.
  void Watch(uint64_t id, Connection& c, uint32_t events) {
    if (c.watched == events) return;
    c.watched = events;
    epoll_event e{};
    e.events = events;
    e.data.u64 = id;
    epoll_ctl(epoll.get(), EPOLL_CTL_MOD, c.fd.get(), &e);
  }

  void Accept(int64_t now) {
    for (size_t n = 0; n < kAcceptsPerLoop; ++n) {
      sockaddr_storage peer{};
      socklen_t length = sizeof peer;
      UniqueFd fd(accept4(listener.get(), reinterpret_cast<sockaddr*>(&peer), &length,
                          SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!fd.valid()) return PauseAcceptsIfOutOfFiles(now);
      Resume(now);
      const uint64_t id = next_id++;
      uint64_t evicted = 0;
      const std::string address = HostKey(peer);
      const HttpGate::Verdict v = gate.Admit(id, address, now, &evicted);
      if (evicted != 0) {
        counters->evicted.fetch_add(1, std::memory_order_relaxed);
        Close(evicted);
      }
      if (v != HttpGate::Verdict::kAdmitted) {
        counters->refused.fetch_add(1, std::memory_order_relaxed);
        const std::string busy = FormatHttpReply(
            HttpReply::Error(503, "too many connections: try again later"), false, false);
        [[maybe_unused]] ssize_t r = send(fd.get(), busy.data(), busy.size(), MSG_NOSIGNAL);
        continue;
      }
      DetectDeadPeer(fd.get());
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.u64 = id;
      epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd.get(), &e);
      Connection& c = connections[id];
      c.fd = std::move(fd);
      c.address = address;
      counters->accepted.fetch_add(1, std::memory_order_relaxed);
      counters->open.store(connections.size(), std::memory_order_relaxed);
    }
  }

  // Out of descriptors, the listener stays readable: stop watching it for a
  // moment instead of spinning on it.
  void PauseAcceptsIfOutOfFiles(int64_t now) {
    if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM) return;
    accepts_paused_until = now + kAcceptPauseNs;
    epoll_event e{};
    e.data.u64 = kListenerId;
    epoll_ctl(epoll.get(), EPOLL_CTL_MOD, listener.get(), &e);
  }
  void Resume(int64_t now) {
    if (accepts_paused_until == 0 || now < accepts_paused_until) return;
    accepts_paused_until = 0;
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.u64 = kListenerId;
    epoll_ctl(epoll.get(), EPOLL_CTL_MOD, listener.get(), &e);
  }

  void Close(uint64_t id) {
    gate.Remove(id);
    connections.erase(id);  // closes the socket, which leaves the epoll set
    counters->open.store(connections.size(), std::memory_order_relaxed);
  }

  void OnEvents(uint64_t id, uint32_t events) {
    auto it = connections.find(id);
    if (it == connections.end()) return;
    Connection& c = it->second;
    const HttpPhase phase = gate.phase(id);
    if (phase == HttpPhase::kWriting && (events & EPOLLOUT)) return Write(id, c);
    if (events & EPOLLIN) return Read(id, c, phase);
    if (events & (EPOLLHUP | EPOLLERR)) Close(id);  // gone while served: its reply is dropped
  }

  void Read(uint64_t id, Connection& c, HttpPhase phase) {
    char buffer[kReadChunk];
    const ssize_t n = recv(c.fd.get(), buffer, sizeof buffer, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) return Close(id);  // the peer closed or reset: a request cut is dropped
    if (phase == HttpPhase::kDraining) return;
    c.in.append(buffer, static_cast<size_t>(n));
    Parse(id, c);
  }

  void Parse(uint64_t id, Connection& c) {
    if (gate.phase(id) == HttpPhase::kIdle) gate.Enter(id, HttpPhase::kHead, MonotonicNs());
    const HttpParseLimits limits{options.max_header_bytes, options.max_body_bytes};
    const HttpParseResult r = ParseHttpRequest(c.in, limits, &c.request);
    switch (r.state) {
      case HttpParse::kIncomplete:
        return;
      case HttpParse::kNeedBody:
        return AwaitBody(id, c);
      case HttpParse::kError:
        return Reply(id, c, HttpErrorReply(r.status), false, /*keep_alive=*/false);
      case HttpParse::kComplete:
        break;
    }
    c.in.erase(0, r.consumed);
    counters->requests.fetch_add(1, std::memory_order_relaxed);
    if (!gate.TakeRequest(c.address, MonotonicNs())) {
      counters->limited.fetch_add(1, std::memory_order_relaxed);
      c.request = {};
      return Reply(id, c, HttpErrorReply(429), false, true, "Retry-After: 1\r\n");
    }
    Job job;
    job.id = id;
    job.request = std::move(c.request);
    c.request = {};
    c.continued = false;
    Route(id, c, std::move(job));
  }

  void AwaitBody(uint64_t id, Connection& c) {
    if (gate.phase(id) == HttpPhase::kHead) gate.Enter(id, HttpPhase::kBody, MonotonicNs());
    if (!c.request.expects_continue || c.continued) return;
    c.continued = true;  // 25 bytes on an idle socket: they fit
    constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    [[maybe_unused]] ssize_t r = send(c.fd.get(), kContinue.data(), kContinue.size(), MSG_NOSIGNAL);
  }

  // 404, 405 (with Allow) and 401 here; a route's handler on a worker.
  void Route(uint64_t id, Connection& c, Job job) {
    const ParsedRequest& q = job.request;
    const bool keep = q.keep_alive;
    job.head = q.method == "HEAD";
    std::string allow;
    for (const HttpRoute& r : routes) {
      if (!Matches(r, q.path)) continue;
      if (r.method != q.method && !(job.head && r.method == "GET")) {
        allow += (allow.empty() ? "" : ", ") + r.method;
        continue;
      }
      if (!r.open && !Authorised(q.authorization)) {
        return Reply(id, c, HttpErrorReply(401), job.head, keep, "WWW-Authenticate: Bearer\r\n");
      }
      job.route = &r;
      job.rest = r.prefix ? q.path.substr(r.path.size()) : "";
      return Queue(id, c, std::move(job));
    }
    if (allow.empty())
      return Reply(id, c, HttpReply::Error(404, "no such path: " + Printable(q.path)), job.head,
                   keep);
    Reply(id, c,
          HttpReply::Error(
              405, fmt::format("{} {}: use {}", Printable(q.method), Printable(q.path), allow)),
          job.head, keep, fmt::format("Allow: {}\r\n", allow));
  }

  void Queue(uint64_t id, Connection& c, Job job) {
    {
      std::lock_guard lock(mu);
      if (queue.size() < options.max_queued) {
        queue.Push(c.address, std::move(job));
        work_cv.notify_one();
        gate.Enter(id, HttpPhase::kServing, MonotonicNs());
        Watch(id, c, 0);  // nothing read while served: a pipelined request waits
        return;
      }
    }
    counters->busy.fetch_add(1, std::memory_order_relaxed);
    Reply(id, c, HttpErrorReply(503), job.head, job.request.keep_alive, "Retry-After: 1\r\n");
  }

  void TakeReplies() {
    std::vector<Answer> answers;
    {
      std::lock_guard lock(mu);
      answers.swap(done);
    }
    for (const Answer& a : answers) {
      auto it = connections.find(a.id);
      if (it == connections.end()) continue;  // the client went away
      Reply(a.id, it->second, a.reply, a.head, a.keep_alive);
    }
  }

  void Reply(uint64_t id, Connection& c, const HttpReply& r, bool head, bool keep_alive,
             std::string_view extra = "") {
    keep_alive = keep_alive && c.served + 1 < kKeepAliveRequests;
    c.out = FormatHttpReply(r, head, keep_alive, extra);
    c.sent = 0;
    c.close_after = !keep_alive;
    gate.Enter(id, HttpPhase::kWriting, MonotonicNs());
    Write(id, c);
  }

  void Write(uint64_t id, Connection& c) {
    while (c.sent < c.out.size()) {
      const ssize_t n =
          send(c.fd.get(), c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return Watch(id, c, EPOLLOUT);
      if (n <= 0) return Close(id);
      c.sent += static_cast<size_t>(n);
    }
    c.out.clear();
    ++c.served;
    const int64_t now = MonotonicNs();
    if (c.close_after) {
      // Read what the client still sends for a moment before closing, so
      // that the reply is not lost to a reset (RFC 9112 9.6).
      shutdown(c.fd.get(), SHUT_WR);
      gate.Enter(id, HttpPhase::kDraining, now);
      return Watch(id, c, EPOLLIN);
    }
    gate.Enter(id, HttpPhase::kIdle, now);
    Watch(id, c, EPOLLIN);
    if (!c.in.empty()) Parse(id, c);  // a request that came while this was served
  }

  void OnDeadline(uint64_t id) {
    auto it = connections.find(id);
    if (it == connections.end()) return;
    Connection& c = it->second;
    const HttpPhase phase = gate.phase(id);
    if (phase == HttpPhase::kHead || phase == HttpPhase::kBody || phase == HttpPhase::kWriting)
      counters->timed_out.fetch_add(1, std::memory_order_relaxed);
    if ((phase == HttpPhase::kHead || phase == HttpPhase::kBody) && !c.in.empty()) {
      // Said once, without waiting: a client too slow to send is not waited
      // for to read either. A connection that never said a word is just
      // closed (a browser's preconnect, as nginx does).
      const std::string late = FormatHttpReply(HttpErrorReply(408), false, false);
      [[maybe_unused]] ssize_t r =
          send(c.fd.get(), late.data(), late.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    Close(id);
  }

  bool Matches(const HttpRoute& r, std::string_view path) const {
    return r.prefix ? path.size() > r.path.size() && path.starts_with(r.path) : path == r.path;
  }

  bool Authorised(std::string_view given) const {
    if (options.token.empty()) return true;
    return given.starts_with(kBearer) &&
           ConstantTimeEquals(given.substr(kBearer.size()), options.token);
  }

  // -- the workers ---------------------------------------------------------

  void Work() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mu);
        work_cv.wait(lock, [&] { return workers_stop || queue.size() > 0; });
        if (workers_stop) return;
        job = queue.Pop();
      }
      const ParsedRequest& q = job.request;
      HttpReply reply;
      try {
        reply = job.route->handler({q.method, q.path, job.rest, q.body});
      } catch (...) {
        reply = HttpReply::Error(500, "internal error");
      }
      {
        std::lock_guard lock(mu);
        done.push_back({job.id, std::move(reply), job.head, q.keep_alive});
      }
      const uint64_t one = 1;
      [[maybe_unused]] ssize_t r = write(wake.get(), &one, sizeof one);
    }
  }

  Status Open() {
    auto fd = ListenTcp(options.listen_address, options.port);
    if (!fd.ok())
      return Status::IoError(fmt::format("{}: cannot listen on {} port {}: {}", options.name,
                                         options.listen_address, options.port,
                                         fd.status().message()));
    listener = std::move(fd).value();
    epoll = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    wake = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!epoll.valid() || !wake.valid()) return Status::IoError("epoll or eventfd", errno);
    for (const auto& [fd, id] : {std::pair(listener.get(), kListenerId), {wake.get(), kWakeId}}) {
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.u64 = id;
      epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &e);
    }
    return Status::Ok();
  }
};

HttpService::HttpService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpService::~HttpService() {
  Impl& i = *impl_;
  i.stopping = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t r = write(i.wake.get(), &one, sizeof one);
  if (i.loop.joinable()) i.loop.join();
  {
    std::lock_guard lock(i.mu);
    i.workers_stop = true;
  }
  i.work_cv.notify_all();
  for (auto& w : i.workers) w.join();
}

Result<std::unique_ptr<HttpService>> HttpService::Start(const HttpServiceOptions& options,
                                                        std::vector<HttpRoute> routes) {
  auto impl = std::make_unique<Impl>();
  Impl& i = *impl;
  i.options = options;
  i.routes = std::move(routes);
  if (options.counters) i.counters = options.counters;
  i.gate = HttpGate(options.limits);
  MakeRoomForConnections(options.limits.max_connections);
  if (Status s = i.Open(); !s.ok()) return s;
  sockaddr_storage a{};
  socklen_t length = sizeof a;
  getsockname(i.listener.get(), reinterpret_cast<sockaddr*>(&a), &length);
  const uint16_t port =
      ntohs(a.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(a).sin_port
                                   : reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  for (uint32_t n = 0; n < std::max(options.max_clients, 1u); ++n)
    i.workers.emplace_back([&i] { i.Work(); });
  i.loop = std::thread([&i] { i.Run(); });
  std::unique_ptr<HttpService> service(new HttpService(std::move(impl)));
  service->port_ = port;
  return service;
}

}  // namespace tilestream
