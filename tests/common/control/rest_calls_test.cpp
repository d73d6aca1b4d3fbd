#include "common/control/rest_calls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tilestream {
namespace {

using ::testing::HasSubstr;

std::string Line(std::string_view call, std::string_view body = "") {
  auto line = ControlLineOfRestCall(call, body);
  return line.ok() ? *line : "error: " + line.status().message();
}

TEST(RestCalls, EachCallIsItsControlLine) {
  EXPECT_EQ(Line("pause"), "pause");
  EXPECT_EQ(Line("play", "ignored"), "play");
  EXPECT_EQ(Line("seek", R"({"frame": 120})"), "seek 120");
  EXPECT_EQ(Line("seek", R"({"frame": -1})"), "seek -1") << "the handler refuses it, as by TCP";
  EXPECT_EQ(Line("step"), "step +1");
  EXPECT_EQ(Line("step", "{}"), "step +1");
  EXPECT_EQ(Line("step", R"({"frames": -3})"), "step -3");
  EXPECT_EQ(Line("speed", R"({"speed": 0.5})"), "speed 0.5");
  EXPECT_EQ(Line("speed", R"({"speed": -2})"), "speed -2");
  EXPECT_EQ(Line("loop", R"({"loop": true})"), "loop on");
  EXPECT_EQ(Line("load", R"({"movie": "earth", "frame": 10})"), "load earth 10");
  EXPECT_EQ(Line("load", R"({"movie": "earth"})"), "load earth 0");
  EXPECT_EQ(Line("next"), "next");
  EXPECT_EQ(Line("previous"), "previous");
  EXPECT_EQ(Line("playlist", R"({"queue": "earth"})"), "queue earth");
  EXPECT_EQ(Line("playlist", R"({"clear": true})"), "playlist clear");
  EXPECT_THAT(Line("playlist", R"({"clear": "yes"})"), HasSubstr("expected"));
  EXPECT_THAT(Line("playlist", R"({"queue": "a b"})"), HasSubstr("not a movie's name"));
}

TEST(RestCalls, ALoadOfSomethingNotAMoviesNameIsRefusedBeforeItIsALine) {
  EXPECT_THAT(Line("load", R"({"movie": "a\nstop"})"), HasSubstr("not a movie's name"));
  EXPECT_THAT(Line("load", R"({"movie": "../x"})"), HasSubstr("not a movie's name"));
  EXPECT_THAT(Line("load", R"({"movie": 3})"), HasSubstr(R"(load: expected a JSON body like)"));
  EXPECT_THAT(Line("load", R"({"movie": "a", "frame": "x"})"), HasSubstr("expected"));
}

TEST(RestCalls, ABodyThatIsNotTheExpectedJsonSaysWhatIsExpected) {
  EXPECT_THAT(Line("seek"), HasSubstr(R"(seek: expected a JSON body like {"frame": 120})"));
  EXPECT_THAT(Line("seek", R"({"frame": 1.5})"), HasSubstr("expected"));
  EXPECT_THAT(Line("seek", "{\"frame\": \"\xff\"}"), HasSubstr("expected"));
  EXPECT_THAT(Line("step", "[1]"), HasSubstr(R"({"frames": -1})"));
  EXPECT_THAT(Line("speed", R"({"speed": "fast"})"), HasSubstr("expected"));
  EXPECT_THAT(Line("loop", R"({"loop": 1})"), HasSubstr("expected"));
  EXPECT_THAT(Line("eject"), HasSubstr("no REST call 'eject'"));
}

}  // namespace
}  // namespace tilestream
