#include "common/live/picture_ring.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace tilestream {
namespace {

std::string RingPath() {
  return "/dev/shm/tilestream-test-ring-" + std::to_string(getpid()) + "-" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

void Fill(PictureRing& ring, uint32_t w, uint32_t h, uint8_t value) {
  std::byte* p = ring.BeginPicture(w, h);
  std::memset(p, value, size_t{w} * h * 3);
}

TEST(PictureRing, AReaderSeesEachPicturePublishedWholeInItsOwnMapping) {
  auto writer = PictureRing::Create(RingPath(), 64, 32);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  auto reader = PictureRing::Open(RingPath());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ(reader->newest(), 0u);
  EXPECT_FALSE(reader->Find(1).has_value());
  Fill(*writer, 64, 32, 7);
  EXPECT_FALSE(reader->Find(1).has_value());  // being written: torn
  EXPECT_EQ(writer->Publish(123, 9000), 1u);
  EXPECT_EQ(reader->newest(), 1u);
  const auto p = reader->Find(1);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->width, 64u);
  EXPECT_EQ(p->height, 32u);
  EXPECT_EQ(p->complete_ns, 123);
  EXPECT_EQ(p->rtp_timestamp, 9000u);
  EXPECT_TRUE(std::all_of(p->pixels, p->pixels + 64 * 32 * 3,
                          [](std::byte b) { return b == std::byte{7}; }));
  EXPECT_TRUE(reader->Intact(*p));
}

// A picture stays whole for kSlots - 1 pictures after it; a reader that
// held it while the writer came round learns that what it read is torn.
TEST(PictureRing, APictureOverwrittenWhileReadIsTorn) {
  auto writer = PictureRing::Create(RingPath(), 16, 16);
  ASSERT_TRUE(writer.ok());
  auto reader = PictureRing::Open(RingPath());
  ASSERT_TRUE(reader.ok());
  Fill(*writer, 16, 16, 1);
  writer->Publish(0, 0);
  const auto held = reader->Find(1);
  ASSERT_TRUE(held.has_value());
  for (uint32_t i = 2; i <= PictureRing::kSlots; ++i) {
    Fill(*writer, 8, 8, static_cast<uint8_t>(i));
    writer->Publish(0, 0);
  }
  EXPECT_TRUE(reader->Intact(*held));  // 8 pictures: picture 1 still whole
  Fill(*writer, 8, 8, 9);              // picture 9 begins in picture 1's slot
  EXPECT_FALSE(reader->Intact(*held));
  EXPECT_FALSE(reader->Find(1).has_value());
  writer->Publish(0, 0);
  EXPECT_FALSE(reader->Find(1).has_value());
  const auto p9 = reader->Find(9);
  ASSERT_TRUE(p9.has_value());
  EXPECT_EQ(p9->width, 8u);
  EXPECT_EQ(p9->pixels[0], std::byte{9});
}

TEST(PictureRing, TheWriterReplacesADeadJobsRingAndRemovesItsOwn) {
  const std::string path = RingPath();
  {
    auto stale = PictureRing::Create(path, 8, 8);
    ASSERT_TRUE(stale.ok());
    Fill(*stale, 8, 8, 1);
    stale->Publish(0, 0);
    auto ring = PictureRing::Create(path, 8, 8);  // a new job, the old one's file left
    ASSERT_TRUE(ring.ok());
    auto reader = PictureRing::Open(path);
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ(reader->newest(), 0u);
    stale = std::move(ring);  // the first writer gone: the path is the second's
  }
  struct stat st {};
  EXPECT_NE(stat(path.c_str(), &st), 0);
}

TEST(PictureRing, RefusesWhatIsNotARing) {
  const std::string path = RingPath();
  EXPECT_FALSE(PictureRing::Open(path).ok());  // none
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::string junk(8192, 'x');
  fwrite(junk.data(), 1, junk.size(), f);
  fclose(f);
  const auto r = PictureRing::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a picture ring"), std::string::npos);
  unlink(path.c_str());
  EXPECT_FALSE(PictureRing::Create(path, 0, 8).ok());
  EXPECT_FALSE(PictureRing::Create(path, kMaxPictureWidth + 1, 8).ok());
}

}  // namespace
}  // namespace tilestream
