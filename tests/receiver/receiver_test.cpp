// The receiver end to end: `receiver --headless` serving a 2x2 wall while
// `mpirun streamer` plays a synthetic store; every frame's checksum must be
// the store's frame of that tick, with nothing lost.
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

#include "built_paths.h"
#include "common/image/ppm.h"
#include "common/net/line_channel.h"
#include "common/net/udp_socket.h"
#include "common/store/tile_store.h"
#include "receiver/tile_receiver.h"
#include "tests/receiver/live_wall.h"
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

TEST_F(ReceiverTest, EveryFrameOfEveryTileArrivesChecksumExact) {
  // A generous deadline: this test is about what arrives, and under ASan
  // on two loaded cores a tile's report once came after one frame interval.
  std::ofstream(config_, std::ios::app) << "[sync]\ndeadline_ms = 500\n";
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  const auto tx = Stream(kTicks);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);

  // Swap sync: both nodes joined before tick 0, so every tick was shown on
  // every tile together, none skipped but by a sender (under ASan on two
  // loaded cores one tile once sent 19 frames of 20), and the skew was
  // measured.
  const auto streamer = Report("streamer");
  // Ticks a tile rank let go by, or had no frame from its disk for in time.
  const uint64_t sender_skips =
      TicksSkippedBySenders() + streamer["aggregate"]["missed_frames"].get<uint64_t>();
  EXPECT_LE(sender_skips, 2u) << "the test is about what arrives: most ticks must be sent";
  const uint64_t presented = streamer["sync"]["presented"].get<uint64_t>();
  EXPECT_EQ(presented + streamer["sync"]["skipped"].get<uint64_t>(), kTicks)
      << streamer["sync"].dump();
  EXPECT_LE(streamer["sync"]["skipped"].get<uint64_t>(), sender_skips);
  EXPECT_GE(streamer["sync"]["skew_samples"].get<uint64_t>(), presented - 1)
      << "the last one may end with the job";
  // How small the skew is, is bench/receiver_bench.sh's to say; here its
  // statistics must agree: the median within the largest, to the
  // histogram's 10 us buckets (a quantile is its bucket's upper edge).
  EXPECT_LE(streamer["sync"]["skew_p50_ms"].get<double>(),
            streamer["sync"]["skew_max_ms"].get<double>() + 0.010)
      << streamer["sync"].dump();
  for (const std::string tag : {"left", "right"}) {
    const auto j = Report(tag);
    EXPECT_EQ(j["sync"]["presented"], presented) << tag << j["sync"].dump();
    EXPECT_EQ(j["sync"]["missing"], 0) << tag;
    ASSERT_EQ(j["tiles"].size(), 2u);
    for (const auto& t : j["tiles"]) {
      EXPECT_EQ(t["frames_complete"], SentFrames(t["tile"])) << t.dump();
      EXPECT_EQ(t["frames_incomplete"], 0) << t.dump();
      EXPECT_EQ(t["lost"], 0) << t.dump();
    }
    // Per tile, frames 1/25 s apart by timestamp, each the store's frame
    // of its tick (tick mod 8), counting from the first one received.
    for (const auto& [tile, frames] : FrameLog(tag)) {
      ASSERT_GE(frames.size(), kTicks - sender_skips);
      const uint32_t base = frames.begin()->first;
      const auto which = FrameOfChecksum(tile);
      ASSERT_TRUE(which.count(frames.begin()->second)) << "tile " << tile;
      const uint64_t first = which.at(frames.begin()->second);
      EXPECT_LE(first, sender_skips) << "tile " << tile << " began at tick 0";
      for (const auto& [ts, sum] : frames) {
        EXPECT_EQ((ts - base) % 3600, 0u) << "timestamps 1/25 s apart";
        const uint64_t tick = first + (ts - base) / 3600;
        EXPECT_EQ(sum, StoreChecksum(tile, tick % kFrames)) << "tile " << tile << " tick " << tick;
      }
    }
  }
}

