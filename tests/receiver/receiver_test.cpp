// The receiver end to end: `receiver --headless` serving a 2x2 wall while
// `mpirun streamer` plays a synthetic store; every frame's checksum must be
// the store's frame of that tick, with nothing lost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/tile_store.h"
#include "common/udp_socket.h"
#include "receiver/tile_receiver.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tools/frame_source.h"
#include "tools/movie_cutter.h"

namespace tilestream {
namespace {

using testing::Shell;
using testing::TempDir;

constexpr uint64_t kFrames = 8, kTicks = 20;

TEST(Receiver, EveryFrameOfEveryTileArrivesChecksumExact) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
  TempDir dir;
  WallSettings wall;
  wall.layout = {2, 2};
  wall.tile = {160, 100};
  wall.fps = 25;
  auto source = MakeSyntheticSource(wall, kFrames, 9, true);
  CutOptions co;
  co.wall = wall;
  co.out_dir = dir / "movie";
  co.progress = false;
  ASSERT_TRUE(CutMovie(**source, co).ok());
  const MovieManifest m = *OpenTileStore(dir / "movie");

  // Four free ports: bind, note, release.
  std::string ports;
  for (int i = 0; i < 4; ++i) {
    UdpReceiverOptions o;
    o.bind_address = "127.0.0.1";
    auto r = UdpReceiver::Open(o);
    ASSERT_TRUE(r.ok());
    ports += (i ? ", " : "") + std::to_string(r->port());
  }
  const std::string config = dir / "wall.toml";
  std::ofstream(config) << "[wall]\ncolumns = 2\nrows = 2\ntile_width = 160\ntile_height = 100\nfps = 25\n"
                           "[stream]\nmtu = 1500\n[[node]]\nname = \"local\"\naddress = \"127.0.0.1\"\n"
                           "tiles = [\"r0c0\", \"r0c1\", \"r1c0\", \"r1c1\"]\nports = ["
                        << ports << "]\n";

  const pid_t receiver = fork();
  ASSERT_GE(receiver, 0);
  if (receiver == 0) {
    const std::string out = dir / "receiver.txt";
    execl("/bin/sh", "sh", "-c",
          ("exec " RECEIVER_PATH " --config " + config + " --headless --duration 12 -q --json " + (dir / "rx.json") +
           " --frame-log " + (dir / "frames.txt") + " > " + out + " 2>&1")
              .c_str(),
          nullptr);
    _exit(127);
  }
  sleep(1);
  const auto tx = Shell("timeout 120 " MPIRUN_PATH " -n 1 --oversubscribe " STREAMER_PATH " --config " + config +
                            " --movie " + (dir / "movie") + " --ticks " + std::to_string(kTicks) + " -q",
                        dir);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  kill(receiver, SIGTERM);
  int status = 0;
  waitpid(receiver, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  std::ifstream json_in(dir / "rx.json");
  const auto j = nlohmann::json::parse(json_in);
  ASSERT_EQ(j["tiles"].size(), 4u);
  for (const auto& t : j["tiles"]) {
    EXPECT_EQ(t["frames_complete"], kTicks) << t.dump();
    EXPECT_EQ(t["frames_incomplete"], 0) << t.dump();
    EXPECT_EQ(t["lost"], 0) << t.dump();
  }

  // Per tile, the k-th frame by timestamp is the store's frame k mod 8.
  std::map<uint32_t, std::map<uint32_t, std::string>> logged;  // tile -> timestamp -> checksum
  std::ifstream log(dir / "frames.txt");
  for (uint32_t tile, ts; log >> tile >> ts;) log >> logged[tile][ts];
  ASSERT_EQ(logged.size(), 4u);
  std::vector<std::byte> buffer(m.frame_stride);
  for (uint32_t t = 0; t < 4; ++t) {
    ASSERT_EQ(logged[t].size(), kTicks);
    auto reader = TileReader::Open(m, t, false);
    uint64_t tick = 0;
    const uint32_t base = logged[t].begin()->first;
    for (const auto& [ts, sum] : logged[t]) {
      EXPECT_EQ(ts - base, tick * 3600) << "timestamps 1/25 s apart";
      ASSERT_TRUE(reader->ReadFrame(tick % kFrames, buffer).ok());
      char expected[17];
      snprintf(expected, sizeof expected, "%016llx",
               static_cast<unsigned long long>(FrameChecksum(buffer.data(), m.tile.frame_bytes())));
      EXPECT_EQ(sum, expected) << "tile " << t << " tick " << tick;
      ++tick;
    }
  }
}

}  // namespace
}  // namespace tilestream
