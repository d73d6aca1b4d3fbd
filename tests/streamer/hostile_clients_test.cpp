// One hostile-client suite for every listener on the connection core
// (issue 45, docs/hardening.md): the web side's HTTP, the control port's
// commands, and a display node's swap-sync connection on the same port.
// Real sockets on loopback, the listener's clock driven by the test: each
// bound is checked to the millisecond of virtual time, and nothing here
// depends on how fast the machine is (a round is repeated until what the
// kernel delivers has come, for at most a few seconds of real time).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/base/clock.h"
#include "common/control/swap_sync.h"
#include "common/net/http_connections.h"
#include "common/wall/wall_config.h"
#include "streamer/control_server.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;
constexpr int64_t kMs = kNsPerMs;
constexpr int64_t kS = kNsPerSecond;
constexpr const char* kHome = "127.0.0.1";       // the good client's address (and the node's)
constexpr const char* kElsewhere = "127.0.0.2";  // another host's

// A listener under attack: a round of its loop, and what a good client
// says and hears.
class Door {
 public:
  virtual ~Door() = default;
  virtual uint16_t port() const = 0;
  // One round of the listener's loop, without waiting.
  virtual void Round() = 0;
  // A good client's whole request, and what its answer holds.
  virtual std::string Request() const = 0;
  virtual std::string Answer() const = 0;
  // What a client says before the test's own words (a node joins the sync).
  virtual std::string Greeting() const { return ""; }
  // What a flood repeats.
  virtual std::string FloodRequest() const { return Request(); }
  // A request or line begun and never ended; how long after its first byte
  // it is closed, and what it is told then.
  virtual std::string Dribble() const = 0;
  virtual int64_t SlowBoundNs() const = 0;
  virtual std::string SlowWord() const = 0;
  // How long a greeted connection that says nothing more stays; kNoDeadline: kept.
  virtual int64_t SilentBoundNs() const = 0;
  ManualClock clock;
};

class HttpDoor : public Door {
 public:
  HttpDoor() {
    HttpConnectionOptions o;
    o.limits.max_connections = 16;
    o.limits.max_connections_per_address = 8;
    o.limits.requests_per_second_per_address = 0;
    o.clock = &clock;
    auto h = HttpConnections::Listen(o, [this](uint64_t id, const ParsedRequest& q) {
      http_->Reply(id, HttpReply{200, "application/json", R"({"ok":true})"}, false, q.keep_alive);
    });
    EXPECT_TRUE(h.ok()) << h.status().message();
    http_ = std::move(h).value();
  }
  uint16_t port() const override { return http_->core().port(); }
  void Round() override { http_->core().RunOnce(0); }
  std::string Request() const override { return "GET /ok HTTP/1.1\r\nHost: wall\r\n\r\n"; }
  std::string Answer() const override { return "HTTP/1.1 200 OK"; }
  std::string Dribble() const override { return "GET /o"; }
  int64_t SlowBoundNs() const override { return 2000 * kMs; }  // header_timeout_ms
  std::string SlowWord() const override { return "408"; }
  int64_t SilentBoundNs() const override { return 2000 * kMs; }

 private:
  std::unique_ptr<HttpConnections> http_;
};

class CommandDoor : public Door {
 public:
  CommandDoor() {
    config_ = DefaultWallConfig({2, 1});
    config_.nodes[0].name = "n0";
    config_.nodes[0].address = kHome;
    config_.control.port = 0;
    config_.control.max_clients = 8;
    config_.control.line_timeout_s = 5;
    config_.control.idle_timeout_s = 60;
    auto s = ControlServer::Open(
        config_, &sync_, [](const std::string&) { return std::string(R"({"ok":true})"); }, &clock);
    EXPECT_TRUE(s.ok()) << s.status().message();
    server_ = std::move(s).value();
  }
  uint16_t port() const override { return server_->port(); }
  void Round() override { server_->Poll(0); }
  std::string Request() const override { return "status\n"; }
  std::string Answer() const override { return R"({"ok":true})"; }
  std::string Dribble() const override { return "sta"; }
  int64_t SlowBoundNs() const override { return 5 * kS; }
  std::string SlowWord() const override { return "a line not ended within 5 s"; }
  int64_t SilentBoundNs() const override { return 60 * kS; }
  ControlServer& server() { return *server_; }

 private:
  WallConfig config_;
  SwapSyncMaster sync_{2, false};
  std::unique_ptr<ControlServer> server_;
};

// A display node joining the sync: its join is its request; once joined,
// its connection is kept, however long it says nothing.
class SyncDoor : public CommandDoor {
 public:
  std::string Request() const override { return "sync n0\n"; }
  std::string Answer() const override { return R"("sync":"n0")"; }
  std::string Greeting() const override { return Request(); }
  std::string FloodRequest() const override { return "status\n"; }
  int64_t SilentBoundNs() const override { return kNoDeadline; }
};