// With swap sync, the thread that acts on the coordinator's decisions runs
// at SCHED_FIFO where that is permitted (root, here), so that every node
// shows a released tick at once rather than after its network threads'
// turn; nothing else of the receiver does. Its final report says so.
TEST_F(ReceiverTest, OnlyTheSwapSyncThreadRunsRealTime) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root or CAP_SYS_NICE";
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  for (const pid_t pid : {left, right}) {
    ASSERT_TRUE(testing::WaitFor([&] { return sched_getscheduler(pid) == SCHED_FIFO; }))
        << "the main thread (the presenter) of " << pid << " never ran real-time";
    const std::vector<int> policies = testing::ThreadPolicies(pid);
    EXPECT_GE(policies.size(), 3u) << "two network threads at least";
    EXPECT_EQ(std::count(policies.begin() + 1, policies.end(), SCHED_OTHER), policies.size() - 1)
        << "another thread of " << pid << " runs real-time";
  }
  const auto tx = Stream(kTicks);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  for (const std::string tag : {"left", "right"}) {
    const auto j = Report(tag);
    EXPECT_TRUE(j["sync"]["real_time"].get<bool>()) << tag << j["sync"].dump();
    EXPECT_GT(j["sync"]["presented"].get<uint64_t>(), 0u) << tag << j["sync"].dump();
  }
}

// kill -9 of one node's receiver mid-stream and a restart: the new one picks
// the stream up at the next frame and gets every frame after that; the other
// node never notices.
TEST_F(ReceiverTest, ARestartedReceiverResumesAtTheNextFrameAndTheOthersNeverStall) {
  // About what arrives: a generous deadline, as in the test above.
  std::ofstream(config_, std::ios::app) << "[sync]\ndeadline_ms = 500\n";
  const pid_t left = StartReceiver("left", "left");
  const pid_t right = StartReceiver("right", "right-1");
  constexpr uint64_t kLong = 150;  // 6 s at 25 fps
  pid_t again = -1;
  std::thread killer([&] {
    ASSERT_TRUE(WaitForTick(30)) << "the wall never played";  // mid-stream
    kill(right, SIGKILL);
    waitpid(right, nullptr, 0);
    again = StartReceiver("right", "right-2");
  });
  const auto tx = Stream(kLong);
  killer.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  ASSERT_GT(again, 0);
  StopReceiver(again);

  const auto left_report = Report("left");
  for (const auto& t : left_report["tiles"]) {  // untouched
    EXPECT_EQ(t["frames_complete"], SentFrames(t["tile"])) << t.dump();
    EXPECT_EQ(t["lost"], 0) << t.dump();
  }
  // The swap sync went on without the dead node and took the new one in at
  // the next tick: at most the tick it joined in the middle of is skipped
  // (and any tick a sender skipped, late on a loaded machine).
  const uint64_t sender_skips = TicksSkippedBySenders();
  EXPECT_GE(left_report["sync"]["presented"].get<uint64_t>() + sender_skips, kLong - 1)
      << left_report["sync"].dump();
  EXPECT_LE(Report("streamer")["sync"]["skipped"].get<uint64_t>(), 1u + sender_skips)
      << Report("streamer")["sync"].dump();
  EXPECT_GE(Report("right-2")["sync"]["presented"].get<uint64_t>(), 20u);
  const auto j = Report("right-2");
  for (const auto& t : j["tiles"]) {
    EXPECT_LE(t["frames_incomplete"].get<int>(), 1) << "only the frame it joined in the middle of";
    EXPECT_GE(t["frames_complete"].get<int>(), 20) << t.dump();
    // Nothing, or the first packets of the frame it joined if it came in
    // within the first 64 (asked for, as a lost head: docs/receiver.md).
    EXPECT_LE(t["lost"].get<int>(), 64) << t.dump();
  }
  // From its first complete frame on, every tick arrived: no gap.
  for (const auto& [tile, frames] : FrameLog("right-2")) {
    const uint32_t first = frames.begin()->first, last = frames.rbegin()->first;
    EXPECT_EQ(frames.size(), (last - first) / 3600 + 1) << "tile " << tile;
  }
}

