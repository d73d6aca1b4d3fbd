#include "common/wall/nic_assignment.h"

#include <gtest/gtest.h>

#include <vector>

namespace tilestream {
namespace {

std::vector<int> Counts(const std::vector<uint32_t>& nic, size_t nics) {
  std::vector<int> c(nics);
  for (uint32_t n : nic) c[n]++;
  return c;
}

TEST(NicAssignment, BalancesEqualStreamsOverEqualNics) {
  const std::vector<int> pinned(15, -1);
  const std::vector<double> bps(15, 2.16e9);
  const std::vector<double> speed(4, 10e9);
  const auto nic = AssignNics(pinned, bps, speed);
  EXPECT_EQ(Counts(nic, 4), (std::vector<int>{4, 4, 4, 3}));
  EXPECT_EQ(nic[0], 0u);  // round robin in tile order
  EXPECT_EQ(nic[1], 1u);
  EXPECT_EQ(nic[4], 0u);
}

TEST(NicAssignment, KeepsPinnedTilesAndBalancesTheRest) {
  const std::vector<int> pinned = {1, 1, 1, -1, -1, -1};
  const std::vector<double> bps(6, 1e9);
  const std::vector<double> speed(2, 10e9);
  const auto nic = AssignNics(pinned, bps, speed);
  EXPECT_EQ(nic[0], 1u);
  EXPECT_EQ(nic[1], 1u);
  EXPECT_EQ(nic[2], 1u);
  EXPECT_EQ(Counts(nic, 2), (std::vector<int>{3, 3}));
}

TEST(NicAssignment, FasterNicCarriesMore) {
  const std::vector<int> pinned(12, -1);
  const std::vector<double> bps(12, 1e9);
  const std::vector<double> speed = {10e9, 40e9, 10e9};
  EXPECT_EQ(Counts(AssignNics(pinned, bps, speed), 3), (std::vector<int>{2, 8, 2}));
}

TEST(NicAssignment, PlacesBigStreamsFirst) {
  const std::vector<int> pinned(3, -1);
  const std::vector<double> bps = {1e9, 1e9, 2e9};
  const std::vector<double> speed(2, 10e9);
  const auto nic = AssignNics(pinned, bps, speed);
  EXPECT_EQ(nic[2], 0u);
  EXPECT_EQ(nic[0], 1u);
  EXPECT_EQ(nic[1], 1u);
}

// Two servers of two NICs each: tiles 0..3 belong to the second server,
// the rest may go anywhere; the balance holds within what is allowed.
TEST(NicAssignment, AllowedNicsLimitWhereATileGoes) {
  const std::vector<int> pinned(8, -1);
  const std::vector<double> bps(8, 1e9);
  const std::vector<double> speed(4, 10e9);
  const auto nic =
      AssignNics(pinned, bps, speed, [](size_t tile, size_t n) { return tile >= 4 || n >= 2; });
  for (size_t t = 0; t < 4; ++t) EXPECT_GE(nic[t], 2u) << t;
  EXPECT_EQ(Counts(nic, 4), (std::vector<int>{2, 2, 2, 2}));
}

}  // namespace
}  // namespace tilestream