// A client's end: a socket from `from`, connected before the listener has
// taken it (the kernel's accept queue holds it).
class Client {
 public:
  Client(uint16_t port, const char* from) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, from, &local.sin_addr);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local), 0);
    sockaddr_in server{};
    server.sin_family = AF_INET;
    server.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&server), sizeof server), 0);
  }
  ~Client() { close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void Say(const std::string& bytes) {
    EXPECT_EQ(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Reads what has come; true once the listener closed it.
  bool Closed() {
    char buffer[4096];
    for (;;) {
      const ssize_t n = recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        heard_.append(buffer, static_cast<size_t>(n));
        continue;
      }
      closed_ = closed_ || n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
      return closed_;
    }
  }
  const std::string& heard() {
    Closed();
    return heard_;
  }

 private:
  int fd_ = -1;
  std::string heard_;
  bool closed_ = false;
};

template <typename T>
class HostileClients : public ::testing::Test {
 protected:
  // Rounds until `done`, for at most 3 s of real time: what the kernel
  // delivers on loopback comes at once on an idle machine, later on a busy one.
  template <typename Done>
  bool RoundUntil(Done done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (;;) {
      door_.Round();
      if (done()) return true;
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  // A few rounds, for what must not happen.
  void Rounds() {
    for (int i = 0; i < 20; ++i) {
      door_.Round();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::unique_ptr<Client> Connect(const char* from) {
    return std::make_unique<Client>(door_.port(), from);
  }
  // A good client from `from`: it says its request at once; true when it
  // is answered.
  bool AskFrom(const char* from) {
    auto good = Connect(from);
    good->Say(door_.Request());
    return RoundUntil([&] { return good->heard().find(door_.Answer()) != std::string::npos; });
  }
  // `count` slow clients from `from`, each taken and dribbling.
  void Dribblers(const char* from, int count) {
    for (int i = 0; i < count; ++i) {
      slow_.push_back(Connect(from));
      slow_.back()->Say(door_.Dribble());
    }
    Rounds();
  }

  T door_;
  std::vector<std::unique_ptr<Client>> slow_;
};

using Doors = ::testing::Types<HttpDoor, CommandDoor, SyncDoor>;
class DoorNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    if (std::is_same_v<T, HttpDoor>) return "Http";
    if (std::is_same_v<T, SyncDoor>) return "Sync";
    return "Command";
  }
};
TYPED_TEST_SUITE(HostileClients, Doors, DoorNames);

// 64 slow clients from another host fill every place; a good client that
// says its request at once takes the place of the stalest, six times of six.
TYPED_TEST(HostileClients, AGoodClientAmongSlowClientsFromElsewhereIsAnswered) {
  this->Dribblers(kElsewhere, 64);
  int answered = 0;
  for (int i = 0; i < 6; ++i) {
    this->Dribblers(kElsewhere, 8);
    answered += this->AskFrom(kHome);
  }
  EXPECT_EQ(answered, 6);
}

// The same from the good client's own address (a NAT both are behind): at
// that address's cap its own stalest yields, six times of six.
TYPED_TEST(HostileClients, AGoodClientBehindTheAttackersAddressIsAnswered) {
  this->Dribblers(kHome, 64);
  int answered = 0;
  for (int i = 0; i < 6; ++i) {
    this->Dribblers(kHome, 8);
    answered += this->AskFrom(kHome);
  }
  EXPECT_EQ(answered, 6);
}

// A request or line under way is closed at its bound from its first byte,
// not a millisecond before, however the bytes dribble in, and told why.
TYPED_TEST(HostileClients, ARequestUnderWayIsClosedAtItsBoundSayingWhy) {
  auto& door = this->door_;
  auto slow = this->Connect(kHome);
  slow->Say(door.Greeting() + door.Dribble());
  this->Rounds();
  const int64_t bound = door.SlowBoundNs();
  int64_t waited = 0;
  for (; waited + 400 * kMs < bound; waited += 400 * kMs) {
    door.clock.Advance(400 * kMs);
    slow->Say("x");
    this->Rounds();
  }
  door.clock.Advance(bound - 1 - waited);
  this->Rounds();
  EXPECT_FALSE(slow->Closed()) << "a nanosecond before its bound";
  door.clock.Advance(1);
  EXPECT_TRUE(this->RoundUntil([&] { return slow->Closed(); }));
  EXPECT_THAT(slow->heard(), HasSubstr(door.SlowWord()));
}

// A connection that says nothing more is closed at its bound (a kept one,
// a node's sync, never), and its place is free again.
TYPED_TEST(HostileClients, ASilentConnectionIsClosedAtItsBound) {
  auto& door = this->door_;
  auto quiet = this->Connect(kHome);
  quiet->Say(door.Greeting());
  this->Rounds();
  const int64_t bound = door.SilentBoundNs();
  door.clock.Advance(bound == kNoDeadline ? 3600 * kS : bound - 1);
  this->Rounds();
  EXPECT_FALSE(quiet->Closed()) << "before its bound";
  if (bound == kNoDeadline) return;
  door.clock.Advance(1);
  EXPECT_TRUE(this->RoundUntil([&] { return quiet->Closed(); }));
  EXPECT_TRUE(this->AskFrom(kHome));
}

// One client pipelining a thousand requests at once delays another's by a
// round at most.
TYPED_TEST(HostileClients, AFloodFromOneClientLeavesAnotherAnswered) {
  auto& door = this->door_;
  auto flood = this->Connect(kElsewhere);
  std::string many;
  for (int i = 0; i < 1000; ++i) many += door.FloodRequest();
  flood->Say(many);
  door.Round();
  EXPECT_TRUE(this->AskFrom(kHome));
}

// A node's sync connection is kept: 64 slow clients from its own address,
// and an hour of silence, leave it synced and answered.
TEST(HostileSyncClients, ANodesSyncConnectionOutlastsAFloodFromItsOwnAddress) {
  SyncDoor door;
  Client node(door.port(), kHome);
  node.Say(door.Request());
  for (int i = 0; i < 3000 && node.heard().find(door.Answer()) == std::string::npos; ++i) {
    door.Round();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_THAT(node.heard(), HasSubstr(door.Answer()));
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 64; ++i) {
    slow.push_back(std::make_unique<Client>(door.port(), kHome));
    slow.back()->Say("sta");
    door.Round();
  }
  door.clock.Advance(3600 * kS);
  for (int i = 0; i < 20; ++i) door.Round();
  EXPECT_FALSE(node.Closed());
  EXPECT_EQ(door.server().synced_nodes(), 1u);
}

}  // namespace
}  // namespace tilestream
