// Live sources scaled onto the testbed's wall geometry (issue 44, point 7;
// docs/live.md): 2x2 tiles of 2560x1600, a canvas of 5120x3200, fed a
// 1920x1080 picture at 30 fps by ffmpeg (RGB, and YCbCr 4:2:2 at 8 bits)
// and by GStreamer (YCbCr 4:2:2, 10 bits). The source is 16:9 on a 16:10 canvas: the picture is
// 5120x2880, with bars of 160 rows above and below.
//
// Each tile's last picture (the receivers' --screenshot) is compared with a
// reference the test computes on its own, in floating point, from the
// definitions: BT.709 narrow range, chroma co-sited with the even pixels,
// bilinear with pixel centres aligned, the picture centred on whole
// pixels. Every frame a tile showed is black (before the first picture) or
// that picture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "common/image/ppm.h"
#include "tests/streamer/live_fixture.h"

namespace tilestream {
namespace {

using testing::BlackTile;
using testing::ExpectRuns;
using testing::Hex;
using testing::LiveSource;
using testing::LiveWallShape;

constexpr uint32_t kTileW = 2560, kTileH = 1600, kPictureW = 1920, kPictureH = 1080;
constexpr uint32_t kCanvasW = 2 * kTileW, kCanvasH = 2 * kTileH;

// The testbed wall's geometry (configs/testbed-2x2.toml), on loopback.
LiveWallShape TestbedShape(const std::string& sampling, int depth) {
  LiveWallShape s;
  s.tile_width = kTileW;
  s.tile_height = kTileH;
  s.fps = 10;
  s.picture_width = kPictureW;
  s.picture_height = kPictureH;
  s.sampling = sampling;
  s.depth = depth;
  return s;
}

// The source's picture, smooth but changing within a few pixels (a
// picture shifted by half a pixel differs by far more than rounding), in
// 0..1 per channel.
struct Rgb {
  double r, g, b;
};
Rgb Pattern(uint32_t x, uint32_t y) {
  constexpr double k = 2 * std::numbers::pi;
  return {0.5 + 0.4 * std::sin(k * x / 23 + k * y / 37),
          0.5 + 0.4 * std::sin(k * x / 41) * std::cos(k * y / 19),
          0.5 + 0.4 * std::cos(k * (x + y) / 29)};
}

uint8_t To8(double v) { return static_cast<uint8_t>(std::clamp(std::lround(v * 255), 0L, 255L)); }

using Picture = std::vector<uint8_t>;  // RGB24, rows packed

// BT.709's luma and colour differences of a pixel, narrow range, at
// `depth` bits (Y 16-235, Cb and Cr 16-240, times 4 at 10 bits).
struct YCbCr {
  int y, cb, cr;
};
constexpr double kR = 0.2126, kB = 0.0722, kG = 1 - kR - kB;
YCbCr Encode(const Rgb& c, int depth) {
  const double unit = depth == 10 ? 4 : 1;
  const double y = kR * c.r + kG * c.g + kB * c.b;
  const double pb = (c.b - y) / (2 * (1 - kB)), pr = (c.r - y) / (2 * (1 - kR));
  return {static_cast<int>(std::lround(unit * (16 + 219 * y))),
          static_cast<int>(std::lround(unit * (128 + 224 * pb))),
          static_cast<int>(std::lround(unit * (128 + 224 * pr)))};
}
Rgb Decode(double y_, double cb, double cr, int depth) {
  const double unit = depth == 10 ? 4 : 1;
  const double y = (y_ / unit - 16) / 219, pb = (cb / unit - 128) / 224,
               pr = (cr / unit - 128) / 224;
  const double r = y + 2 * (1 - kR) * pr, b = y + 2 * (1 - kB) * pb;
  return {r, (y - kR * r - kB * b) / kG, b};
}

// The pattern as RFC 4175's 4:2:2 pixel groups (Cb Y0 Cr Y1: 8 bits each,
// ffmpeg's uyvy422; or 10 bits each, most significant first, GStreamer's
// UYVP), chroma of the even pixel; and the RGB picture that the
// definitions make of it.
std::vector<uint8_t> Pgroups(int depth, Picture* decoded) {
  std::vector<uint8_t> out;
  out.reserve(size_t{kPictureW} * kPictureH / 2 * 5);
  std::vector<YCbCr> line(kPictureW);
  decoded->assign(size_t{kPictureW} * kPictureH * 3, 0);
  for (uint32_t y = 0; y < kPictureH; ++y) {
    for (uint32_t x = 0; x < kPictureW; ++x) line[x] = Encode(Pattern(x, y), depth);
    for (uint32_t x = 0; x < kPictureW; x += 2) {
      const int samples[] = {line[x].cb, line[x].y, line[x].cr, line[x + 1].y};
      uint64_t bits = 0;
      for (const int v : samples) bits = (bits << depth) | uint64_t(v);
      for (int shift = 4 * depth - 8; shift >= 0; shift -= 8) out.push_back(uint8_t(bits >> shift));
    }
    for (uint32_t x = 0; x < kPictureW; ++x) {
      const YCbCr& even = line[x & ~1u];
      const YCbCr& next = line[std::min(x + 1, kPictureW - 2)];
      const bool odd = x % 2 == 1;
      const Rgb c = Decode(line[x].y, odd ? (even.cb + next.cb) / 2.0 : even.cb,
                           odd ? (even.cr + next.cr) / 2.0 : even.cr, depth);
      uint8_t* p = &(*decoded)[(size_t{y} * kPictureW + x) * 3];
      p[0] = To8(c.r), p[1] = To8(c.g), p[2] = To8(c.b);
    }
  }
  return out;
}

Picture PatternRgb() {
  Picture rgb(size_t{kPictureW} * kPictureH * 3);
  for (uint32_t y = 0; y < kPictureH; ++y)
    for (uint32_t x = 0; x < kPictureW; ++x) {
      const Rgb c = Pattern(x, y);
      uint8_t* p = &rgb[(size_t{y} * kPictureW + x) * 3];
      p[0] = To8(c.r), p[1] = To8(c.g), p[2] = To8(c.b);
    }
  return rgb;
}

// Tile `tile` of the canvas as the definitions make it: the picture scaled
// by the smaller of the two ratios, centred on whole pixels, each canvas
// pixel's centre mapped into the picture and interpolated between the four
// pixels around it; outside the picture, black.
Picture ReferenceTile(const Picture& picture, uint32_t tile) {
  const double scale = std::min(double(kCanvasW) / kPictureW, double(kCanvasH) / kPictureH);
  const double ox = std::floor((kCanvasW - kPictureW * scale) / 2);
  const double oy = std::floor((kCanvasH - kPictureH * scale) / 2);
  const uint32_t x0 = (tile % 2) * kTileW, y0 = (tile / 2) * kTileH;
  Picture out(size_t{kTileW} * kTileH * 3, 0);
  const auto at = [&](uint32_t x, uint32_t y, int k) {
    return double(picture[(size_t{y} * kPictureW + x) * 3 + k]);
  };
  for (uint32_t j = 0; j < kTileH; ++j) {
    const double cy = y0 + j + 0.5 - oy;
    if (cy < 0 || cy >= kPictureH * scale) continue;
    const double fy = std::clamp(cy / scale - 0.5, 0.0, kPictureH - 1.0);
    const auto ya = static_cast<uint32_t>(fy), yb = std::min(ya + 1, kPictureH - 1);
    for (uint32_t i = 0; i < kTileW; ++i) {
      const double cx = x0 + i + 0.5 - ox;
      if (cx < 0 || cx >= kPictureW * scale) continue;
      const double fx = std::clamp(cx / scale - 0.5, 0.0, kPictureW - 1.0);
      const auto xa = static_cast<uint32_t>(fx), xb = std::min(xa + 1, kPictureW - 1);
      const double wx = fx - xa, wy = fy - ya;
      for (int k = 0; k < 3; ++k) {
        const double v = (at(xa, ya, k) * (1 - wx) + at(xb, ya, k) * wx) * (1 - wy) +
                         (at(xa, yb, k) * (1 - wx) + at(xb, yb, k) * wx) * wy;
        out[(size_t{j} * kTileW + i) * 3 + k] = static_cast<uint8_t>(std::lround(v));
      }
    }
  }
  return out;
}

// The picture receiver `node` saved for its k-th tile.
std::string ScreenshotOf(uint32_t tile) {
  const char* node = tile % 2 == 0 ? "left" : "right";
  return std::string(node) + "-" + std::to_string(tile / 2) + ".ppm";
}

// Each tile showed black, then its part of the picture; that part (its
// last frame, saved in `dir`) within `tolerance` of the reference, per
// channel, and within a quarter level on average (a picture shifted by
// half a pixel is 2 levels off on average, 6 at worst); the bars exactly
// black.
void ExpectTiles(const std::filesystem::path& dir, const Picture& picture,
                 const std::vector<std::vector<std::string>>& shown, int tolerance) {
  for (uint32_t t = 0; t < 4; ++t) {
    SCOPED_TRACE("tile " + std::to_string(t));
    auto image = ReadPpm(dir / ScreenshotOf(t));
    ASSERT_TRUE(image.ok()) << image.status().message();
    ASSERT_EQ(image->width, kTileW);
    ASSERT_EQ(image->height, kTileH);
    const std::vector<std::byte>& got = image->rgb;
    ExpectRuns(shown[t], {BlackTile(kTileW, kTileH), Hex(FrameChecksum(got.data(), got.size()))});
    const Picture want = ReferenceTile(picture, t);
    int worst = 0;
    double sum = 0;
    size_t bars_lit = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const int d = std::abs(int(std::to_integer<uint8_t>(got[i])) - int(want[i]));
      worst = std::max(worst, d);
      sum += d;
      const size_t row = i / (size_t{kTileW} * 3) + (t / 2) * kTileH;
      if ((row < 160 || row >= kCanvasH - 160) && got[i] != std::byte{0}) ++bars_lit;
    }
    EXPECT_LE(worst, tolerance);
    EXPECT_LE(sum / double(want.size()), 0.25);
    EXPECT_EQ(bars_lit, 0u);
  }
}

// What the streamer said of the run (`live`: the source's status at its
// end; `report`: the final JSON): the source's pictures received whole,
// and every tick shown that the senders sent and every tile completed (a
// loaded machine's senders may let one go by, and its loopback lose a
// datagram past repair: `missed`, TicksSomeTileMissed).
void ExpectShown(const nlohmann::json& live, const nlohmann::json& report, uint64_t missed) {
  EXPECT_GE(live.value("pictures", 0), 10) << live.dump();
  EXPECT_EQ(live.value("malformed", -1), 0) << live.dump();
  EXPECT_EQ(live.value("wrong_size", -1), 0) << live.dump();
  ASSERT_TRUE(report.is_object());
  EXPECT_LE(report["sync"]["skipped"].get<uint64_t>(),
            report["aggregate"]["skipped_ticks"].get<uint64_t>() + missed)
      << report["sync"].dump();
}

TEST_F(LiveSource, AnFfmpeg1080pRgbSourceIsScaledOntoTheTestbedWallAsTheReferenceIs) {
  ASSERT_NO_FATAL_FAILURE(SetUpWall(TestbedShape("RGB", 8)));
  const Picture picture = PatternRgb();
  ASSERT_TRUE(
      WritePpm(dir_ / "picture.ppm", kPictureW, kPictureH, std::as_bytes(std::span(picture))).ok());
  const pid_t left = StartReceiver("left", "--screenshot " + (dir_ / "left.ppm"));
  const pid_t right = StartReceiver("right", "--screenshot " + (dir_ / "right.ppm"));
  const pid_t streamer = StartStreamer(/*ticks=*/1200);  // stopped below
  EXPECT_EQ(Ctl("load cam").first, 0);
  const auto sent = Ffmpeg(dir_ / "picture.ppm", 3);
  ASSERT_EQ(sent.exit_code, 0) << sent.output;
  const nlohmann::json live = Live();
  EXPECT_EQ(Ctl("stop").first, 0);
  const auto shown = EndAndCollect(streamer, left, right);
  ExpectShown(live, Report(), TicksSomeTileMissed());
  ExpectTiles(dir_.path(), picture, shown, /*tolerance=*/1);
}

TEST_F(LiveSource, AGStreamer10BitYCbCrSourceIsConvertedAndScaledAsTheReferenceIs) {
  if (!testing::Have("gst-launch-1.0")) GTEST_SKIP() << "no GStreamer";
  ASSERT_NO_FATAL_FAILURE(SetUpWall(TestbedShape("YCbCr-4:2:2", 10)));
  Picture picture;
  const std::vector<uint8_t> groups = Pgroups(10, &picture);
  std::ofstream(dir_ / "picture.uyvp", std::ios::binary)
      .write(reinterpret_cast<const char*>(groups.data()), std::streamsize(groups.size()));
  const pid_t left = StartReceiver("left", "--screenshot " + (dir_ / "left.ppm"));
  const pid_t right = StartReceiver("right", "--screenshot " + (dir_ / "right.ppm"));
  const pid_t streamer = StartStreamer(/*ticks=*/1200);  // stopped below
  EXPECT_EQ(Ctl("load cam").first, 0);
  // 90 frames at 30 a second, as docs/live.md's pipeline sends them.
  const auto sent = testing::Shell(
      "timeout 60 gst-launch-1.0 -q multifilesrc location=" + (dir_ / "picture.uyvp") +
          " loop=true num-buffers=90 ! rawvideoparse format=uyvp width=1920 height=1080 "
          "framerate=30/1 ! rtpvrawpay mtu=8972 ! udpsink host=127.0.0.1 port=" +
          std::to_string(ports_[4]),
      dir_);
  ASSERT_EQ(sent.exit_code, 0) << sent.output;
  const nlohmann::json live = Live();
  EXPECT_EQ(Ctl("stop").first, 0);
  const auto shown = EndAndCollect(streamer, left, right);
  ExpectShown(live, Report(), TicksSomeTileMissed());
  EXPECT_EQ(live.value("sampling", ""), "YCbCr-4:2:2 10-bit") << live.dump();
  ExpectTiles(dir_.path(), picture, shown, /*tolerance=*/2);
}

// ffmpeg's 8-bit 4:2:2 (uyvy422, RFC 4175's YCbCr-4:2:2 at 8 bits), from
// raw frames through its pipe as docs/live.md shows for a program.
TEST_F(LiveSource, AnFfmpeg8BitYCbCrSourceIsConvertedAndScaledAsTheReferenceIs) {
  ASSERT_NO_FATAL_FAILURE(SetUpWall(TestbedShape("YCbCr-4:2:2", 8)));
  Picture picture;
  const std::vector<uint8_t> groups = Pgroups(8, &picture);
  std::ofstream(dir_ / "picture.uyvy", std::ios::binary)
      .write(reinterpret_cast<const char*>(groups.data()), std::streamsize(groups.size()));
  const pid_t left = StartReceiver("left", "--screenshot " + (dir_ / "left.ppm"));
  const pid_t right = StartReceiver("right", "--screenshot " + (dir_ / "right.ppm"));
  const pid_t streamer = StartStreamer(/*ticks=*/1200);  // stopped below
  EXPECT_EQ(Ctl("load cam").first, 0);
  const auto sent = testing::Shell(
      "for i in $(seq 90); do cat " + (dir_ / "picture.uyvy") +
          "; done | timeout 60 ffmpeg -hide_banner -loglevel error -re -f rawvideo -pix_fmt "
          "uyvy422 -video_size 1920x1080 -framerate 30 -i - -c:v rawvideo -pix_fmt uyvy422 -f rtp "
          "'rtp://127.0.0.1:" +
          std::to_string(ports_[4]) + "?pkt_size=8972'",
      dir_);
  ASSERT_EQ(sent.exit_code, 0) << sent.output;
  const nlohmann::json live = Live();
  EXPECT_EQ(Ctl("stop").first, 0);
  const auto shown = EndAndCollect(streamer, left, right);
  ExpectShown(live, Report(), TicksSomeTileMissed());
  EXPECT_EQ(live.value("sampling", ""), "YCbCr-4:2:2 8-bit") << live.dump();
  ExpectTiles(dir_.path(), picture, shown, /*tolerance=*/2);
}

}  // namespace
}  // namespace tilestream
