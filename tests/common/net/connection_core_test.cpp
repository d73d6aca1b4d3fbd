// The connection core's own duties, under a protocol that only records
// what it is told: reading within its bound, writing without blocking,
// closing after a last reply, and the descriptors it watches for others.
// The hostile clients of every listener: tests/streamer/hostile_clients_test.cpp.
#include "common/net/connection_core.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/net/line_channel.h"

namespace tilestream {
namespace {

class Recorder final : public ConnectionProtocol {
 public:
  void Opened(uint64_t id, int64_t) override { ids.push_back(id); }
  void Readable(uint64_t id, int64_t) override {
    std::string& in = core->input(id);
    heard += in;
    if (take) in.clear();
  }
  void Expired(uint64_t) override {}
  void Closed(uint64_t id) override { closed.push_back(id); }
  std::string Refusal() const override { return "full\n"; }
  std::string Eviction() const override { return "evicted\n"; }

  ConnectionCore* core = nullptr;
  bool take = true;  // erase what was read
  std::vector<uint64_t> ids, closed;
  std::string heard;
};

class ConnectionCoreTest : public ::testing::Test {
 protected:
  void Listen(size_t max_input = 16384, size_t max_output = size_t{1} << 20) {
    ConnectionCoreOptions o;
    o.max_input = max_input;
    o.max_output = max_output;
    o.clock = &clock_;
    auto core = ConnectionCore::Listen(o, &protocol_);
    ASSERT_TRUE(core.ok()) << core.status().message();
    core_ = std::move(core).value();
    protocol_.core = core_.get();
  }
  UniqueFd Connect() {
    auto fd = ConnectTcp("127.0.0.1", core_->port(), 1000);
    EXPECT_TRUE(fd.ok());
    return std::move(fd).value();
  }
  // Rounds until `done`, for at most 3 s of real time.
  template <typename Done>
  bool RoundUntil(Done done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (;;) {
      core_->RunOnce(0);
      if (done()) return true;
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  ManualClock clock_;
  Recorder protocol_;
  std::unique_ptr<ConnectionCore> core_;
};

// A client that says its piece and closes at once (`echo status | nc`) is
// heard before it is let go.
TEST_F(ConnectionCoreTest, WhatAPeerSaidBeforeItClosedIsRead) {
  Listen();
  UniqueFd c = Connect();
  ASSERT_EQ(send(c.get(), "status\n", 7, MSG_NOSIGNAL), 7);
  c.reset();
  ASSERT_TRUE(RoundUntil([&] { return protocol_.closed.size() == 1; }));
  EXPECT_EQ(protocol_.heard, "status\n");
}

// Past max_input unread, the core stops reading: the rest waits in the
// kernel (TCP holds the sender back) until the protocol takes some.
TEST_F(ConnectionCoreTest, InputPastItsBoundWaitsUntilTheProtocolTakesSome) {
  Listen(/*max_input=*/1000);
  protocol_.take = false;
  UniqueFd c = Connect();
  const std::string bytes(5000, 'x');
  ASSERT_EQ(send(c.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL), 5000);
  ASSERT_TRUE(RoundUntil(
      [&] { return !protocol_.ids.empty() && core_->input(protocol_.ids[0]).size() == 1000; }));
  for (int i = 0; i < 20; ++i) core_->RunOnce(0);
  const uint64_t id = protocol_.ids[0];
  EXPECT_EQ(core_->input(id).size(), 1000u);
  EXPECT_TRUE(core_->open(id));
  core_->input(id).clear();
  core_->Again(id);
  protocol_.take = true;
  EXPECT_TRUE(RoundUntil([&] { return protocol_.heard.size() >= 5000; }));
}

// A peer that never reads is closed once max_output waits to be sent,
// without the loop ever blocking on it.
TEST_F(ConnectionCoreTest, APeerThatNeverReadsIsClosedPastTheOutputBound) {
  Listen(16384, /*max_output=*/65536);
  UniqueFd c = Connect();
  ASSERT_TRUE(RoundUntil([&] { return !protocol_.ids.empty(); }));
  const uint64_t id = protocol_.ids[0];
  const std::string chunk(65536, 'y');
  int sent = 0;
  while (core_->Send(id, chunk) && sent < 1024) ++sent;  // 64 MiB: past any socket buffer
  EXPECT_LT(sent, 1024);
  EXPECT_FALSE(core_->open(id));
}

// A last reply is written whole before the close, then the connection
// drains what the client still sends for a second of the clock.
TEST_F(ConnectionCoreTest, ALastReplyIsWrittenWholeThenTheConnectionDrains) {
  Listen(16384, /*max_output=*/size_t{8} << 20);
  UniqueFd c = Connect();
  ASSERT_TRUE(RoundUntil([&] { return !protocol_.ids.empty(); }));
  const uint64_t id = protocol_.ids[0];
  const std::string reply(3'000'000, 'z');
  ASSERT_TRUE(core_->Send(id, reply));
  core_->CloseAfterWrite(id);
  std::string got;
  bool eof = false;
  ASSERT_TRUE(RoundUntil([&] {
    char buffer[65536];
    ssize_t n;
    while ((n = recv(c.get(), buffer, sizeof buffer, MSG_DONTWAIT)) > 0)
      got.append(buffer, static_cast<size_t>(n));
    eof = eof || n == 0;
    return eof;
  }));
  EXPECT_EQ(got.size(), reply.size());
  EXPECT_TRUE(protocol_.closed.empty()) << "draining";
  clock_.Advance(ConnectionCore::kDrainNs);
  EXPECT_TRUE(RoundUntil([&] { return protocol_.closed.size() == 1; }));
}

// A descriptor of another's (a mailbox, a datagram socket) wakes the loop
// and has its callback run.
TEST_F(ConnectionCoreTest, AWatchedDescriptorHasItsCallbackRun) {
  Listen();
  UniqueFd mailbox(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  int calls = 0;
  core_->Watch(mailbox.get(), [&] {
    uint64_t count;
    EXPECT_EQ(read(mailbox.get(), &count, sizeof count), 8);
    ++calls;
  });
  core_->RunOnce(0);
  EXPECT_EQ(calls, 0);
  const uint64_t one = 1;
  ASSERT_EQ(write(mailbox.get(), &one, sizeof one), 8);
  core_->RunOnce(1'000'000'000);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace tilestream
