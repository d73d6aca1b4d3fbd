#include "common/control/control_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tilestream {
namespace {

using ::testing::HasSubstr;

Command Parse(std::string_view line) {
  auto c = ParseCommand(line);
  EXPECT_TRUE(c.ok()) << line << ": " << c.status().message();
  return c.ok() ? *c : Command{};
}

std::string Error(std::string_view line) {
  auto c = ParseCommand(line);
  EXPECT_FALSE(c.ok()) << line;
  return c.ok() ? "" : c.status().message();
}

TEST(ControlProtocol, ParsesEveryCommand) {
  EXPECT_EQ(Parse("play").kind, CommandKind::kPlay);
  EXPECT_EQ(Parse("  pause ").kind, CommandKind::kPause);
  EXPECT_EQ(Parse("toggle").kind, CommandKind::kToggle);
  EXPECT_EQ(Parse("seek 42").frame, 42);
  EXPECT_EQ(Parse("step -3").count, -3);
  EXPECT_EQ(Parse("step +2").count, 2);
  EXPECT_DOUBLE_EQ(Parse("speed -0.5").value, -0.5);
  EXPECT_TRUE(Parse("loop on").on);
  EXPECT_FALSE(Parse("loop off").on);
  EXPECT_EQ(Parse("status").kind, CommandKind::kStatus);
  EXPECT_EQ(Parse("help").kind, CommandKind::kHelp);
  EXPECT_EQ(Parse("stop").kind, CommandKind::kStop);
  EXPECT_EQ(Parse("movies").kind, CommandKind::kMovies);
  const Command load = Parse("load earth_2010.v2 120");
  EXPECT_EQ(load.kind, CommandKind::kLoad);
  EXPECT_EQ(load.movie, "earth_2010.v2");
  EXPECT_EQ(load.frame, 120);
  EXPECT_EQ(Parse("load earth").frame, 0);
  EXPECT_EQ(Parse("queue earth").movie, "earth");
  EXPECT_EQ(Parse("queue earth").kind, CommandKind::kQueue);
  EXPECT_FALSE(Parse("playlist").on);
  EXPECT_TRUE(Parse("playlist clear").on);
  EXPECT_EQ(Parse("next").kind, CommandKind::kNext);
  EXPECT_EQ(Parse("previous").kind, CommandKind::kPrevious);
  const Command a = Parse("axis 1 -0.75");
  EXPECT_EQ(a.kind, CommandKind::kAxis);
  EXPECT_EQ(a.index, 1u);
  EXPECT_DOUBLE_EQ(a.value, -0.75);
  const Command b = Parse("button 5\t1");
  EXPECT_EQ(b.index, 5u);
  EXPECT_TRUE(b.on);
}

TEST(ControlProtocol, RejectsMalformedCommandsWithAReason) {
  EXPECT_THAT(Error(""), HasSubstr("empty"));
  EXPECT_THAT(Error("jump"), HasSubstr("unknown command 'jump'"));
  EXPECT_THAT(Error("PLAY"), HasSubstr("unknown command"));
  EXPECT_THAT(Error("play now"), HasSubstr("play takes 0 arguments"));
  EXPECT_THAT(Error("seek"), HasSubstr("seek takes 1 argument"));
  EXPECT_THAT(Error("seek -1"), HasSubstr("frame number >= 0"));
  EXPECT_THAT(Error("seek 1e3"), HasSubstr("frame number"));
  EXPECT_THAT(Error("seek 99999999999999999999999"), HasSubstr("frame number"));
  EXPECT_THAT(Error("step x"), HasSubstr("+N or -N"));
  EXPECT_THAT(Error("speed nan"), HasSubstr("speed -64..64"));
  EXPECT_THAT(Error("speed inf"), HasSubstr("speed"));
  EXPECT_THAT(Error("speed 100"), HasSubstr("speed"));
  EXPECT_THAT(Error("loop maybe"), HasSubstr("on or off"));
  EXPECT_THAT(Error("load"), HasSubstr("load takes a movie's name and a frame"));
  EXPECT_THAT(Error("load a 1 2"), HasSubstr("load takes"));
  for (const char* name : {"..", ".hidden", "a/b", "../etc", "a\\b", "caf\xc3\xa9"})
    EXPECT_THAT(Error(std::string("load ") + name), HasSubstr("a movie's name")) << name;
  EXPECT_THAT(Error("load " + std::string(129, 'x')), HasSubstr("a movie's name"));
  EXPECT_THAT(Error("load earth -1"), HasSubstr("frame number >= 0"));
  EXPECT_THAT(Error("queue ../x"), HasSubstr("a movie's name"));
  EXPECT_THAT(Error("playlist empty"), HasSubstr("expected clear"));
  EXPECT_THAT(Error("axis 0 1.5"), HasSubstr("-1..1"));
  EXPECT_THAT(Error("axis 999 0"), HasSubstr("axis 0..255"));
  EXPECT_THAT(Error("button 0 2"), HasSubstr("0 or 1"));
  EXPECT_THAT(Error("a b c d e"), HasSubstr("too many words"));
  EXPECT_THAT(Error(std::string(5000, 'x')), HasSubstr("..."));  // the echo is cut short
}

}  // namespace
}  // namespace tilestream
