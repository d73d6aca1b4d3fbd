#include "common/control/movie_loads.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace tilestream {
namespace {

using ::testing::HasSubstr;

// Tile's report of load `generation`: done, or failed with `error`.
std::optional<std::string> Report(MovieLoads& loads, uint64_t generation, uint32_t tile,
                                  const std::string& name, const char* error = nullptr) {
  return loads.Loaded(generation, tile, error == nullptr, error ? error : "", name);
}

TEST(MovieLoads, SwitchesOnlyOnceEveryTileHasTheMovie) {
  MovieLoads loads(3, {"A", "/lib/A", 8});
  EXPECT_EQ(loads.Begin({"B", "/lib/B", 30}, 10), 1u);
  EXPECT_EQ(loads.sent(), 1u);
  EXPECT_FALSE(Report(loads, 1, 0, "r0c0"));
  EXPECT_FALSE(Report(loads, 1, 0, "r0c0")) << "a repeat counts once";
  EXPECT_FALSE(Report(loads, 1, 2, "r0c2"));
  EXPECT_FALSE(loads.TakeReady(5));
  EXPECT_EQ(loads.playing_generation(), 0u);
  EXPECT_FALSE(Report(loads, 1, 1, "r0c1"));
  EXPECT_EQ(loads.TakeReady(6), 10u);
  EXPECT_EQ(loads.playing().name, "B");
  EXPECT_EQ(loads.playing_generation(), 1u);
  EXPECT_FALSE(loads.TakeReady(7)) << "once";
  nlohmann::json status;
  loads.AddStatus(&status);
  EXPECT_EQ(status["movie"], "B");
  EXPECT_EQ(status["last_load"]["tick"], 6);
  EXPECT_FALSE(status.contains("loading"));
}

TEST(MovieLoads, ATileThatCannotOpenItAbandonsTheLoadAndTheMoviePlaysOn) {
  MovieLoads loads(2, {"A", "/lib/A", 8});
  loads.Begin({"B", "/lib/B", 30}, 0);
  EXPECT_FALSE(Report(loads, 1, 0, "r0c0"));
  const auto error = Report(loads, 1, 1, "r0c1", "/lib/B/r0c1.raw: No such file");
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "load B: tile r0c1: /lib/B/r0c1.raw: No such file; A plays on");
  EXPECT_FALSE(loads.TakeReady(3));
  EXPECT_EQ(loads.playing().name, "A");
  nlohmann::json status;
  loads.AddStatus(&status);
  EXPECT_THAT(status["last_load"]["error"].get<std::string>(), HasSubstr("A plays on"));
}

TEST(MovieLoads, ANewerLoadReplacesOneUnderWayAndOldReportsAreIgnored) {
  MovieLoads loads(1, {"A", "/lib/A", 8});
  loads.Begin({"B", "/lib/B", 30}, 0);
  loads.Begin({"C", "/lib/C", 40}, 5);
  EXPECT_FALSE(Report(loads, 1, 0, "r0c0"));
  EXPECT_FALSE(loads.TakeReady(1)) << "B's report does not make C ready";
  EXPECT_FALSE(Report(loads, 1, 0, "r0c0", "broken")) << "nor does B's failure end C";
  EXPECT_FALSE(Report(loads, 2, 0, "r0c0"));
  EXPECT_EQ(loads.TakeReady(2), 5u);
  EXPECT_EQ(loads.playing().name, "C");
  EXPECT_EQ(loads.playing_generation(), 2u);
}

}  // namespace
}  // namespace tilestream
