#include "common/net/http_service.h"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/base/clock.h"
#include "common/base/json_text.h"
#include "common/base/unique_fd.h"
#include "common/net/fair_queue.h"
#include "common/net/line_channel.h"

namespace tilestream {
namespace {

constexpr std::string_view kBearer = "Bearer ";
constexpr int64_t kLoopWaitNs = 60 * kNsPerSecond;  // between checks of `stopping`, at most

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

}  // namespace

struct HttpService::Impl {
  HttpServiceOptions options;
  std::vector<HttpRoute> routes;
  std::unique_ptr<HttpConnections> connections;
  UniqueFd wake;  // the workers' answers are waiting, or the service stops
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
    while (!stopping.load(std::memory_order_relaxed)) connections->core().RunOnce(kLoopWaitNs);
  }

  // 404, 405 (with Allow) and 401 here; a route's handler on a worker.
  void Route(uint64_t id, ParsedRequest q) {
    const bool keep = q.keep_alive;
    Job job;
    job.id = id;
    job.head = q.method == "HEAD";
    std::string allow;
    for (const HttpRoute& r : routes) {
      if (!Matches(r, q.path)) continue;
      if (r.method != q.method && !(job.head && r.method == "GET")) {
        allow += (allow.empty() ? "" : ", ") + r.method;
        continue;
      }
      if (!r.open && !Authorised(q.authorization)) {
        return connections->Reply(id, HttpErrorReply(401), job.head, keep,
                                  "WWW-Authenticate: Bearer\r\n");
      }
      job.route = &r;
      job.rest = r.prefix ? q.path.substr(r.path.size()) : "";
      job.request = std::move(q);
      return Queue(std::move(job));
    }
    if (allow.empty())
      return connections->Reply(id, HttpReply::Error(404, "no such path: " + Printable(q.path)),
                                job.head, keep);
    connections->Reply(id,
                       HttpReply::Error(405, fmt::format("{} {}: use {}", Printable(q.method),
                                                         Printable(q.path), allow)),
                       job.head, keep, fmt::format("Allow: {}\r\n", allow));
  }

  // Waiting requests are served by client address in turn.
  void Queue(Job job) {
    const uint64_t id = job.id;
    {
      std::lock_guard lock(mu);
      if (queue.size() < options.max_queued) {
        queue.Push(connections->core().address(id), std::move(job));
        work_cv.notify_one();
        return connections->Serve(id);
      }
    }
    connections->counters().busy.fetch_add(1, std::memory_order_relaxed);
    connections->Reply(id, HttpErrorReply(503), job.head, job.request.keep_alive,
                       "Retry-After: 1\r\n");
  }

  void TakeReplies() {
    uint64_t count;
    [[maybe_unused]] ssize_t r = read(wake.get(), &count, sizeof count);
    std::vector<Answer> answers;
    {
      std::lock_guard lock(mu);
      answers.swap(done);
    }
    for (const Answer& a : answers) connections->Reply(a.id, a.reply, a.head, a.keep_alive);
  }

  bool Matches(const HttpRoute& r, std::string_view path) const {
    return r.prefix ? path.size() > r.path.size() && path.starts_with(r.path) : path == r.path;
  }

  bool Authorised(std::string_view given) const {
    if (options.token.empty()) return true;
    return given.starts_with(kBearer) &&
           ConstantTimeEquals(given.substr(kBearer.size()), options.token);
  }

  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t r = write(wake.get(), &one, sizeof one);
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
      Wake();
    }
  }
};

HttpService::HttpService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpService::~HttpService() {
  Impl& i = *impl_;
  i.stopping = true;
  i.Wake();
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
  HttpConnectionOptions o;
  o.name = options.name;
  o.listen_address = options.listen_address;
  o.port = options.port;
  o.max_header_bytes = options.max_header_bytes;
  o.max_body_bytes = options.max_body_bytes;
  o.limits = options.limits;
  o.counters = options.counters;
  auto connections =
      HttpConnections::Listen(o, [&i](uint64_t id, ParsedRequest q) { i.Route(id, std::move(q)); });
  if (!connections.ok()) return connections.status();
  i.connections = std::move(connections).value();
  i.wake = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!i.wake.valid()) return Status::IoError("eventfd", errno);
  i.connections->core().Watch(i.wake.get(), [&i] { i.TakeReplies(); });
  for (uint32_t n = 0; n < std::max(options.max_clients, 1u); ++n)
    i.workers.emplace_back([&i] { i.Work(); });
  i.loop = std::thread([&i] { i.Run(); });
  std::unique_ptr<HttpService> service(new HttpService(std::move(impl)));
  service->port_ = i.connections->core().port();
  return service;
}

}  // namespace tilestream
