// The receiver's wall under hostile control clients and spoofed packets,
// and driven by a virtual joystick: the control port answers every line,
// a spoofed tile keeps its stream, the wall plays on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "common/image/ppm.h"
#include "common/net/line_channel.h"
#include "common/net/udp_socket.h"
#include "common/receive/tile_receiver.h"
#include "common/store/tile_store.h"
#include "tests/receiver/live_wall.h"
#include "tests/support/built_paths.h"
#include "tests/support/frame_log.h"
#include "tests/support/packet_builder.h"
#include "tests/support/receiver_path.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/thread_policy.h"
#include "tests/support/udp_port.h"
#include "tests/support/wait_for.h"
#include "tools/joystick/joystick_client.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"

namespace tilestream {
namespace {

// Hostile clients: 50 connections at once, 10,000 malformed lines, a 1 MB
// line, a client that never reads its replies. A well-behaved client is
// still answered at once, and the wall never misses a frame.
TEST_F(ReceiverTest, HostileClientsNeitherStallTheServerNorTheStream) {
  // A generous deadline, as HostileClients::PlayWhile's: the flood shares
  // 2 cores with the wall, and a node reported one tick after the default
  // deadline once in a clean clone's CI (every frame complete).
  std::ofstream(config_, std::ios::app) << "[sync]\ndeadline_ms = 500\n";
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  std::thread hostile([&] {
    // Once the streamer listens (its start takes seconds under ASan on a
    // loaded machine), and it streams.
    std::vector<UniqueFd> idle;
    for (int tries = 0; idle.empty() && tries < 300; ++tries) {
      auto fd = ConnectTcp("127.0.0.1", 7470, 1000);
      if (fd.ok())
        idle.push_back(std::move(fd).value());
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_FALSE(idle.empty()) << "the streamer never listened";
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    for (int i = 1; i < 50; ++i) {
      auto fd = ConnectTcp("127.0.0.1", 7470, 1000);
      if (fd.ok()) idle.push_back(std::move(fd).value());
    }
    auto junk = ConnectTcp("127.0.0.1", 7470, 1000);  // never reads its 10,000 error replies
    ASSERT_TRUE(junk.ok());
    std::string lines;
    for (int i = 0; i < 10000; ++i) lines += "seek banana " + std::to_string(i) + "\n";
    (void)!send(junk->get(), lines.data(), lines.size(), MSG_NOSIGNAL);
    auto huge = ConnectTcp("127.0.0.1", 7470, 1000);
    ASSERT_TRUE(huge.ok());
    const std::string mb(1 << 20, 'x');
    (void)!send(huge->get(), mb.data(), mb.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    // Answered (how fast is a benchmark's question, not this test's).
    const auto [rc, reply] = Ctl("status");
    EXPECT_EQ(rc, 0) << reply;
  });
  const auto tx = Stream(125);
  hostile.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  EXPECT_LE(Report("streamer")["sync"]["skipped"].get<uint64_t>(), TicksSkippedBySenders());
  for (const std::string tag : {"left", "right"}) {
    const auto report = Report(tag);  // the loop below refers into it
    for (const auto& t : report["tiles"])
      EXPECT_EQ(t["frames_complete"], SentFrames(t["tile"])) << t.dump();
  }
}

// Spoofed packets on one tile of a live wall: well-formed RFC 4175 with the
// tile's own SSRC, about 1,000 a second: random sequence numbers and
// timestamps, a constant sequence number, a wrong payload type, and some
// truncated. They once ended that tile's frames early, counted millions
// lost, and so skipped most of the wall's ticks. Now the tile keeps its
// stream, and the other tiles never notice.
// One in three runs once failed here: a single spoofed packet landing
// ahead in sequence with a timestamp in the next 10 s was believed and
// made the real packets look out of date (FrameAssembler unit tests
// ANewTimestampAfterAGap... pin the rule that stopped it).
TEST_F(ReceiverTest, SpoofedPacketsOnOneTileNeitherBreakItsStreamNorTheWall) {
  std::ofstream(config_, std::ios::app) << "[sync]\ndeadline_ms = 500\n";
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  std::atomic<bool> done{false};
  uint64_t spoofed = 0;
  std::thread spoofer([&] {
    UniqueFd fd(socket(AF_INET, SOCK_DGRAM, 0));
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(std::stoi(ports_[0])));  // tile r0c0
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const std::vector<std::byte> pixels(160 * 100 * 3, std::byte{0x5a});
    uint32_t random = 2463534242u;
    auto next = [&random] {  // xorshift
      random ^= random << 13, random ^= random >> 17, random ^= random << 5;
      return random;
    };
    while (!done) {
      testing::CraftedPacket p;
      p.ssrc = TileSsrc(0);
      p.sequence = next() & 0xffff;
      p.timestamp = next();
      p.marker = next() & 1;
      const uint16_t line = next() % 100;
      p.segments = {{line, 0, 480}};
      switch (spoofed % 4) {
        case 1:
          p.sequence = 4242;
          break;
        case 2:
          p.payload_type = 98;  // 97 is the retransmissions'

          break;
        default:
          break;
      }
      std::vector<std::byte> bytes = testing::Craft(p, {160, 100}, pixels);
      if (spoofed % 4 == 3) bytes.resize(20);  // truncated
      sendto(fd.get(), bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
      ++spoofed;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const uint64_t ticks = 250;  // 10 s
  const auto tx = Stream(ticks);
  done = true;
  spoofer.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  EXPECT_GT(spoofed, ticks) << "the spoofer sent too little to mean anything";
  // What arrived, not when: the wall's skipped ticks depend on how late a
  // loaded machine's reports come (under ASan and two CPU hogs the last
  // ticks' reports came after a 500 ms deadline), so they are not judged
  // here; a tile whose frames stop completing shows in its count below.
  for (const std::string tag : {"left", "right"}) {
    const auto report = Report(tag);  // the loop below refers into it
    for (const auto& t : report["tiles"]) {
      // Loopback loses nothing: any loss counted is a spoofed packet believed.
      EXPECT_EQ(t["lost"], 0) << t.dump();
      if (t["tile"] == "r0c0") {
        EXPECT_GE(t["frames_complete"].get<uint64_t>(), SentFrames("r0c0") * 99 / 100) << t.dump();
        EXPECT_GT(
            t["sequence_jump"].get<uint64_t>() + t["timestamp_out_of_sequence"].get<uint64_t>(), 0u)
            << t.dump();
        EXPECT_GT(t["wrong_payload_type"].get<uint64_t>(), 0u) << t.dump();
      } else {
        EXPECT_EQ(t["frames_complete"], SentFrames(t["tile"])) << t.dump();
      }
    }
    for (const auto& [tile, frames] : FramesReceived(tag))
      for (uint64_t f : frames)
        EXPECT_LT(f, kFrames) << "tile " << tile << ": a frame that was never sent";
  }
}

// Lines with every byte value in command names and arguments, broken UTF-8
// (overlong, truncated, surrogates), NULs, and each documented command with
// garbage appended (none of which may parse: no line here pauses or stops).
std::vector<std::string> HostileControlLines() {
  std::vector<std::string> lines;
  for (int b = 0; b < 256; ++b) {
    const std::string c(1, static_cast<char>(b));
    lines.push_back(c + "x");
    lines.push_back("x" + c + "y");
    lines.push_back("seek " + c);
    lines.push_back("seek 1" + c + "\xff");
  }
  for (const char* utf8 :
       {"\xc0\xaf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xe2\x82", "\xf0\x9f\x98", "\xed\xa0\x80",
        "\xf4\x90\x80\x80", "\xfe\xff", "\x80"}) {
    lines.push_back(utf8);
    lines.push_back(std::string("seek ") + utf8);
    lines.push_back(std::string("status ") + utf8);
  }
  lines.push_back(std::string("play\0", 5));
  lines.push_back(std::string("\0\0\0", 3));
  lines.push_back(
      std::string("seek \0"
                  "1",
                  7));
  for (const char* command : {"play", "pause", "toggle", "seek 3", "step 1", "speed 1", "loop off",
                              "status", "help", "axis 0 0.5", "button 0 1", "stop", "sync left"})
    lines.push_back(std::string(command) + " \xff\xfe\x01junk");
  return lines;
}

// The lines the server answers in `bytes`: split at "\r" and "\n" (a CRLF
// leaves an empty line between), blank lines unanswered.
size_t AnsweredLines(const std::string& bytes) {
  size_t n = 0;
  bool word = false;
  for (const char c : bytes) {
    if (c == '\r' || c == '\n') {
      n += word;
      word = false;
    } else if (c != ' ' && c != '\t') {
      word = true;
    }
  }
  return n;
}

// Reads lines from `c` until `want` came, it closed, or 60 s passed.
std::vector<std::string> ReadLines(LineChannel* c, size_t want) {
  std::vector<std::string> lines;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (lines.size() < want && std::chrono::steady_clock::now() < until) {
    while (auto line = c->NextLine()) lines.push_back(*line);
    if (lines.size() >= want || !c->open()) break;
    pollfd p{c->fd(), POLLIN, 0};
    poll(&p, 1, 50);
    c->Receive();
  }
  while (auto line = c->NextLine()) lines.push_back(*line);
  return lines;
}

bool IsJsonReply(const std::string& line) {
  const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("ok") && j["ok"].is_boolean();
}

// A line that is not UTF-8 once made the reply's JSON throw and ended the
// whole job. Now any bytes, before and after auth, get one JSON reply per
// line; the job stays up, a well-behaved client is answered, and every tick
// of the stream reaches every tile.
TEST_F(ReceiverTest, AnyBytesOnTheControlPortGetOneJsonReplyPerLineAndTheWallPlaysOn) {
  std::ofstream(dir_ / "token") << "s3cret\n";
  std::ofstream(config_, std::ios::app)
      << "[control]\ntoken_file = \"" << (dir_ / "token") << "\"\n"
      << "[sync]\ndeadline_ms = 500\n";
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  const std::vector<std::string> lines = HostileControlLines();
  std::thread hostile([&] {
    auto connect = [] {
      for (int tries = 0; tries < 600; ++tries) {  // until the streamer listens
        if (auto fd = ConnectTcp("127.0.0.1", 7470, 1000); fd.ok())
          return LineChannel(std::move(fd).value());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      return LineChannel();
    };
    // Before auth: each line is refused with one JSON reply and its connection closed.
    for (size_t i = 0; i < lines.size(); i += 3) {
      for (const std::string& line : {lines[i], "auth " + lines[i]}) {
        LineChannel c = connect();
        ASSERT_TRUE(c.open()) << "the streamer stopped listening before line " << i;
        const std::string bytes = line + "\n";
        (void)!send(c.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
        const auto replies = ReadLines(&c, 2);
        ASSERT_EQ(replies.size(), 1u) << "line " << i;
        EXPECT_TRUE(IsJsonReply(replies[0])) << replies[0];
      }
    }
    // After auth: every line on one connection, ends "\n", "\r\n" and "\r" in turn.
    LineChannel c = connect();
    ASSERT_TRUE(c.open());
    c.Send("auth s3cret");
    ASSERT_EQ(ReadLines(&c, 1), std::vector<std::string>{R"({"ok":true})"});
    // The ticks the wall has shown so far.
    auto shown = [&c] {
      c.Send("status");
      const auto reply = ReadLines(&c, 1);
      const auto j = nlohmann::json::parse(reply.empty() ? "" : reply[0], nullptr, false);
      return j.is_object() && j.contains("sync") ? j["sync"].value("shown", uint64_t{0}) : 0;
    };
    auto wait_shown = [&](uint64_t n) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (shown() < n && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    };
    wait_shown(10);  // the wall plays
    std::string bytes;
    for (size_t i = 0; i < lines.size(); ++i)
      bytes += lines[i] + (i % 3 == 0 ? "\n" : i % 3 == 1 ? "\r\n" : "\r");
    const size_t want = AnsweredLines(bytes) + 1;  // and the "help" that marks the end
    bytes += "help\n";
    (void)!send(c.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    const auto replies = ReadLines(&c, want);
    ASSERT_EQ(replies.size(), want);
    EXPECT_THAT(replies.back(), ::testing::HasSubstr("\"commands\""));
    for (const std::string& reply : replies) EXPECT_TRUE(IsJsonReply(reply)) << reply;
    wait_shown(shown() + 10);  // and plays on
    // A well-behaved client is answered, then ends the job.
    const auto [rc, status] = Ctl("status");
    EXPECT_EQ(rc, 0) << status;
    EXPECT_THAT(status, ::testing::HasSubstr("\"tiles\""));
    EXPECT_EQ(Ctl("stop").first, 0);
  });
  const auto tx = Stream(100000);  // until the stop above
  hostile.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  const auto streamer = Report("streamer");
  const uint64_t presented = streamer["sync"]["presented"];
  EXPECT_GT(presented, 0u);
  // (Skipped ticks are left to timing: under load a report came late.)
  for (const std::string tag : {"left", "right"}) {
    const auto report = Report(tag);  // the loop below refers into it
    for (const auto& t : report["tiles"]) {
      // Every tick shown arrived whole; a frame sent as the stop came may
      // have arrived without being decided.
      EXPECT_GE(t["frames_complete"].get<uint64_t>(), presented) << t.dump();
      EXPECT_EQ(t["frames_incomplete"], 0) << t.dump();
      EXPECT_EQ(t["lost"], 0) << t.dump();
    }
    for (const auto& [tile, frames] : FramesReceived(tag))
      for (uint64_t f : frames)
        EXPECT_LT(f, kFrames) << "tile " << tile << ": a frame not in the store";
  }
}

// The joystick client, driven by SDL's virtual joystick (no hardware):
// button 5 steps the paused wall forwards, the stick scrubs while held and
// gives the state back when centred.
TEST_F(ReceiverTest, AVirtualJoystickStepsAndScrubsTheWall) {
  ASSERT_EQ(SDL_Init(SDL_INIT_JOYSTICK), 0) << SDL_GetError();
  const int index = SDL_JoystickAttachVirtual(SDL_JOYSTICK_TYPE_GAMECONTROLLER, 2, 6, 0);
  ASSERT_GE(index, 0) << SDL_GetError();
  SDL_Joystick* stick = SDL_JoystickOpen(index);
  ASSERT_NE(stick, nullptr);
  std::thread stream([&] { ASSERT_EQ(Stream(100000).exit_code, 0); });  // until the stop below
  {
    JoystickClientOptions o;
    o.device = index;
    JoystickClient client(o);
    auto run = [&](int ms) {
      for (int t = 0; t < ms; t += 50) client.Poll(50);
    };
    auto frame_and_state = [&] {
      const auto j = nlohmann::json::parse(Ctl("status").second, nullptr, false);
      return std::make_tuple(j.value("frame", -1), j.value("state", std::string()),
                             j.value("scrubbing", false));
    };
    // Each step waits for its effect (bounded), not for a fixed time: under
    // load the streamer starts and the coordinator answers later.
    auto until = [&](auto done) {
      return testing::WaitFor([&] {
        run(50);
        return done();
      });
    };
    ASSERT_TRUE(until([&] { return client.connected() && Ctl("pause").first == 0; }))
        << "the streamer never came up";
    ASSERT_EQ(Ctl("seek 2").first, 0);
    for (int i = 0; i < 2; ++i) {  // press and release button 5 twice
      SDL_JoystickSetVirtualButton(stick, 5, 1);
      run(100);
      SDL_JoystickSetVirtualButton(stick, 5, 0);
      run(100);
    }
    EXPECT_TRUE(until([&] {
      return frame_and_state() == std::make_tuple(4, std::string("paused"), false);
    })) << "two steps forward from 2";
    SDL_JoystickSetVirtualAxis(stick, 0, -16000);  // half left: scrub backwards
    EXPECT_TRUE(until([&] {
      const auto s = frame_and_state();
      return std::get<1>(s) == "playing" && std::get<2>(s);
    })) << "scrubbing";
    SDL_JoystickSetVirtualAxis(stick, 0, 0);  // centred: paused again, where the scrub left it
    EXPECT_TRUE(until([&] {
      const auto s = frame_and_state();
      return std::get<1>(s) == "paused" && !std::get<2>(s);
    })) << "paused again when centred";
    EXPECT_GT(client.lines_sent(), 4u);
    EXPECT_EQ(Ctl("stop").first, 0);
  }
  stream.join();
  SDL_JoystickClose(stick);
  SDL_JoystickDetachVirtual(index);
  SDL_Quit();
}

}  // namespace
}  // namespace tilestream

namespace tilestream {
namespace {}  // namespace
}  // namespace tilestream
