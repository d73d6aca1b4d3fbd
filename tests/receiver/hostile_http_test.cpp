// HostileControlPorts (issue 35, the web side): slow, idle and flooding
// HTTP clients against the coordinator's panel, REST API and /metrics and
// against a display node's /metrics, on the live 2x2 wall, while a
// well-behaved client from 127.0.0.253 asks. The hostile clients come from
// 127.0.0.2-251, or from 127.0.0.253 too (one NAT).
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <thread>

#include "tests/receiver/hostile_clients.h"
#include "tests/support/built_paths.h"

namespace tilestream {
namespace {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

constexpr uint16_t kCoordinatorHttp = 7480;  // the defaults of [http]
constexpr uint16_t kLeftMetrics = 7481;
constexpr double kHeaderTimeoutS = 1.5;  // set in the test's [http]
constexpr int kTries = 10;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
// What "answered at once" means: 1 s, and 3 s under a sanitizer, whose
// build runs these on a machine it slows several times over.
constexpr double kAnswerBoundS = kSanitized ? 3 : 1;

struct Answer {
  int status = 0;  // 0: none within 10 s
  double seconds = 0;
  std::string body;
};

// GET `path` on a fresh connection from 127.0.0.253.
Answer Get(uint16_t port, const std::string& path) {
  const auto start = Clock::now();
  Answer a;
  UniqueFd fd = ConnectFrom(253, port);
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: wall\r\nConnection: close\r\n\r\n";
  if (!fd.valid() || send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) < 0) return a;
  std::string reply;
  pollfd p{fd.get(), POLLIN, 0};
  while (poll(&p, 1, 10'000) > 0) {
    char buf[16384];
    const ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  a.seconds = Seconds(Clock::now() - start).count();
  if (reply.starts_with("HTTP/1.1 ") && reply.size() > 12) a.status = std::stoi(reply.substr(9, 3));
  a.body = reply.substr(std::min(reply.size(), reply.find("\r\n\r\n") + 4));
  return a;
}

// The value of a sample of Prometheus text whose line starts with `name`;
// -1 when there is none.
double Sample(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name);
  if (at == std::string::npos) return -1;
  const size_t space = text.find(' ', at + 1);
  return std::stod(text.substr(space + 1, text.find('\n', space) - space - 1));
}

// `count` clients from 127.0.0.(2 + n % 250), or all from 127.0.0.`from`
// (one NAT), each with a connection that says a request a header line
// every 1-3 s and never ends it (or, `idle`, says nothing at all); once the
// server closes one, its client opens another. A pass over them every
// 100 ms until destroyed.
class SlowHttpClients {
 public:
  SlowHttpClients(int count, uint16_t port, bool idle, uint8_t from = 0)
      : port_(port), idle_(idle), from_(from), clients_(static_cast<size_t>(count)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~SlowHttpClients() {
    stop_ = true;
    thread_.join();
  }
  int closed() const { return closed_; }
  int passes() const { return passes_; }
  // The longest any connection lived until the server closed it.
  double longest_life_s() const {
    std::lock_guard lock(mu_);
    return longest_s_;
  }

 private:
  struct Client {
    UniqueFd fd;
    Clock::time_point opened, next_line;
    int lines = 0;
  };

  void Run() {
    std::mt19937 random(35);
    std::uniform_int_distribution<int> every_ms(1000, 3000);
    while (!stop_) {
      const auto now = Clock::now();
      for (size_t n = 0; n < clients_.size(); ++n) {
        Client& c = clients_[n];
        if (c.fd.valid() && ClosedByServer(c.fd.get())) {
          std::lock_guard lock(mu_);
          longest_s_ = std::max(longest_s_, Seconds(now - c.opened).count());
          ++closed_;
          c.fd = UniqueFd();
        }
        if (!c.fd.valid()) {
          const auto host = from_ != 0 ? from_ : static_cast<uint8_t>(2 + n % 250);
          c = Client{ConnectFrom(host, port_, false), now, now, 0};
        }
        if (idle_ || now < c.next_line) continue;
        const std::string line = c.lines == 0 ? "GET /api/status HTTP/1.1\r\n"
                                              : "X-Slow-" + std::to_string(n) + ": y\r\n";
        if (send(c.fd.get(), line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT) > 0) {
          ++c.lines;
          c.next_line = now + std::chrono::milliseconds(every_ms(random));
        }
      }
      ++passes_;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // Whether the server closed `fd` (what it said before, a 408, is read
  // and dropped).
  static bool ClosedByServer(int fd) {
    char buf[512];
    for (;;) {
      const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0) return true;
      if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN;
    }
  }

  const uint16_t port_;
  const bool idle_;
  const uint8_t from_;
  std::vector<Client> clients_;
  std::atomic<bool> stop_{false};
  std::atomic<int> closed_{0}, passes_{0};
  mutable std::mutex mu_;
  double longest_s_ = 0;
  std::thread thread_;
};

// Connections from 127.0.0.2 that pipeline `GET /api/status` at `rate`
// requests a second in all, keep-alive, as fast as the server takes them
// (what it does not take waits in the socket: TCP's back-pressure). One the
// server closes (after 100 requests) is opened again. Until destroyed.
class Flood {
 public:
  static constexpr size_t kConnections = 16;

  Flood(uint16_t port, int rate) : port_(port), rate_(rate) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Flood() {
    stop_ = true;
    thread_.join();
  }
  double elapsed_s() const { return Seconds(Clock::now() - start_).count(); }
  uint64_t sent() const { return sent_; }
  uint64_t answered() const { return answered_; }

 private:
  void Run() {
    static constexpr std::string_view kRequest = "GET /api/status HTTP/1.1\r\nHost: wall\r\n\r\n";
    std::vector<UniqueFd> fds(kConnections);
    std::vector<std::string> tails(kConnections);  // a status line cut between reads
    size_t next = 0;
    while (!stop_) {
      for (size_t i = 0; i < kConnections; ++i) {
        if (!fds[i].valid()) fds[i] = ConnectFrom(2, port_);
        Drain(&fds[i], &tails[i]);
      }
      const auto due = static_cast<uint64_t>(rate_ * elapsed_s());
      for (size_t tries = 0; sent_ < due && tries < kConnections;) {
        const int fd = fds[next++ % kConnections].get();
        if (fd >= 0 &&
            send(fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL | MSG_DONTWAIT) > 0) {
          ++sent_;
          tries = 0;
        } else {
          ++tries;  // that one's window is full
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Reads what came back, counting the replies; closes a connection the
  // server closed.
  void Drain(UniqueFd* fd, std::string* tail) {
    char buf[65536];
    for (;;) {
      const ssize_t n = recv(fd->get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
        *fd = UniqueFd();
        tail->clear();
        return;
      }
      if (n < 0) return;
      std::string text = *tail + std::string(buf, static_cast<size_t>(n));
      for (size_t at = 0; (at = text.find("HTTP/1.1 ", at)) != std::string::npos; at += 9)
        ++answered_;
      *tail = text.substr(text.size() - std::min<size_t>(text.size(), 8));
    }
  }

  const uint16_t port_;
  const int rate_;
  const Clock::time_point start_ = Clock::now();
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sent_{0}, answered_{0};
  std::thread thread_;
};

// The pid of the streamer (rank 0, the coordinator) of config `config`.
pid_t StreamerPid(const std::string& config) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.starts_with(STREAMER_PATH + '\0') && cmdline.find(config) != std::string::npos)
      return std::stoi(entry.path().filename());
  }
  return -1;
}

// Its resident memory in KiB; -1 when it cannot be read.
int64_t RssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("VmRSS:")) return std::stoll(line.substr(6));
  return -1;
}

// `count` slow (or idle) clients on `port`; meanwhile a good client asks
// each of `paths` 10 times and is answered every time at once; the slow
// connections are closed at the head's bound. The listener's /metrics (the
// coordinator's or the node's) counts them. The wall plays on. `from`: the
// slow clients' one address (0: many).
void SlowClientsLeaveItAnswering(HostileControlPorts& wall, int count, bool idle, uint16_t port,
                                 const std::vector<std::string>& paths, uint8_t from = 0) {
  wall.Configure(fmt::format("[http]\nheader_timeout_ms = {}\ntimeout_s = 3\n",
                             static_cast<int>(kHeaderTimeoutS * 1000)));
  std::vector<Answer> answers;
  double longest_life_s = -1;
  std::string metrics;
  wall.PlayWhile([&] {
    SlowHttpClients slow(count, port, idle, from);
    // Until every place a slow client can take is taken, and some were
    // closed for being slow: the flood at its worst.
    ASSERT_TRUE(testing::WaitFor([&] { return slow.closed() >= std::min(count, 64); }))
        << "no slow connection closed";
    for (int i = 0; i < kTries; ++i) {
      const int pass = slow.passes();
      for (const std::string& path : paths) answers.push_back(Get(port, path));
      testing::WaitFor([&] { return slow.passes() >= pass + 3; });  // spread over the flood
    }
    metrics = Get(port, "/metrics").body;
    longest_life_s = slow.longest_life_s();
  });
  double slowest_s = 0;
  for (const Answer& a : answers) slowest_s = std::max(slowest_s, a.seconds);
  std::printf(
      "%d %s clients on port %u: slowest answer %.3f s, longest slow connection %.2f s; "
      "timed out %.0f, evicted %.0f, refused %.0f\n",
      count, idle ? "idle" : "slow", port, slowest_s, longest_life_s,
      Sample(metrics, "tilestream_http_connections_timed_out_total"),
      Sample(metrics, "tilestream_http_connections_evicted_total"),
      Sample(metrics, "tilestream_http_connections_refused_total"));
  ASSERT_EQ(answers.size(), kTries * paths.size());
  for (size_t i = 0; i < answers.size(); ++i) {
    EXPECT_EQ(answers[i].status, 200) << paths[i % paths.size()] << " try " << i / paths.size();
    EXPECT_LE(answers[i].seconds, kAnswerBoundS) << paths[i % paths.size()];
  }
  // At the head's bound, seen on a pass every 100 ms, a connection's start
  // perhaps delayed in the accept queue: 1 s of slack.
  EXPECT_GT(longest_life_s, 0);
  EXPECT_LE(longest_life_s, kHeaderTimeoutS + 1.0);
  EXPECT_GT(Sample(metrics, "tilestream_http_connections_timed_out_total") +
                Sample(metrics, "tilestream_http_connections_evicted_total"),
            0)
      << metrics;
}

TEST_F(HostileControlPorts, TwoThousandSlowClientsLeaveThePanelTheApiAndMetricsAnswering) {
  SlowClientsLeaveItAnswering(*this, 2000, false, kCoordinatorHttp, {"/api/status", "/metrics"});
}

TEST_F(HostileControlPorts, TwoThousandIdleConnectionsLeaveThePanelTheApiAndMetricsAnswering) {
  SlowClientsLeaveItAnswering(*this, 2000, true, kCoordinatorHttp, {"/api/status", "/metrics"});
}

TEST_F(HostileControlPorts, SlowClientsLeaveADisplayNodesMetricsAnswering) {
  SlowClientsLeaveItAnswering(*this, 64, false, kLeftMetrics, {"/metrics"});
}

// 64 slow clients behind the good client's own address (one NAT), twice
// its cap of 32: at the cap the address's stalest gives way, so the good
// client is answered every time (it was 2 times of 6 when the newcomer was
// refused instead).
TEST_F(HostileControlPorts, SlowClientsBehindTheSameNatLeaveAGoodClientThereAnswered) {
  SlowClientsLeaveItAnswering(*this, 64, false, kCoordinatorHttp, {"/api/status"}, 253);
}

// One address floods 10,000 well-formed requests a second for 5 s: held to
// its rate (429s from the network thread), it never reaches the
// coordinator's thread beyond that; a second address is answered every
// time, the coordinator's memory stays within 64 MiB of what it was, and
// the wall plays on.
TEST_F(HostileControlPorts, AFloodFromOneAddressLeavesAnotherServedAndMemoryBounded) {
  constexpr int kRate = 10'000;
  constexpr double kFloodS = 5;
  constexpr int64_t kRssGrowthKib = 64 * 1024;
  std::vector<Answer> answers;
  int64_t rss_before = -1, rss_most = -1;
  uint64_t sent = 0, answered = 0;
  std::string metrics;
  // Under ASan, memory freed is held in a quarantine (256 MiB by default)
  // that RSS counts: a small one keeps the bound about our memory.
  setenv("ASAN_OPTIONS", "detect_leaks=0:quarantine_size_mb=8", 1);
  PlayWhile(
      [&] {
        const pid_t coordinator = StreamerPid(config_);
        ASSERT_GT(coordinator, 0);
        rss_before = RssKib(coordinator);
        Flood flood(kCoordinatorHttp, kRate);
        for (int i = 0; i < kTries; ++i) {
          answers.push_back(Get(kCoordinatorHttp, "/api/status"));
          rss_most = std::max(rss_most, RssKib(coordinator));
          testing::WaitFor([&] { return flood.elapsed_s() >= (i + 1) * kFloodS / kTries; });
        }
        sent = flood.sent();
        answered = flood.answered();
        metrics = Get(kCoordinatorHttp, "/metrics").body;
      },
      // Under ASan the flood's own generator, the service's 10,000
      // answers a second and two receivers share 2 cores, all slowed
      // several times: 1-7 ticks of about 200 skipped there (none in
      // the optimized build, which this bound is about).
      kSanitized ? 10 : 0);
  const double limited = Sample(metrics, "tilestream_http_requests_limited_total");
  std::printf(
      "flood: %lu requests sent in %.0f s, %lu answered, %.0f of them 429; coordinator "
      "RSS %ld -> %ld KiB\n",
      static_cast<unsigned long>(sent), kFloodS, static_cast<unsigned long>(answered), limited,
      static_cast<long>(rss_before), static_cast<long>(rss_most));
  ASSERT_EQ(answers.size(), static_cast<size_t>(kTries));
  for (const Answer& a : answers) {
    EXPECT_EQ(a.status, 200);
    EXPECT_LE(a.seconds, kAnswerBoundS);
  }
  EXPECT_GT(answered, 0u);
  EXPECT_GT(limited, 0) << "held to its address's rate";
  EXPECT_GT(rss_before, 0);
  EXPECT_LE(rss_most - rss_before, kRssGrowthKib);
}

}  // namespace
}  // namespace tilestream
