// Senders nobody here wrote, live on loopback into `receiver --sdp`:
// GStreamer's rtpvrawpay (at MTU 1500 and 9000) and ffmpeg's RTP muxer
// (-f rtp -c:v rawvideo -pix_fmt rgb24). Each also writes the frames it sent
// to a file; every one must arrive complete and pixel-exact, in order, with
// nothing counted malformed. Skipped where the programs are missing
// (scripts/install-deps.sh installs them).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/udp_socket.h"
#include "receiver/tile_receiver.h"
#include "tests/support/receiver_path.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace tilestream {
namespace {

using testing::Shell;
using testing::TempDir;

constexpr uint32_t kWidth = 640, kHeight = 400, kFrames = 30;

bool Have(const char* program) { return std::system((std::string("command -v ") + program + " >/dev/null").c_str()) == 0; }

// The checksums of the raw RGB frames in `path`, in order.
std::vector<std::string> SentChecksums(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> out;
  std::vector<std::byte> frame(size_t{kWidth} * kHeight * 3);
  while (in.read(reinterpret_cast<char*>(frame.data()), static_cast<std::streamsize>(frame.size()))) {
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

  // `receiver --sdp FILE` until Finish(); ready once it says which port it serves.
  void StartReceiver(const std::string& sdp) {
    pid_ = fork();
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c",
            ("exec " + testing::ReceiverPath() + " --sdp " + sdp + " --headless -q --json " + (dir_ / "rx.json") +
             " --frame-log " + (dir_ / "rx.txt") + " > " + (dir_ / "rx.out") + " 2>&1")
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

  void GstreamerAtMtu(int mtu) {
    if (!Have("gst-launch-1.0")) GTEST_SKIP() << "no gst-launch-1.0 (gstreamer1.0-tools)";
    std::ofstream(dir_ / "in.sdp") << "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=gst\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
                                   << "m=video " << port_ << " RTP/AVP 96\r\na=rtpmap:96 raw/90000\r\n"
                                   << "a=fmtp:96 sampling=RGB; width=640; height=400; depth=8\r\n";
    StartReceiver(dir_ / "in.sdp");
    const auto tx = Shell("gst-launch-1.0 -q videotestsrc num-buffers=30 pattern=ball ! "
                          "video/x-raw,format=RGB,width=640,height=400,framerate=30/1 ! tee name=t ! queue ! "
                          "rtpvrawpay mtu=" + std::to_string(mtu) + " ! udpsink host=127.0.0.1 port=" +
                              std::to_string(port_) + " t. ! queue ! filesink location=" + (dir_ / "sent.rgb"),
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

TEST_F(InteropTest, FfmpegRtpSenderArrivesPixelExact) {
  if (!Have("ffmpeg")) GTEST_SKIP() << "no ffmpeg";
  const std::string url = "\"rtp://127.0.0.1:" + std::to_string(port_) + "?pkt_size=1400\"";
  const std::string encode = "-c:v rawvideo -pix_fmt rgb24";
  const std::string source = "ffmpeg -hide_banner -loglevel error -f lavfi -i testsrc=size=640x400:rate=30 ";
  // ffmpeg writes its SDP as it starts sending: one frame first for the
  // SDP (the same stream description), then the real run into the receiver.
  auto sdp = Shell(source + "-frames:v 1 " + encode + " -f rtp -sdp_file " + (dir_ / "ff.sdp") + " " + url, dir_);
  ASSERT_EQ(sdp.exit_code, 0) << sdp.output;
  StartReceiver(dir_ / "ff.sdp");
  const auto tx = Shell("ffmpeg -hide_banner -loglevel error -re -f lavfi -i testsrc=size=640x400:rate=30 "
                        "-frames:v 30 " + encode + " -f rtp " + url + " -frames:v 30 " + encode + " -f rawvideo " +
                            (dir_ / "sent.rgb"),
                        dir_);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  ExpectEveryFrameExact(Finish(kFrames));
}

}  // namespace
}  // namespace tilestream
