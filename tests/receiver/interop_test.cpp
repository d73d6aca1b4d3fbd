// Programs nobody here wrote, live on loopback, both ways.
// Into `receiver --sdp`: GStreamer's rtpvrawpay (at MTU 1500 and 9000) and
// ffmpeg's RTP muxer (-f rtp -c:v rawvideo -pix_fmt rgb24). Each also writes
// the frames it sent to a file; every one must arrive complete and
// pixel-exact, in order, with nothing counted malformed.
// From `mpirun streamer`: GStreamer's rtpvrawdepay and ffmpeg reading the
// streamer's SDP (--sdp-dir); every frame they write must be the tile
// store's frame of that tick.
// Skipped where the programs are missing (scripts/install-deps.sh installs
// them).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/net/udp_socket.h"
#include "common/receive/tile_receiver.h"
#include "common/store/tile_store.h"
#include "tests/support/built_paths.h"
#include "tests/support/frame_log.h"
#include "tests/support/receiver_path.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/udp_port.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"

namespace tilestream {
namespace {

using testing::Shell;
using testing::TempDir;

constexpr uint32_t kWidth = 640, kHeight = 400, kFrames = 30;

bool Have(const char* program) {
  return std::system((std::string("command -v ") + program + " >/dev/null").c_str()) == 0;
}

// The checksums of the raw RGB frames of `tile` in `path`, in order.
std::vector<std::string> SentChecksums(const std::string& path,
                                       TileGeometry tile = {kWidth, kHeight}) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> out;
  std::vector<std::byte> frame(tile.frame_bytes());
  while (
      in.read(reinterpret_cast<char*>(frame.data()), static_cast<std::streamsize>(frame.size()))) {
    char text[17];
    snprintf(text, sizeof text, "%016llx",
             static_cast<unsigned long long>(FrameChecksum(frame.data(), frame.size())));
    out.push_back(text);
  }
  return out;
}

// The checksums in a receiver's frame log, in the order they came.
std::vector<std::string> ReceivedChecksums(const std::string& path) {
  std::ifstream log(path);
  std::vector<std::string> out;
  uint32_t tile, ts;
  for (std::string sum; log >> tile >> ts >> sum;) out.push_back(sum);
  return out;
}

class InteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UdpReceiverOptions o;  // a free port: bind, note, release
    o.bind_address = "127.0.0.1";
    auto r = UdpReceiver::Open(o);
    ASSERT_TRUE(r.ok());
    port_ = r->port();
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // `receiver --sdp FILE` (or other arguments that say what to receive)
  // until Finish(); ready once it says which port it serves.
  void StartReceiver(const std::string& sdp, const std::string& arguments = "") {
    pid_ = fork();
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c",
            ("exec " + testing::ReceiverPath() + " " +
             (arguments.empty() ? "--sdp " + sdp : arguments) + " --headless -q --json " +
             (dir_ / "rx.json") + " --frame-log " + (dir_ / "rx.txt") + " > " + (dir_ / "rx.out") +
             " 2>&1")
                .c_str(),
            nullptr);
      _exit(127);
    }
    for (int i = 0; i < 600 && Output().find("<- 127.0.0.1:") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_NE(Output().find("<- 127.0.0.1:"), std::string::npos) << Output();
  }

  // Waits (bounded) for `frames` frames in the log, stops the receiver, and
  // returns its tile report.
  nlohmann::json Finish(size_t frames) {
    for (int i = 0; i < 600 && ReceivedChecksums(dir_ / "rx.txt").size() < frames; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Output();
    std::ifstream in(dir_ / "rx.json");
    const auto j = nlohmann::json::parse(in, nullptr, false);
    return j.is_discarded() ? nlohmann::json::object() : j["tiles"][0];
  }

  std::string Output() {
    std::ifstream in(dir_ / "rx.out");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // What every sender must achieve: each frame it sent, complete and exact.
  void ExpectEveryFrameExact(const nlohmann::json& t) {
    const auto sent = SentChecksums(dir_ / "sent.rgb");
    ASSERT_EQ(sent.size(), kFrames);
    EXPECT_EQ(ReceivedChecksums(dir_ / "rx.txt"), sent) << Output();
    EXPECT_EQ(t.value("frames_complete", 0), kFrames) << t.dump();
    EXPECT_EQ(t.value("frames_incomplete", 1), 0) << t.dump();
    EXPECT_TRUE(t["malformed"].is_null() || t["malformed"].empty()) << t.dump();
    EXPECT_EQ(t.value("lost", 1), 0) << t.dump();
  }

  // A wall config of one 640x400 tile on this test's port, with `extra`
  // keys in its node table.
  std::string Config(const std::string& extra) {
    std::ofstream(dir_ / "wall.toml")
        << "[wall]\ncolumns = 1\nrows = 1\ntile_width = 640\ntile_height = 400\n"
           "[sync]\nenabled = false\n"
           "[[node]]\nname = \"n\"\naddress = \"127.0.0.1\"\ntiles = [\"r0c0\"]\n"
           "ports = ["
        << port_ << "]\n"
        << extra << "\n";
    return "--config " + (dir_ / "wall.toml");
  }

  // GStreamer at `mtu` into the receiver: by an SDP we write for it, or with
  // `arguments` for the receiver.
  void GstreamerAtMtu(int mtu, const std::string& arguments = "") {
    if (!Have("gst-launch-1.0")) GTEST_SKIP() << "no gst-launch-1.0 (gstreamer1.0-tools)";
    std::ofstream(dir_ / "in.sdp")
        << "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=gst\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        << "m=video " << port_ << " RTP/AVP 96\r\na=rtpmap:96 raw/90000\r\n"
        << "a=fmtp:96 sampling=RGB; width=640; height=400; depth=8\r\n";
    StartReceiver(dir_ / "in.sdp", arguments);
    const auto tx = Shell(
        "gst-launch-1.0 -q videotestsrc num-buffers=30 pattern=ball ! "
        "video/x-raw,format=RGB,width=640,height=400,framerate=30/1 ! tee name=t ! queue ! "
        "rtpvrawpay mtu=" +
            std::to_string(mtu) + " ! udpsink host=127.0.0.1 port=" + std::to_string(port_) +
            " t. ! queue ! filesink location=" + (dir_ / "sent.rgb"),
        dir_);
    ASSERT_EQ(tx.exit_code, 0) << tx.output;
    ExpectEveryFrameExact(Finish(kFrames));
  }

  TempDir dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(InteropTest, GstreamerRtpvrawpayAtMtu1500ArrivesPixelExact) { GstreamerAtMtu(1500); }

TEST_F(InteropTest, GstreamerRtpvrawpayAtMtu9000ArrivesPixelExact) { GstreamerAtMtu(9000); }

// The wall config's per-tile keys: a tile that accepts any SSRC, and a
// tile that takes its stream from an SDP file.
TEST_F(InteropTest, GstreamerIntoAConfigTileThatAcceptsAnySsrcArrivesPixelExact) {
  GstreamerAtMtu(9000, Config("any_ssrc = [\"r0c0\"]"));
}

TEST_F(InteropTest, GstreamerIntoAConfigTileWithAnSdpFileArrivesPixelExact) {
  GstreamerAtMtu(1500, Config("sdp = [\"in.sdp\"]"));
}

TEST_F(InteropTest, FfmpegRtpSenderArrivesPixelExact) {
  if (!Have("ffmpeg")) GTEST_SKIP() << "no ffmpeg";
  const std::string url = "\"rtp://127.0.0.1:" + std::to_string(port_) + "?pkt_size=1400\"";
  const std::string encode = "-c:v rawvideo -pix_fmt rgb24";
  const std::string source =
      "ffmpeg -hide_banner -loglevel error -f lavfi -i testsrc=size=640x400:rate=30 ";
  // ffmpeg writes its SDP as it starts sending: one frame first for the
  // SDP (the same stream description), then the real run into the receiver.
  auto sdp =
      Shell(source + "-frames:v 1 " + encode + " -f rtp -sdp_file " + (dir_ / "ff.sdp") + " " + url,
            dir_);
  ASSERT_EQ(sdp.exit_code, 0) << sdp.output;
  StartReceiver(dir_ / "ff.sdp");
  const auto tx = Shell(
      "ffmpeg -hide_banner -loglevel error -re -f lavfi -i testsrc=size=640x400:rate=30 "
      "-frames:v 30 " +
          encode + " -f rtp " + url + " -frames:v 30 " + encode + " -f rawvideo " +
          (dir_ / "sent.rgb"),
      dir_);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  ExpectEveryFrameExact(Finish(kFrames));
}

// Our streamer into other programs: a 1x1 wall of 160x100 tiles, a
// synthetic store of 8 frames.
class StreamerInteropTest : public InteropTest {
 protected:
  static constexpr TileGeometry kTile{160, 100};
  static constexpr uint64_t kStoreFrames = 8;

  void SetUp() override {
    InteropTest::SetUp();
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);  // Open MPI keeps allocations to exit
    WallSettings wall;
    wall.layout = {1, 1};
    wall.tile = kTile;
    wall.fps = 25;
    auto source = MakeSyntheticSource(wall, kStoreFrames, 3, true);
    CutOptions co;
    co.wall = wall;
    co.out_dir = dir_ / "movie";
    co.progress = false;
    ASSERT_TRUE(CutMovie(**source, co).ok());
    manifest_ = *OpenTileStore(dir_ / "movie");
    WriteConfig();
  }

  // The one-tile wall, with `stream` added to its [stream] table.
  void WriteConfig(const std::string& stream = "") {
    std::ofstream(dir_ / "wall.toml")
        << "[wall]\ncolumns = 1\nrows = 1\ntile_width = 160\ntile_height = 100\nfps = 25\n"
           "[stream]\nmtu = 1500\n"
        << stream
        << "[sync]\nenabled = false\n"
           "[[node]]\nname = \"n\"\naddress = \"127.0.0.1\"\ntiles = [\"r0c0\"]\n"
           "ports = ["
        << port_ << "]\n";
  }

  testing::ProcessResult Stream(uint64_t ticks, const std::string& extra = "") {
    return Shell("timeout 120 " + MPIRUN_PATH + " -n 1 --oversubscribe " + STREAMER_PATH +
                     " --config " + (dir_ / "wall.toml") + " --movie " + (dir_ / "movie") +
                     " --ticks " + std::to_string(ticks) + " -q --json " + (dir_ / "tx.json") +
                     " " + extra,
                 dir_);
  }

  // From the last Stream's report: on a loaded machine the tile rank skips
  // a tick it is too late for, so what arrives is judged against what was
  // sent, not against the tick count.
  nlohmann::json TxReport() {
    std::ifstream in(dir_ / "tx.json");
    return nlohmann::json::parse(in, nullptr, false);
  }
  uint64_t SentFrames() { return TxReport()["streams"][0]["frames"].get<uint64_t>(); }
  uint64_t TicksWithoutAFrame() {    // skipped late, or no frame read in time
    const auto report = TxReport();  // the expression refers into it
    return report["aggregate"]["skipped_ticks"].get<uint64_t>() +
           report["aggregate"]["missed_frames"].get<uint64_t>();
  }

  // Starts `command` in the background (its own process group); returns
  // once it has bound the tile's port and, with `ready`, once it has said
  // so: a pipeline that binds its port before it reads (gst-launch's
  // udpsrc until PLAYING) lets the kernel drop what overflows its buffer
  // meanwhile, and on a loaded machine that was a whole frame's packets
  // (CI, 2026-11-28).
  void StartListener(const std::string& command, const std::string& ready = "") {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      execl("/bin/sh", "sh", "-c",
            ("exec " + command + " > " + (dir_ / "listener.out") + " 2>&1").c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 600 && !testing::UdpPortBound(port_); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(testing::UdpPortBound(port_)) << "never bound port " << port_;
    for (int i = 0; i < 600 && Output("listener.out").find(ready) == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_NE(Output("listener.out").find(ready), std::string::npos) << Output("listener.out");
  }

  // Waits (bounded) until `path` holds `frames` frames, then ends the
  // listener with `signal` and waits for it.
  void StopListener(const std::string& path, size_t frames, int signal) {
    for (int i = 0; i < 600 && SentChecksums(path, kTile).size() < frames; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(-pid_, signal);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // The frames written are the store's, tick after tick: each the store
  // frame after the one before it (mod its length), or further on by at
  // most the ticks the streamer sent no frame for. The first `unknowable`
  // frames are not checked: a receiver cannot ask again for packets lost
  // before the first one it saw.
  void ExpectStoreFrames(const std::string& path, size_t frames, size_t unknowable = 0) {
    const auto got = SentChecksums(path, kTile);
    ASSERT_EQ(got.size(), frames) << Output("listener.out");
    const uint64_t skipped = TicksWithoutAFrame();
    ASSERT_LT(skipped, kStoreFrames - 1) << "too loaded to tell the frames' order";
    auto store_frame = [&](const std::string& checksum) {
      uint64_t f = 0;
      while (f < kStoreFrames && testing::StoreFrameChecksum(manifest_, 0, f) != checksum) ++f;
      return f;
    };
    for (size_t k = unknowable; k < got.size(); ++k) {
      const uint64_t f = store_frame(got[k]);
      ASSERT_LT(f, kStoreFrames) << "frame " << k << " is no frame of the store";
      if (k == unknowable) continue;
      const uint64_t step = (f + kStoreFrames - store_frame(got[k - 1])) % kStoreFrames;
      EXPECT_TRUE(step >= 1 && step <= 1 + skipped) << "frame " << k << ": " << step << " on";
    }
  }

  std::string Output(const std::string& name) {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  MovieManifest manifest_;
};

TEST_F(StreamerInteropTest, GstreamerRtpvrawdepayReceivesTheStoresFrames) {
  if (!Have("gst-launch-1.0")) GTEST_SKIP() << "no gst-launch-1.0 (gstreamer1.0-tools)";
  StartListener(
      "gst-launch-1.0 -e udpsrc port=" + std::to_string(port_) +
          " caps=\"application/x-rtp,media=video,clock-rate=90000,encoding-name=RAW,sampling=RGB,"
          "depth=(string)8,width=(string)160,height=(string)100,payload=96\" ! rtpvrawdepay ! "
          "video/x-raw,format=RGB ! filesink location=" +
          (dir_ / "got.rgb"),
      "New clock");  // gst-launch prints it once the pipeline is PLAYING
  const auto tx = Stream(20);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  const uint64_t sent = SentFrames();
  EXPECT_GE(sent, 10u) << tx.output;
  StopListener(dir_ / "got.rgb", sent, SIGINT);  // -e: EOS on SIGINT, the file is whole
  ExpectStoreFrames(dir_ / "got.rgb", sent);
}

TEST_F(StreamerInteropTest, FfmpegReadingTheStreamersSdpReceivesTheStoresFrames) {
  if (!Have("ffmpeg")) GTEST_SKIP() << "no ffmpeg";
  // The SDP the streamer writes for the tile (one tick to write it), then
  // ffmpeg opened on it before the stream starts.
  const auto sdp = Stream(1, "--sdp-dir " + (dir_ / "sdp"));
  ASSERT_EQ(sdp.exit_code, 0) << sdp.output;
  StartListener("ffmpeg -hide_banner -loglevel warning -protocol_whitelist file,udp,rtp -i " +
                (dir_ / "sdp/tile_r0c0.sdp") + " -frames:v 20 -f rawvideo -pix_fmt rgb24 " +
                (dir_ / "got.rgb"));
  const auto tx = Stream(30);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  ASSERT_GE(SentFrames(), 20u) << tx.output;
  StopListener(dir_ / "got.rgb", 20, SIGTERM);  // it ends by itself after 20 frames
  ExpectStoreFrames(dir_ / "got.rgb", 20);
}

// GStreamer's rtpbin with retransmission, as an application sets it up
// (tests/support/gst_rtx_receiver.cpp; gst-launch cannot, see
// docs/protocol.md), receives the tile while nftables drops 5% of its
// packets on loopback: its NACKs reach our streamer, our RFC 4588 packets
// go through its rtprtxreceive, and every frame it writes is the store's,
// none missing. The tile's frames are small (33 packets at MTU 1500, and a
// lost GSO send is many of them), so the streamer may send it all again.
TEST_F(StreamerInteropTest, GstreamerRtpbinRecoversLostPacketsThroughTheStreamer) {
  if (*testing::built::kGstRtxReceiver == '\0')
    GTEST_SKIP() << "built without GStreamer's development files (libgstreamer1.0-dev)";
  if (getuid() != 0 || !Have("nft")) GTEST_SKIP() << "needs root and nft to drop packets";
  WriteConfig("retransmission_share = 1.0\n");
  const std::string table = "tsinterop" + std::to_string(port_);
  const auto drop = Shell("nft 'add table netdev " + table + "; add chain netdev " + table +
                              " loss { type filter hook ingress device \"lo\" priority 0; }; "
                              "add rule netdev " +
                              table + " loss udp dport " + std::to_string(port_) +
                              " numgen random mod 100 < 5 counter drop'",
                          dir_);
  ASSERT_EQ(drop.exit_code, 0) << drop.output;
  StartListener(std::string(testing::built::kGstRtxReceiver) + " " + std::to_string(port_) +
                    " 160 100 30 " + (dir_ / "got.rgb"),
                "gst_rtx_receiver: listening");
  const auto tx = Stream(60);
  const std::string counted = Shell("nft list table netdev " + table, dir_).output;
  Shell("nft delete table netdev " + table, dir_);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopListener(dir_ / "got.rgb", 30, SIGTERM);  // it ends by itself after 30 frames
  EXPECT_EQ(counted.find("counter packets 0 "), std::string::npos)
      << "nft dropped nothing: " << counted;
  const auto stream = TxReport()["streams"][0];
  EXPECT_GT(stream["nacks"].get<uint64_t>(), 0u) << stream.dump() << Output("listener.out");
  EXPECT_GT(stream["retransmitted"].get<uint64_t>(), 0u) << stream.dump();
  // With 5% dropped, the first frame lacks its start one run in twenty:
  // lost before rtpbin saw any packet of the stream, never asked for again.
  ExpectStoreFrames(dir_ / "got.rgb", 30, 1);
  if (HasFailure()) ADD_FAILURE() << stream.dump() << "\n" << counted << Output("listener.out");
}

}  // namespace
}  // namespace tilestream
