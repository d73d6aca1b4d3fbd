#include "streamer/control_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

class ControlServerTest : public ::testing::Test {
 protected:
  void Open(bool with_token) {
    config_ = DefaultWallConfig({2, 1});
    config_.nodes[0].name = "left";  // both tiles on one node
    config_.control.port = 0;        // any free port
    if (with_token) {
      config_.control.token_file = dir_ / "token";
      std::ofstream(config_.control.token_file) << "s3cret\n";
    }
    auto s = ControlServer::Open(config_, &sync_, [](const std::string& line) {
      return line == "help" ? std::string(R"({"ok":true})") : std::string(R"({"ok":false,"error":"no"})");
    });
    ASSERT_TRUE(s.ok()) << s.status().message();
    server_ = std::move(s).value();
  }

  LineChannel Connect() {
    auto fd = ConnectTcp("127.0.0.1", server_->port(), 1000);
    EXPECT_TRUE(fd.ok());
    server_->Poll(10'000'000);  // accept
    return LineChannel(std::move(fd).value());
  }

  // Sends `line` and serves until the reply arrives (or a second passed).
  std::string Ask(LineChannel* c, const std::string& line) {
    c->Send(line);
    for (int i = 0; i < 100; ++i) {
      server_->Poll(10'000'000);
      c->Receive();
      if (auto reply = c->NextLine()) return *reply;
    }
    return "<no reply>";
  }

  testing::TempDir dir_;
  WallConfig config_;
  SwapSyncMaster sync_{2, false};
  std::unique_ptr<ControlServer> server_;
};

TEST_F(ControlServerTest, WithATokenCommandsNeedAuthFirst) {
  Open(/*with_token=*/true);
  LineChannel bare = Connect();
  EXPECT_THAT(Ask(&bare, "help"), HasSubstr("needs 'auth TOKEN' first"));
  bare.Receive();
  EXPECT_FALSE(bare.open()) << "closed";
  LineChannel wrong = Connect();
  EXPECT_THAT(Ask(&wrong, "auth guess"), HasSubstr("wrong token"));
  LineChannel right = Connect();
  EXPECT_EQ(Ask(&right, "auth s3cret"), R"({"ok":true})");
  EXPECT_EQ(Ask(&right, "help"), R"({"ok":true})");
}

TEST_F(ControlServerTest, AnErrorReplyKeepsTheConnectionOpen) {
  Open(/*with_token=*/false);
  LineChannel c = Connect();
  EXPECT_THAT(Ask(&c, "jump"), HasSubstr("\"ok\":false"));
  EXPECT_EQ(Ask(&c, "help"), R"({"ok":true})");
}

TEST_F(ControlServerTest, ASyncConnectionMakesItsNodesTilesTakePartUntilItCloses) {
  Open(/*with_token=*/false);
  LineChannel c = Connect();
  EXPECT_THAT(Ask(&c, "sync nowhere"), HasSubstr("no display node 'nowhere'"));
  EXPECT_THAT(Ask(&c, "sync left"), HasSubstr(R"("tiles":["r0c0","r0c1"])"));
  EXPECT_TRUE(sync_.member(0));
  EXPECT_TRUE(sync_.member(1));
  EXPECT_EQ(server_->synced_nodes(), 1u);
  c.Send("stats 1 30 2 0");
  c.Close("bye");
  for (int i = 0; i < 10 && server_->synced_nodes() > 0; ++i) server_->Poll(10'000'000);
  EXPECT_FALSE(sync_.member(0));
  EXPECT_EQ(server_->synced_nodes(), 0u);
  EXPECT_TRUE(server_->receiver_stats()[1].known);
  EXPECT_EQ(server_->receiver_stats()[1].frames, 30u);
}

TEST_F(ControlServerTest, RefusesToStartWithoutItsTokenFile) {
  WallConfig c = DefaultWallConfig({1, 1});
  c.control.port = 0;
  c.control.token_file = "/nonexistent/token";
  auto s = ControlServer::Open(c, &sync_, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("/nonexistent/token"));
}

}  // namespace
}  // namespace tilestream
