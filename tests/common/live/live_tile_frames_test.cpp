#include "common/live/live_tile_frames.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace tilestream {
namespace {

std::string RingPath() {
  return "/dev/shm/tilestream-test-tiles-" + std::to_string(getpid()) + "-" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

// A 2x2 wall of 8x4 tiles with a bezel of 2 between columns: an 18x8 canvas.
WallSettings Wall() {
  WallSettings w;
  w.layout = {2, 2};
  w.tile = {8, 4};
  w.bezel_x = 2;
  return w;
}

// Every pixel of the picture says where it is.
uint64_t PublishPattern(PictureRing& ring, uint32_t w, uint32_t h, uint8_t salt) {
  std::byte* p = ring.BeginPicture(w, h);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      std::byte* px = p + (size_t{y} * w + x) * 3;
      px[0] = std::byte(x);
      px[1] = std::byte(y);
      px[2] = std::byte(salt);
    }
  return ring.Publish(0, 0);
}

TEST(LiveTileFrames, APictureOfTheCanvasSizeIsCutPixelForPixelBezelsLeftOut) {
  auto ring = PictureRing::Create(RingPath(), 64, 64);
  ASSERT_TRUE(ring.ok());
  const WallSettings wall = Wall();
  auto frames = LiveTileFrames::Open(RingPath(), wall, /*tile=*/3, Fit::kBars);  // r1c1
  ASSERT_TRUE(frames.ok()) << frames.status().message();
  const std::byte* black = (*frames)->Acquire(0, 0);
  EXPECT_EQ(black[0], std::byte{0});
  const uint64_t n = PublishPattern(*ring, 18, 8, 5);
  const std::byte* f = (*frames)->Acquire(n, 0);
  for (uint32_t y = 0; y < 4; ++y)
    for (uint32_t x = 0; x < 8; ++x) {
      const std::byte* px = f + (size_t{y} * 8 + x) * 3;
      ASSERT_EQ(px[0], std::byte(10 + x)) << x << "," << y;  // 8 + bezel 2
      ASSERT_EQ(px[1], std::byte(4 + y));
      ASSERT_EQ(px[2], std::byte{5});
    }
  EXPECT_EQ((*frames)->Acquire(n, 0), f);  // the same picture: the same frame
  EXPECT_EQ((*frames)->live_stats().pictures, 1u);
}

TEST(LiveTileFrames, APictureGoneFromTheRingLeavesTheLastAndANewSizeIsPlannedAgain) {
  auto ring = PictureRing::Create(RingPath(), 64, 64);
  ASSERT_TRUE(ring.ok());
  auto frames = LiveTileFrames::Open(RingPath(), Wall(), 0, Fit::kFill, /*keep=*/2);
  ASSERT_TRUE(frames.ok());
  const uint64_t first = PublishPattern(*ring, 18, 8, 1);
  const std::byte* shown = (*frames)->Acquire(first, 0);
  EXPECT_EQ(shown[2], std::byte{1});
  const uint64_t missed = PublishPattern(*ring, 18, 8, 2);
  for (uint32_t i = 0; i < PictureRing::kSlots; ++i) PublishPattern(*ring, 18, 8, 2);
  EXPECT_EQ((*frames)->Acquire(missed, 0), shown);  // overwritten: the last again
  EXPECT_EQ((*frames)->live_stats().stale, 1u);
  // Half the size: scaled up to fill the canvas again.
  const uint64_t half = PublishPattern(*ring, 9, 4, 3);
  const std::byte* scaled = (*frames)->Acquire(half, 0);
  EXPECT_NE(scaled, shown);
  EXPECT_EQ(scaled[2], std::byte{3});
  EXPECT_EQ((*frames)->live_stats().replanned, 1u);
  // The frames sent before stay as they were for retransmission (keep 2).
  EXPECT_EQ(shown[2], std::byte{1});
}

}  // namespace
}  // namespace tilestream