// A node that joins the sync but never has a frame (here: a bare sync
// connection for "right"): a tick that reaches its deadline incomplete is
// skipped on every tile, so the left node shows nothing it could not show
// together with the right; after 3 such ticks in a row the right node is
// left out (a node that vanished, common/control/swap_sync.h) and the left
// plays on alone.
TEST_F(ReceiverTest, ATickMissingOnOneNodeIsSkippedOnEveryNodeUntilThatNodeIsLeftOut) {
  const pid_t left = StartReceiver("left", "left");
  std::atomic<bool> done{false};
  std::thread fake_right([&] {
    std::optional<LineChannel> c;
    while (!done && !c) {
      if (auto fd = ConnectTcp("127.0.0.1", 7470, 200); fd.ok())
        c.emplace(std::move(fd).value());
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (c) c->Send("sync right");
    while (!done && c && c->open()) {
      c->Receive();
      while (c->NextLine()) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const auto tx = Stream(kTicks);
  done = true;
  fake_right.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);

  constexpr uint64_t kMissesToLeaveOut = 3;
  const auto streamer = Report("streamer");
  EXPECT_EQ(streamer["sync"]["skipped"], kMissesToLeaveOut) << streamer["sync"].dump();
  EXPECT_EQ(streamer["sync"]["presented"], kTicks - kMissesToLeaveOut);
  EXPECT_EQ(streamer["sync"]["left_out"], 2) << "right's two tiles, each left out once";
  const auto j = Report("left");
  EXPECT_EQ(j["sync"]["skipped"], kMissesToLeaveOut) << j["sync"].dump();
  EXPECT_EQ(j["sync"]["presented"], kTicks - kMissesToLeaveOut);
  for (const auto& t : j["tiles"]) EXPECT_EQ(t["frames_complete"], kTicks) << "it had them all";
}

// The control channel end to end: wallctl commands change what every tile
// shows, at the same tick.
TEST_F(ReceiverTest, PauseThenSeekShowsThatFrameOnEveryTile) {
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  std::thread control([&] {
    ASSERT_TRUE(WaitForTick(50)) << "the wall never played";
    EXPECT_EQ(Ctl("pause").first, 0);
    const auto [rc, reply] = Ctl("seek 5");  // paused: shown at the next tick
    EXPECT_EQ(rc, 0) << reply;
    EXPECT_THAT(reply, ::testing::HasSubstr("\"state\":\"paused\""));
    EXPECT_THAT(reply, ::testing::HasSubstr("\"frame\":5"));
    EXPECT_EQ(Ctl("bogus").first, 1) << "an error reply";
  });
  const auto tx = Stream(125);  // 5 s
  control.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  for (const std::string tag : {"left", "right"}) {
    for (const auto& [tile, frames] : FramesReceived(tag)) {
      ASSERT_GE(frames.size(), 10u);
      // Paused for the last ~2 s: the frame repeated twice a second, all 5.
      for (size_t i = frames.size() - 3; i < frames.size(); ++i)
        EXPECT_EQ(frames[i], 5u) << "tile " << tile << " frame " << i << " of " << frames.size();
    }
  }
}

TEST_F(ReceiverTest, StepBackwardsPlayAndLoopOffReachTheStartAndHold) {
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  std::thread control([&] {
    ASSERT_TRUE(WaitForTick(40)) << "the wall never played";
    EXPECT_EQ(Ctl("pause").first, 0);
    EXPECT_EQ(Ctl("seek 6").first, 0);
    EXPECT_EQ(Ctl("step -2").first, 0);  // 4
    EXPECT_EQ(Ctl("loop off").first, 0);
    EXPECT_EQ(Ctl("speed -1").first, 0);
    EXPECT_EQ(Ctl("play").first, 0);  // 4, 3, 2, 1, 0, then hold 0
  });
  const auto tx = Stream(125);
  control.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  // A frame its disk read did not bring in time (under ASan on a loaded
  // machine: 4, 4, 2, 1 once) is missed: the tile shows its last frame
  // again, and the streamer counts it.
  const uint64_t missed = Report("streamer")["aggregate"]["missed_frames"].get<uint64_t>();
  for (const std::string tag : {"left", "right"}) {
    for (const auto& [tile, frames] : FramesReceived(tag)) {
      // From the end back: 0 held (repeated while paused), then 1, 2, 3, 4.
      size_t i = frames.size();
      while (i > 0 && frames[i - 1] == 0) --i;
      ASSERT_LT(i, frames.size()) << "tile " << tile << " ends on frame 0";
      std::vector<uint64_t> shown;  // from the last 4 on, each frame once
      for (size_t k = 0; k < i; ++k) {
        if (frames[k] == 4) shown.clear();
        if (shown.empty() || shown.back() != frames[k]) shown.push_back(frames[k]);
      }
      if (missed == 0) {
        EXPECT_EQ(shown, (std::vector<uint64_t>{4, 3, 2, 1})) << "tile " << tile;
      } else {
        EXPECT_TRUE(std::is_sorted(shown.rbegin(), shown.rend()) && !shown.empty() &&
                    shown.front() == 4 && shown.back() >= 1 && 4 - shown.size() <= missed)
            << "tile " << tile << ": " << ::testing::PrintToString(shown) << ", " << missed
            << " frames missed";
      }
    }
  }
}

// Hostile clients: 50 connections at once, 10,000 malformed lines, a 1 MB
// line, a client that never reads its replies. A well-behaved client is
// still answered at once, and the wall never misses a frame.
TEST_F(ReceiverTest, HostileClientsNeitherStallTheServerNorTheStream) {
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
namespace {

// What the demo saves under xvfb-run: the mosaic's last picture. At the
// wall's own size the mosaic is 1:1, so each tile's place in the screenshot
// must hold exactly one of that tile's frames from the store, the same frame
// on every tile (swap sync), and nothing black.
TEST_F(ReceiverTest, TheMosaicScreenshotShowsOneFrameWithEveryTileInItsPlace) {
  if (system("command -v xvfb-run >/dev/null") != 0) GTEST_SKIP() << "no xvfb-run";
  // One node with all four tiles, on the fixture's ports.
  const std::vector<std::string>& ports = ports_;
  const std::string one = dir_ / "one-node.toml";
  std::ofstream(one)
      << "[wall]\ncolumns = 2\nrows = 2\ntile_width = 160\ntile_height = 100\nfps = 25\n"
         "[stream]\nmtu = 1500\n"
         "[[node]]\nname = \"wall\"\naddress = \"127.0.0.1\"\n"
         "tiles = [\"r0c0\", \"r1c0\", \"r0c1\", \"r1c1\"]\n"
         "ports = ["
      << ports[0] << ", " << ports[2] << ", " << ports[1] << ", " << ports[3] << "]\n";
  const std::string shot = dir_ / "mosaic.ppm";
  const pid_t rx = fork();
  if (rx == 0) {
    execl("/bin/sh", "sh", "-c",
          ("exec xvfb-run -a -s '-screen 0 640x480x24' sh -c 'echo $$ > " + (dir_ / "rx.pid") +
           "; exec " RECEIVER_PATH " --config " + one +
           " --mosaic --window 320x200 -q --screenshot " + shot + "' > " + (dir_ / "rx.out") +
           " 2>&1")
              .c_str(),
          nullptr);
    _exit(127);
  }
  started_.push_back(rx);
  sleep(3);  // the window is up
  config_ = one;
  const auto tx = Stream(50);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  pid_t receiver = 0;
  std::ifstream(dir_ / "rx.pid") >> receiver;
  ASSERT_GT(receiver, 0);
  kill(receiver, SIGTERM);
  waitpid(rx, nullptr, 0);
  started_.clear();
  auto image = ReadPpm(shot);
  ASSERT_TRUE(image.ok()) << image.status().message() << "\n"
                          << Shell("cat " + (dir_ / "rx.out"), dir_).output;
  ASSERT_EQ(image->width, 320u);
  ASSERT_EQ(image->height, 200u);
  std::set<uint64_t> shown;
  for (uint32_t tile = 0; tile < 4; ++tile) {
    const TileId id = TileId::FromIndex(tile, manifest_.layout);
    std::vector<std::byte> pixels(manifest_.tile.frame_bytes());
    for (uint32_t y = 0; y < 100; ++y)
      std::memcpy(&pixels[y * 480], &image->rgb[((id.row * 100 + y) * 320 + id.column * 160) * 3],
                  480);
    char sum[17];
    snprintf(sum, sizeof sum, "%016llx",
             static_cast<unsigned long long>(FrameChecksum(pixels.data(), pixels.size())));
    const auto which = FrameOfChecksum(tile);
    ASSERT_TRUE(which.count(sum)) << "tile " << id.Name() << " shows no frame of its own";
    shown.insert(which.at(sum));
    EXPECT_TRUE(
        std::any_of(pixels.begin(), pixels.end(), [](std::byte b) { return b != std::byte{0}; }));
  }
  EXPECT_EQ(shown.size(), 1u) << "every tile shows the same frame";
}

}  // namespace
}  // namespace tilestream
