#include "common/control/playback.h"

#include <gtest/gtest.h>

#include <vector>

namespace tilestream {
namespace {

std::vector<uint64_t> Ticks(Playback* p, int n) {
  std::vector<uint64_t> frames;
  for (int i = 0; i < n; ++i) frames.push_back(p->Advance());
  return frames;
}

void Do(Playback* p, std::string_view line) {
  auto c = ParseCommand(line);
  ASSERT_TRUE(c.ok()) << line;
  std::string error;
  ASSERT_TRUE(p->Apply(*c, &error)) << line << ": " << error;
}

TEST(Playback, PlaysAndLoopsByDefault) {
  Playback p(4, 30);
  EXPECT_EQ(Ticks(&p, 6), (std::vector<uint64_t>{0, 1, 2, 3, 0, 1}));
}

TEST(Playback, PauseHoldsTheFrameAndSendsItAboutTwiceASecond) {
  Playback p(10, 30);
  Ticks(&p, 3);
  Do(&p, "pause");
  EXPECT_EQ(Ticks(&p, 3), (std::vector<uint64_t>{3, 3, 3}));
  int sent = 0;
  for (uint64_t t = 0; t < 30; ++t) sent += p.ShouldSend(t);
  EXPECT_EQ(sent, 2);
  EXPECT_EQ(p.read_ahead_step(), 0);
  Do(&p, "step 1");
  EXPECT_TRUE(p.ShouldSend(1)) << "a step shows at the next tick";
  EXPECT_EQ(p.Advance(), 4u);
  EXPECT_FALSE(p.ShouldSend(1));
  Do(&p, "step -1");
  Do(&p, "toggle");
  EXPECT_EQ(Ticks(&p, 2), (std::vector<uint64_t>{3, 4}));
}

TEST(Playback, ALoadPlaysTheNewMovieFromItsFrame) {
  Playback p(8, 25);
  Command pause;
  pause.kind = CommandKind::kPause;
  std::string error;
  ASSERT_TRUE(p.Apply(pause, &error));
  p.Load(30, 10);
  EXPECT_TRUE(p.playing());
  EXPECT_EQ(p.frames(), 30u);
  EXPECT_TRUE(p.ShouldSend(1)) << "its first frame at once";
  EXPECT_EQ(p.Advance(), 10u);
  EXPECT_EQ(p.Advance(), 11u);
}

TEST(Playback, SeekStepAndSpeed) {
  Playback p(100, 30);
  Do(&p, "seek 50");
  EXPECT_EQ(Ticks(&p, 2), (std::vector<uint64_t>{50, 51}));
  Do(&p, "step -10");  // pauses
  EXPECT_FALSE(p.playing());
  EXPECT_EQ(p.frame(), 42u);
  Do(&p, "speed 2");
  Do(&p, "play");
  EXPECT_EQ(Ticks(&p, 3), (std::vector<uint64_t>{42, 44, 46}));
  EXPECT_EQ(p.read_ahead_step(), 2);
  Do(&p, "speed -1");
  EXPECT_EQ(Ticks(&p, 3), (std::vector<uint64_t>{48, 47, 46}));
  EXPECT_EQ(p.read_ahead_step(), -1);
  Do(&p, "speed 0.5");
  EXPECT_EQ(Ticks(&p, 4), (std::vector<uint64_t>{45, 45, 46, 46}));
  EXPECT_EQ(p.read_ahead_step(), 1);
  std::string error;
  EXPECT_FALSE(p.Apply(*ParseCommand("seek 100"), &error));
  EXPECT_EQ(error, "seek 100: the movie has frames 0..99");
}

TEST(Playback, BackwardsWrapsAroundTheStartWhenLooping) {
  Playback p(5, 30);
  Do(&p, "speed -1");
  EXPECT_EQ(Ticks(&p, 4), (std::vector<uint64_t>{0, 4, 3, 2}));
}

TEST(Playback, WithoutLoopTheEndIsHeldAndPlaybackPauses) {
  Playback p(4, 30);
  Do(&p, "loop off");
  EXPECT_EQ(Ticks(&p, 6), (std::vector<uint64_t>{0, 1, 2, 3, 3, 3}));
  EXPECT_FALSE(p.playing());
  Do(&p, "speed -2");
  Do(&p, "play");
  EXPECT_EQ(Ticks(&p, 4), (std::vector<uint64_t>{3, 1, 0, 0})) << "backwards, the end is frame 0";
  EXPECT_FALSE(p.playing());
  Do(&p, "step -5");  // clamped at the start
  EXPECT_EQ(p.frame(), 0u);
}

TEST(Playback, TheStickScrubsAndTheButtonsToggleAndStep) {
  Playback p(1000, 30);
  Do(&p, "pause");
  Do(&p, "axis 0 1");  // full right: scrub_speed frames a tick
  EXPECT_TRUE(p.scrubbing());
  EXPECT_EQ(Ticks(&p, 2), (std::vector<uint64_t>{0, 8}));
  Do(&p, "axis 0 -0.575");  // half-way left (between dead zone and full)
  EXPECT_DOUBLE_EQ(p.speed(), -4);
  Do(&p, "axis 0 0.05");  // back in the dead zone: as before the scrub
  EXPECT_FALSE(p.scrubbing());
  EXPECT_FALSE(p.playing());
  EXPECT_DOUBLE_EQ(p.speed(), 1);
  Do(&p, "axis 3 1");  // an unmapped axis
  EXPECT_FALSE(p.scrubbing());
  const uint64_t at = p.frame();
  Do(&p, "button 5 1");
  Do(&p, "button 5 0");  // release does nothing
  EXPECT_EQ(p.frame(), at + 1);
  Do(&p, "button 4 1");
  EXPECT_EQ(p.frame(), at);
  Do(&p, "button 0 1");
  EXPECT_TRUE(p.playing());
}

}  // namespace
}  // namespace tilestream
