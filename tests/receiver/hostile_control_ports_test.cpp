// HostileControlPorts (issue 35, the control port): clients that hold a
// place on the coordinator's control port without ever ending a line, and a
// display node whose swap sync is refused. The live 2x2 wall of
// live_wall.h; the nodes are at 127.0.0.1, the hostile clients come from
// other loopback addresses (127.0.0.2 on), as they would from other hosts.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "tests/receiver/hostile_clients.h"

namespace tilestream {
namespace {

constexpr int kSlowClients = 1000;
constexpr int kLineTimeoutS = 2;

// Slow client n, from 127.0.0.(2 + n % 250): connecting, or connected and
// has sent "sta" and no line end.
UniqueFd SlowClient(int n, uint16_t port) {
  UniqueFd fd = ConnectFrom(static_cast<uint8_t>(2 + n % 250), port, /*wait=*/false);
  if (fd.valid()) send(fd.get(), "sta", 3, MSG_NOSIGNAL);
  return fd;
}

// A well-behaved client from another host (127.0.0.253): connects, asks
// "status", and has a JSON reply (within a generous bound).
bool AnswersStatus(uint16_t port) {
  UniqueFd fd = ConnectFrom(253, port);
  if (!fd.valid() || send(fd.get(), "status\n", 7, MSG_NOSIGNAL) != 7) return false;
  std::string reply;
  pollfd p{fd.get(), POLLIN, 0};
  while (reply.find('\n') == std::string::npos && poll(&p, 1, 5000) > 0) {
    char buf[4096];
    const ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  return reply.starts_with("{\"ok\":true") || reply.find("\"tick\"") != std::string::npos;
}

// Whether the server closed `fd` (what it sent before, its refusal or its
// reason, is read and dropped). A byte is sent first, as the slow client
// would, a byte every so often.
bool ClosedByServer(int fd) {
  send(fd, "t", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  char buf[512];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
  }
}

// 1,000 clients from 250 other hosts that connect and dribble a line that
// never ends, and connect again once closed: each is closed once its line
// is control.line_timeout_s old, or earlier when a newcomer takes the
// stalest place. Meanwhile a display node started then joins the swap sync
// (the nodes' places are kept apart), every tick is shown on both nodes
// but the one it joined in, and a good `status` is answered every time,
// from the nodes' address and from another host.
TEST_F(HostileControlPorts, SlowClientsOnTheControlPortKeepNoNodeOutOfTheSync) {
  std::ofstream(config_, std::ios::app)
      << "[control]\nline_timeout_s = " << kLineTimeoutS << "\n[sync]\ndeadline_ms = 500\n";
  const pid_t left = StartReceiver("left", "left");
  pid_t right = -1;
  int statuses_answered = 0, remote_answered = 0;
  std::string refused;               // what wallctl said when it was not answered
  double first_closed_after_s = -1;  // when the last of the first 1,000 was closed
  std::thread hostile([&] {
    const ShowStopper stop{this};
    ASSERT_TRUE(WaitForTick(10)) << "the wall never played";
    std::atomic<bool> flooding{true};
    std::thread flood([&] {
      std::vector<UniqueFd> slow;
      std::vector<bool> first(kSlowClients, true);
      for (int n = 0; n < kSlowClients; ++n) slow.push_back(SlowClient(n, 7470));
      const auto start = std::chrono::steady_clock::now();
      int first_open = kSlowClients;
      while (flooding) {  // a pass a second: a byte to each, again who was closed
        for (int n = 0; n < kSlowClients; ++n) {
          if (slow[n].valid() && !ClosedByServer(slow[n].get())) continue;
          first_open -= first[n] ? 1 : 0;
          first[n] = false;
          slow[n] = SlowClient(n, 7470);
        }
        if (first_open == 0 && first_closed_after_s < 0)
          first_closed_after_s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    });
    right = StartReceiver("right", "right");
    for (int i = 0; i < 5; ++i) {
      const auto [rc, out] = Ctl("status");
      statuses_answered += rc == 0;
      if (rc != 0) refused += out.substr(0, 200) + "\n";
    }
    for (int i = 0; i < 10; ++i) remote_answered += AnswersStatus(7470);
    EXPECT_TRUE(testing::WaitFor([&] {
      return testing::FileContains(dir_ / "right.out", "swap sync with the coordinator", 1);
    })) << "the node started during the flood never joined";
    const int64_t joined = CurrentTick();
    EXPECT_TRUE(WaitForTick(joined + 60));  // 60 ticks more, with both nodes in the sync
    EXPECT_TRUE(testing::WaitFor([&] { return first_closed_after_s >= 0; }));
    flooding = false;
    flood.join();
  });
  const auto tx = Stream(3000);  // until stopped
  hostile.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  ASSERT_GT(right, 0);
  StopReceiver(right);

  // wallctl is a process of its own: on a loaded machine its first line can
  // come late enough that, under this storm, newer connections evict it
  // (seen once in 15 runs beside a CPU burner). The in-process client below
  // says its line at once, as a client must to keep its place in a storm.
  EXPECT_GE(statuses_answered, 4) << "wallctl, from the nodes' address: " << refused;
  EXPECT_EQ(remote_answered, 10) << "from another host: a slow client gave its place up";
  EXPECT_GE(first_closed_after_s, 0) << "slow clients still open";
  EXPECT_LT(first_closed_after_s, kLineTimeoutS + 5.0) << "closed at the line bound";
  // Every tick shown on every node but the one the right node joined in the
  // middle of (and any a sender skipped).
  const uint64_t sender_skips = TicksSkippedBySenders();
  const nlohmann::json sync = Report("streamer")["sync"];
  EXPECT_LE(sync["skipped"].get<uint64_t>(), 1u + sender_skips) << sync.dump();
  EXPECT_GE(Report("right")["sync"]["presented"].get<uint64_t>(), 50u);
}

// A display node whose swap sync is refused (here: its config has another
// token than the coordinator's) shows frames as they come while it retries,
// as with --no-sync: every frame it is sent arrives whole.
TEST_F(HostileControlPorts, AReceiverWhoseSyncIsRefusedCompletesEveryFrameItIsSent) {
  std::ofstream(dir_ / "good.token") << "a-good-token-of-some-length\n";
  std::ofstream(dir_ / "bad.token") << "not-the-coordinators-token\n";
  const std::string base = config_;
  const std::string bad = dir_ / "bad.toml";
  std::ofstream(bad) << std::ifstream(base).rdbuf() << "[control]\ntoken_file = \""
                     << (dir_ / "bad.token") << "\"\n";
  std::ofstream(base, std::ios::app)
      << "[control]\ntoken_file = \"" << (dir_ / "good.token") << "\"\n";
  config_ = bad;
  const pid_t left = StartReceiver("left", "left");
  const pid_t right = StartReceiver("right", "right");
  config_ = base;
  constexpr uint64_t kRefusedTicks = 100;
  const auto tx = Stream(kRefusedTicks);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);

  EXPECT_TRUE(testing::FileContains(dir_ / "left.out", "wrong token", 1));
  for (const std::string tag : {"left", "right"}) {
    const nlohmann::json report = Report(tag);
    for (const auto& t : report["tiles"]) {
      EXPECT_EQ(t["frames_complete"].get<uint64_t>(), SentFrames(t["tile"])) << t.dump();
      EXPECT_EQ(t["frames_incomplete"], 0) << t.dump();
    }
  }
}

}  // namespace
}  // namespace tilestream
