#include "common/control/control_commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace tilestream {
namespace {

using ::testing::HasSubstr;

// The reply must be one JSON object with a boolean "ok", on one line.
nlohmann::json Parsed(const std::string& reply) {
  EXPECT_EQ(reply.find('\n'), std::string::npos) << reply;
  auto j = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(j.is_object() && j.contains("ok") && j["ok"].is_boolean()) << reply;
  return j;
}

TEST(ControlCommands, PlaybackCommandsChangeThePlaybackAndReplyItsState) {
  Playback p(100, 30);
  ControlCommands commands;
  commands.set_playback(&p);
  commands.set_tick(7);
  auto j = Parsed(commands.Handle("seek 42"));
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["frame"], 42);
  EXPECT_EQ(j["tick"], 7);
  j = Parsed(commands.Handle("pause"));
  EXPECT_EQ(j["state"], "paused");
  EXPECT_EQ(p.frame(), 42u);
  EXPECT_FALSE(p.playing());
}

TEST(ControlCommands, StatusAddsTheOwnersFieldsAndStopIsRemembered) {
  ControlCommands commands([](nlohmann::json* j) { (*j)["tiles"] = {1, 2}; });
  auto j = Parsed(commands.Handle("status"));
  EXPECT_EQ(j["state"], "benchmark");
  EXPECT_EQ(j["tiles"].size(), 2u);
  EXPECT_FALSE(commands.stop_requested());
  EXPECT_EQ(Parsed(commands.Handle("stop"))["stopping"], true);
  EXPECT_TRUE(commands.stop_requested());
}

// `movies` answers the owner's listing, or why there is none.
TEST(ControlCommands, MoviesAnswersTheLibrarysListing) {
  ControlCommands commands;
  auto j = Parsed(commands.Handle("movies"));
  EXPECT_EQ(j["ok"], false);
  EXPECT_THAT(j["error"].get<std::string>(), HasSubstr("no movie library"));
  commands.set_movie_list([]() -> Result<nlohmann::json> {
    return nlohmann::json{{"movies", {{{"name", "a"}}}}};
  });
  j = Parsed(commands.Handle("movies"));
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["movies"][0]["name"], "a");
  commands.set_movie_list(
      []() -> Result<nlohmann::json> { return Status::IoError("movie library /x: gone"); });
  EXPECT_THAT(Parsed(commands.Handle("movies"))["error"].get<std::string>(), HasSubstr("gone"));
  EXPECT_EQ(Parsed(commands.Handle("movies now"))["ok"], false);
}

TEST(ControlCommands, BenchmarkModeRefusesPlaybackCommands) {
  ControlCommands commands;
  auto j = Parsed(commands.Handle("play"));
  EXPECT_EQ(j["ok"], false);
  EXPECT_THAT(j["error"].get<std::string>(), HasSubstr("benchmark"));
}

// The crash this guards against: a reply quoting a command word that is not
// UTF-8 threw from the JSON library and ended the whole job.
TEST(ControlCommands, EveryByteValueInACommandOrArgumentGetsValidJson) {
  Playback p(10, 30);
  ControlCommands commands;
  commands.set_playback(&p);
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    for (const std::string& line :
         {std::string(1, c), "seek " + std::string(1, c), std::string("pl") + c + "ay",
          "loop " + std::string(3, c), "axis 1 " + std::string(1, c)}) {
      Parsed(commands.Handle(line));
    }
  }
  EXPECT_LT(p.frame(), 10u);
}

TEST(ControlCommands, BrokenUtf8IsQuotedEscapedInTheError) {
  ControlCommands commands;
  for (const std::string& line :
       {std::string("seek \xff\xfe"), std::string("\xc0\xaf"), std::string("\xe2\x82"),
        std::string("\xed\xa0\x80 1"), std::string("se\0ek 1", 7)}) {
    auto j = Parsed(commands.Handle(line));
    EXPECT_EQ(j["ok"], false) << line;
  }
  auto j = Parsed(commands.Handle("seek \xff\xfe"));
  EXPECT_THAT(j["error"].get<std::string>(), HasSubstr("\\xff\\xfe"));
}

}  // namespace
}  // namespace tilestream

namespace tilestream {
namespace {

// A library of two movies that fit and one that does not; the loads it
// was asked for.
struct FakeLibrary {
  std::vector<std::string> loads;
  void Attach(ControlCommands* commands, Playlist* playlist) {
    commands->set_movie_loader(
        [this](const std::string& name, uint64_t frame) -> Result<nlohmann::json> {
          if (name == "wide") return Status::InvalidArgument("cannot load wide: cut for 3x1");
          loads.push_back(name + "@" + std::to_string(frame));
          return nlohmann::json{{"loading", name}};
        });
    commands->set_playlist(playlist, [](const std::string& name) {
      return name == "wide" ? Status::InvalidArgument("cannot load wide: cut for 3x1")
                            : Status::Ok();
    });
  }
};

TEST(ControlCommands, LoadGoesToTheLoaderAndItsRefusalIsTheReply) {
  Playback p(100, 30);
  ControlCommands commands;
  commands.set_playback(&p);
  EXPECT_THAT(commands.Handle("load earth"), HasSubstr("no movie library"));
  Playlist playlist;
  FakeLibrary library;
  library.Attach(&commands, &playlist);
  auto j = Parsed(commands.Handle("load earth 12"));
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["loading"], "earth");
  j = Parsed(commands.Handle("load wide"));
  EXPECT_EQ(j["ok"], false);
  EXPECT_THAT(j["error"].get<std::string>(), HasSubstr("cut for 3x1"));
  EXPECT_EQ(library.loads, std::vector<std::string>{"earth@12"});
}

TEST(ControlCommands, ThePlaylistIsQueuedShownAndWalkedByCommandsAndButtons) {
  Playback p(100, 30);
  ControlCommands commands;
  commands.set_playback(&p);
  EXPECT_THAT(commands.Handle("next"), HasSubstr("the playlist is empty"));
  Playlist playlist;
  FakeLibrary library;
  library.Attach(&commands, &playlist);
  EXPECT_THAT(commands.Handle("queue wide"), HasSubstr("cut for 3x1"));
  Parsed(commands.Handle("queue a"));
  auto j = Parsed(commands.Handle("queue b"));
  EXPECT_EQ(j["playlist"], nlohmann::json::array({"a", "b"}));
  EXPECT_EQ(j["current"], -1);
  EXPECT_EQ(Parsed(commands.Handle("status"))["playlist"].size(), 2u);
  Parsed(commands.Handle("next"));        // a: the movie playing is not in the list
  playlist.Playing("a");                  // (the coordinator says so at the switch)
  Parsed(commands.Handle("button 7 1"));  // next_button: b
  Parsed(commands.Handle("button 7 0"));  // released: nothing
  playlist.Playing("b");
  Parsed(commands.Handle("previous"));
  Parsed(commands.Handle("next"));  // loop on (the default): a again
  EXPECT_EQ(library.loads, (std::vector<std::string>{"a@0", "b@0", "a@0", "a@0"}));
  Parsed(commands.Handle("loop off"));
  EXPECT_THAT(commands.Handle("next"), HasSubstr("the playlist's last movie plays"));
  j = Parsed(commands.Handle("playlist clear"));
  EXPECT_EQ(j["playlist"].size(), 0u);
}

}  // namespace
}  // namespace tilestream
