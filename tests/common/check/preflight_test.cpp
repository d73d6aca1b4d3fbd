#include "common/check/preflight.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/net/udp_socket.h"
#include "tests/support/packet_builder.h"
#include "tests/support/temp_dir.h"
#include "tests/support/two_servers.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

class PreflightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    o_.proc_root = dir_ / "proc";
    o_.sys_root = dir_ / "sys";
    Write("proc/sys/net/core/wmem_max", "212992");
    Write("proc/sys/net/core/rmem_max", "134217728");
    Write("proc/sys/net/core/netdev_max_backlog", "1000");
    Write("sys/class/net/eth2/mtu", "1500");
    Write("sys/class/net/eth2/device/numa_node", "1");
    Write("sys/class/net/eth3/mtu", "9000");
    Write("sys/class/net/eth3/device/numa_node", "0");
    config_ = DefaultWallConfig({2, 1});
    config_.nics = {
        {"eth2", "", 0, 10, "", 0}, {"eth3", "", 0, 10, "", 0}, {"eth9", "", -1, 10, "", 0}};
    config_.control.port = 0;  // any free port: bindable
  }

  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(dir_ / path).parent_path());
    std::ofstream(dir_ / path) << text << "\n";
  }

  // The finding whose text contains `needle`.
  Finding Find(const std::vector<Finding>& all, const std::string& needle) {
    for (const Finding& f : all)
      if (f.what.find(needle) != std::string::npos) return f;
    ADD_FAILURE() << "no finding about " << needle;
    return {};
  }

  TempDir dir_;
  PreflightOptions o_;
  WallConfig config_;
};

TEST_F(PreflightTest, TheStreamerHostsBuffersAndInterfacesWithTheirFixes) {
  const auto f = CheckStreamerHost(config_, o_);
  const Finding wmem = Find(f, "net.core.wmem_max");
  EXPECT_EQ(wmem.level, Finding::Level::kWarn);
  EXPECT_THAT(wmem.what, HasSubstr("is 212992, below the 4718592"));
  EXPECT_THAT(wmem.fix, ::testing::StartsWith("sysctl -w net.core.wmem_max=4718592 "));
  const Finding mtu = Find(f, "interface eth2 has MTU 1500");
  EXPECT_EQ(mtu.level, Finding::Level::kFail);
  EXPECT_EQ(mtu.fix, "ip link set eth2 mtu 9000");
  EXPECT_EQ(Find(f, "interface eth3 has MTU 9000").level, Finding::Level::kOk);
  const Finding numa = Find(f, "interface eth2 is on NUMA node 1, the config says 0");
  EXPECT_EQ(numa.level, Finding::Level::kWarn);
  EXPECT_EQ(Find(f, "interface eth9 does not exist").level, Finding::Level::kFail);
  EXPECT_EQ(Find(f, "control port").level, Finding::Level::kOk);
  bool failed = false;
  const std::string text = FormatFindings(f, &failed);
  EXPECT_TRUE(failed);
  EXPECT_THAT(text, HasSubstr("FAIL interface eth2 has MTU 1500, the wall needs 9000\n     fix: ip "
                              "link set eth2 mtu 9000"));
}

TEST_F(PreflightTest, TheReceiverHostsBuffersBacklogAndPorts) {
  for (TileRoute& r : config_.routes) r.port = 0;  // any free port
  const auto f = CheckReceiverHost(config_, 0, o_);
  EXPECT_EQ(Find(f, "net.core.rmem_max").level, Finding::Level::kOk);
  EXPECT_EQ(Find(f, "net.core.netdev_max_backlog").level, Finding::Level::kWarn);
  EXPECT_EQ(Find(f, "tile r0c0 port").level, Finding::Level::kOk);
  UdpReceiverOptions taken;
  taken.bind_address = "127.0.0.1";
  auto holder = UdpReceiver::Open(taken);
  ASSERT_TRUE(holder.ok());
  config_.routes[0].port = holder->port();
  EXPECT_EQ(Find(CheckReceiverHost(config_, 0, o_), "tile r0c0 port").level, Finding::Level::kFail);
}

TEST_F(PreflightTest, TheStoreIsReadAndItsRateComparedWithWhatATileNeeds) {
  TileStoreWriter::Options w;
  w.directory = dir_ / "movie";
  w.layout = {1, 1};
  w.tile = {64, 32};
  auto writer = TileStoreWriter::Create(w);
  ASSERT_TRUE(writer.ok());
  for (uint32_t f = 0; f < 4; ++f)
    ASSERT_TRUE(writer->AppendFrame(0, testing::PatternFrame(w.tile, f)).ok());
  ASSERT_TRUE(writer->Finish().ok());
  auto movie = OpenTileStore(dir_ / "movie");
  ASSERT_TRUE(movie.ok());
  config_.wall.tile = w.tile;
  const auto f = CheckStore(*movie, config_);
  EXPECT_THAT(Find(f, "tile 0 reads at").what,
              HasSubstr("(4 frames); one tile needs 0 MB/s at 30 fps"));
  EXPECT_NE(Find(f, "O_DIRECT").level, Finding::Level::kFail);
}

// On a wall of two servers each checks its own NICs, and only the first
// the control port; a host that is neither is told so.
TEST_F(PreflightTest, AServerOfSeveralChecksItsOwnNicsOnly) {
  const WallConfig two = testing::TwoServers();
  o_.host = "stream2";
  auto f = CheckStreamerHost(two, o_);
  EXPECT_EQ(Find(f, "this host ('stream2') is server 'stream2' of stream1, stream2").level,
            Finding::Level::kOk);
  EXPECT_EQ(Find(f, "interface eth2 has MTU 1500").level, Finding::Level::kFail);
  size_t interfaces = 0, control = 0;
  for (const Finding& x : f) {
    interfaces += x.what.find("interface ") != std::string::npos;
    control += x.what.find("control port") != std::string::npos;
  }
  EXPECT_EQ(interfaces, 4u) << "eth2 and eth3 of stream2, MTU and NUMA node each (not 8)";
  EXPECT_EQ(control, 0u) << "the control port is the first server's";
  o_.host = "laptop";
  f = CheckStreamerHost(two, o_);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(Find(f, "this host ('laptop') is none of the wall's servers").level,
            Finding::Level::kFail);
}

}  // namespace
}  // namespace tilestream
