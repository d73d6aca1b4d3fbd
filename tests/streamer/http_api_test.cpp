// The coordinator's REST API without MPI: the routes turn calls into control
// lines for the command handler, run on the "coordinator" thread that
// serves the mailbox, as the coordinator's poll does.
#include "streamer/http_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/control/control_commands.h"
#include "tests/support/tcp_port.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.http.port = 0;  // set below: Start refuses 0 (no HTTP)
  }

  // Starts the API on a free port with the commands of a 100-frame movie;
  // `serve`: the coordinator thread answers.
  void Start(bool serve = true) {
    commands_.set_playback(&playback_);
    WallEndpoints wall;
    wall.command = [this](std::string_view line) {
      lines_.push_back(std::string(line));
      return commands_.Handle(line);
    };
    wall.metrics = [] { return std::string("m 1\n"); };
    wall.wall_picture = [] {
      Image i;
      i.width = 2;
      i.height = 1;
      i.rgb.assign(6, std::byte{255});
      return i;
    };
    wall.tile_picture = [](std::string_view tile) -> std::optional<Image> {
      if (tile == "r0c0") return Image{};
      return std::nullopt;
    };
    config_.http.port = testing::FreeTcpPort();
    auto api = HttpApi::Start(config_, std::move(wall));
    ASSERT_TRUE(api.ok()) << api.status().message();
    api_ = std::move(api).value();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", api_->port());
    if (serve) coordinator_ = std::thread([this] { Serve(); });
  }

  void TearDown() override {
    stop_ = true;
    if (coordinator_.joinable()) coordinator_.join();
  }

  void Serve() {
    while (!stop_) {
      pollfd p{api_->fd(), POLLIN, 0};
      if (poll(&p, 1, 10) > 0) api_->RunPending();
    }
  }

  httplib::Result Post(const std::string& path, const std::string& body = "") {
    return client_->Post(path, body, "application/json");
  }

  WallConfig config_ = DefaultWallConfig({2, 1});
  Playback playback_{100, 30, {}};
  ControlCommands commands_;
  std::vector<std::string> lines_;
  std::unique_ptr<HttpApi> api_;
  std::unique_ptr<httplib::Client> client_;
  std::atomic<bool> stop_{false};
  std::thread coordinator_;
};

TEST_F(HttpApiTest, EachCallIsTheControlLineWithItsReply) {
  Start();
  auto r = Post("/api/pause");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  Playback other(100, 30, {});
  ControlCommands tcp;
  tcp.set_playback(&other);
  EXPECT_EQ(r->body, tcp.Handle("pause")) << "the same reply as the TCP channel";
  EXPECT_EQ(Post("/api/seek", R"({"frame": 42})")->status, 200);
  EXPECT_EQ(Post("/api/step")->status, 200);
  EXPECT_EQ(Post("/api/step", R"({"frames": -3})")->status, 200);
  EXPECT_EQ(Post("/api/speed", R"({"speed": -0.5})")->status, 200);
  EXPECT_EQ(Post("/api/loop", R"({"loop": false})")->status, 200);
  EXPECT_EQ(Post("/api/toggle")->status, 200);
  EXPECT_EQ(client_->Get("/api/status")->status, 200);
  EXPECT_EQ(lines_, (std::vector<std::string>{"pause", "seek 42", "step +1", "step -3",
                                              "speed -0.5", "loop off", "toggle", "status"}));
  EXPECT_EQ(playback_.frame(), 40u);
  EXPECT_FALSE(playback_.loop());
}

TEST_F(HttpApiTest, BadBodiesAreJsonErrorsAndChangeNothing) {
  Start();
  for (const std::string body : {"", "{", "[1]", R"({"frame": "x"})", R"({"frame": 1.5})",
                                 "{\"frame\": \"\xff\"}", "\xff\xfe"}) {
    auto r = Post("/api/seek", body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << body;
    const auto j = nlohmann::json::parse(r->body, nullptr, false);
    EXPECT_EQ(j.value("ok", true), false) << r->body;
    EXPECT_THAT(j.value("error", ""), HasSubstr("seek")) << r->body;
  }
  EXPECT_TRUE(lines_.empty());
  auto r = Post("/api/seek", R"({"frame": 1000})");  // the handler's own error
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, commands_.Handle("seek 1000"));
}

TEST_F(HttpApiTest, GetNeverChangesTheWall) {
  Start();
  for (const char* path : {"/api/pause", "/api/seek", "/api/stop"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405) << path;
  }
  EXPECT_TRUE(lines_.empty());
  EXPECT_FALSE(commands_.stop_requested());
}

TEST_F(HttpApiTest, PicturesPanelAndMetrics) {
  Start();
  auto r = client_->Get("/api/wall.png");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "image/png");
  EXPECT_EQ(r->body.substr(1, 3), "PNG");
  EXPECT_EQ(client_->Get("/api/tile/r0c0.png")->status, 404) << "no picture yet";
  EXPECT_EQ(client_->Get("/api/tile/r5c5.png")->status, 404);
  EXPECT_EQ(client_->Get("/api/tile/r0c0")->status, 404);
  r = client_->Get("/metrics");
  EXPECT_TRUE(r->body.starts_with("m 1\n")) << r->body;  // the wall's, then the listener's own
  EXPECT_THAT(r->body, HasSubstr("tilestream_http_requests_total{listener=\"coordinator\"} 5\n"));
  EXPECT_THAT(r->body, HasSubstr("tilestream_http_connections_open{listener=\"coordinator\"} 1\n"));
  EXPECT_THAT(r->get_header_value("Content-Type"), HasSubstr("version=0.0.4"));
  r = client_->Get("/");
  EXPECT_THAT(r->body, HasSubstr("<title>tilestream wall</title>"));
}

TEST_F(HttpApiTest, AnUnansweringCoordinatorIs503) {
  Start(/*serve=*/false);
  auto r = Post("/api/pause");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_TRUE(lines_.empty());
}

TEST(HttpApi, PortZeroIsNoHttp) {
  WallConfig c = DefaultWallConfig({1, 1});
  c.http.port = 0;
  auto api = HttpApi::Start(c, {});
  ASSERT_TRUE(api.ok());
  EXPECT_EQ(*api, nullptr);
}

}  // namespace
}  // namespace tilestream
