// A NIC's speed from the kernel (common/net/link_speed.h), against a
// stand-in for /sys/class/net.
#include "common/net/link_speed.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace tilestream {
namespace {

class LinkSpeed : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("link_speed_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Speed(const std::string& nic, const std::string& text) {
    std::filesystem::create_directories(root_ / nic);
    std::ofstream(root_ / nic / "speed") << text;
  }
  std::optional<double> Read(const std::string& nic) { return KernelLinkSpeedBps(nic, root_); }
  std::filesystem::path root_;
};

TEST_F(LinkSpeed, ReadsMegabitsAsTheKernelWritesThem) {
  Speed("eth2", "10000\n");
  Speed("eth3", "100000\n");
  EXPECT_EQ(Read("eth2"), 10e9);
  EXPECT_EQ(Read("eth3"), 100e9);
}

TEST_F(LinkSpeed, UnknownIsNoSpeed) {
  Speed("virtio0", "-1\n");  // SPEED_UNKNOWN
  Speed("zero", "0\n");
  Speed("junk", "fast\n");
  Speed("empty", "");
  EXPECT_EQ(Read("virtio0"), std::nullopt);
  EXPECT_EQ(Read("zero"), std::nullopt);
  EXPECT_EQ(Read("junk"), std::nullopt);
  EXPECT_EQ(Read("empty"), std::nullopt);
  EXPECT_EQ(Read("absent"), std::nullopt);
}

TEST_F(LinkSpeed, ANameFromAConfigCannotLeaveTheDirectory) {
  Speed("eth2", "10000\n");
  EXPECT_EQ(Read("../" + root_.filename().string() + "/eth2"), std::nullopt);
  EXPECT_EQ(Read(".."), std::nullopt);
  EXPECT_EQ(Read(""), std::nullopt);
  EXPECT_EQ(Read("a-name-far-too-long"), std::nullopt);
}

TEST(KernelLinkSpeed, LoopbackHasNone) {
  EXPECT_EQ(KernelLinkSpeedBps("lo"), std::nullopt) << "the kernel refuses to read lo's speed";
}

}  // namespace
}  // namespace tilestream
