#include "common/wire/sdp.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tilestream {
namespace {

using ::testing::HasSubstr;

TileStreamDescription Tile() {
  TileStreamDescription d;
  d.name = "tilestream r0c1";
  d.source_address = "127.0.0.1";
  d.destination_address = "127.0.0.1";
  d.port = 50001;
  d.tile = {2560, 1600};
  d.fps = 22;
  d.ssrc = 0x74730001;
  return d;
}

TEST(Sdp, WritesRtpmapAndFmtpForRgb8) {
  const std::string sdp = WriteSdp(Tile());
  EXPECT_THAT(sdp, HasSubstr("m=video 50001 RTP/AVP 96\r\n"));
  EXPECT_THAT(sdp, HasSubstr("a=rtpmap:96 raw/90000\r\n"));
  EXPECT_THAT(sdp, HasSubstr("a=fmtp:96 sampling=RGB; width=2560; height=1600; depth=8; "
                             "colorimetry=BT709;"));
  EXPECT_THAT(sdp, HasSubstr("exactframerate=22\r\n"));
  EXPECT_THAT(sdp, HasSubstr("c=IN IP4 127.0.0.1\r\n"));
}

TEST(Sdp, ParsesBackToTheTileGeometry) {
  auto d = ParseSdp(WriteSdp(Tile()));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->tile, (TileGeometry{2560, 1600}));
  EXPECT_EQ(d->port, 50001);
  EXPECT_EQ(d->payload_type, 96);
  EXPECT_EQ(d->destination_address, "127.0.0.1");
  EXPECT_EQ(d->ssrc, 0x74730001u);
  EXPECT_DOUBLE_EQ(d->fps, 22);
  EXPECT_TRUE(d->packed);
}

// RFC 4588 in SDP (as WebRTC and GStreamer's rtpbin read it): AVPF with
// NACK feedback, the rtx payload type tied to the video's, RTCP on the
// stream's port, reduced-size; the video is still what a reader takes.
TEST(Sdp, WritesRetransmissionAndStillParsesAsTheVideo) {
  TileStreamDescription d = Tile();
  d.rtx_payload_type = 97;
  d.rtx_ssrc = 0x74720001;
  d.rtx_time_ms = 90;
  const std::string sdp = WriteSdp(d);
  EXPECT_THAT(sdp, HasSubstr("m=video 50001 RTP/AVPF 96 97\r\n"));
  EXPECT_THAT(sdp, HasSubstr("a=rtcp-fb:96 nack\r\n"));
  EXPECT_THAT(sdp, HasSubstr("a=rtpmap:97 rtx/90000\r\n"));
  EXPECT_THAT(sdp, HasSubstr("a=fmtp:97 apt=96;rtx-time=90\r\n"));
  EXPECT_THAT(sdp, HasSubstr("a=rtcp-mux\r\n"));
  EXPECT_THAT(sdp, HasSubstr("a=rtcp-rsize\r\n"));
  EXPECT_THAT(sdp, HasSubstr("a=ssrc-group:FID 1953693697 1953628161\r\n"));
  auto back = ParseSdp(sdp);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->payload_type, 96);
  EXPECT_EQ(back->ssrc, 0x74730001u);
  EXPECT_EQ(back->tile, (TileGeometry{2560, 1600}));
  EXPECT_EQ(back->rtx_payload_type, 97);
  EXPECT_EQ(back->rtx_time_ms, 90u);
}

TEST(Sdp, WritesNtscRatesAsRatios) {
  TileStreamDescription t = Tile();
  t.fps = 30000.0 / 1001;
  EXPECT_THAT(WriteSdp(t), HasSubstr("exactframerate=30000/1001"));
  EXPECT_NEAR(ParseSdp(WriteSdp(t))->fps, 29.97, 0.001);
}

TEST(Sdp, ParsesAHandWrittenFfmpegStyleFile) {
  auto d = ParseSdp(
      "v=0\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVP 112\na=rtpmap:112 raw/90000\n"
      "a=fmtp:112 sampling=RGB; width=641; height=401; depth=8\n");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->tile, (TileGeometry{641, 401}));
  EXPECT_EQ(d->payload_type, 112);
}

// A live source's (docs/live.md): GStreamer's rtpvrawpay or an ST 2110-20
// sender at 4:2:2, 8 or 10 bits, with its colorimetry.
TEST(Sdp, ParsesYCbCr422AtEightAndTenBits) {
  auto d = ParseSdp(
      "v=0\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVP 96\na=rtpmap:96 raw/90000\n"
      "a=fmtp:96 sampling=YCbCr-4:2:2; width=1920; height=1080; depth=10; "
      "colorimetry=BT601\n");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->tile, (TileGeometry{1920, 1080, Sampling::kYCbCr422_10}));
  EXPECT_EQ(d->tile.row_bytes(), 1920u / 2 * 5);
  EXPECT_EQ(d->colorimetry, "BT601");
  EXPECT_EQ(d->rtx_payload_type, 0);  // no rtx: nothing is asked of the sender
  TileStreamDescription t = Tile();
  t.tile.sampling = Sampling::kYCbCr422_8;
  t.colorimetry = "BT601";
  EXPECT_THAT(WriteSdp(t), HasSubstr("sampling=YCbCr-4:2:2; width=2560; height=1600; depth=8; "
                                     "colorimetry=BT601"));
  EXPECT_EQ(ParseSdp(WriteSdp(t))->tile, t.tile);
}

// A multicast source (ST 2110, GStreamer's udpsink to a group): the group's
// address without its TTL, to join.
TEST(Sdp, TakesAMulticastGroupWithoutItsTtl) {
  auto d = ParseSdp(
      "v=0\nc=IN IP4 239.10.20.30/32\nm=video 5004 RTP/AVP 96\na=rtpmap:96 raw/90000\n"
      "a=fmtp:96 sampling=RGB; width=64; height=64; depth=8\n");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->destination_address, "239.10.20.30");
  EXPECT_EQ(ParseSdp("v=0\nc=IN IP6 ff15::1/3\nm=video 5004 RTP/AVP 96\na=rtpmap:96 raw/90000\n"
                     "a=fmtp:96 sampling=RGB; width=64; height=64; depth=8\n")
                ->destination_address,
            "ff15::1");
}

// Only the video's own attributes: those of a media after it are not its.
TEST(Sdp, TakesTheRetransmissionOnlyOfTheVideoMedia) {
  auto d = ParseSdp(
      "v=0\nm=video 5004 RTP/AVP 96 99\na=rtpmap:96 raw/90000\n"
      "a=fmtp:96 sampling=RGB; width=64; height=64; depth=8\n"
      "a=rtpmap:99 rtx/90000\na=fmtp:99 apt=95\n"  // another format's: not the video's
      "m=video 5006 RTP/AVP 97\na=rtpmap:98 rtx/90000\na=fmtp:98 apt=96\n");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->rtx_payload_type, 0);
}

TEST(Sdp, RejectsOtherSamplingsAndMissingParts) {
  const auto with = [](std::string_view fmtp) {
    return ParseSdp(
        fmt::format("v=0\nm=video 5004 RTP/AVP 96\na=rtpmap:96 raw/90000\n"
                    "a=fmtp:96 {}\n",
                    fmtp));
  };
  EXPECT_FALSE(with("sampling=YCbCr-4:4:4; width=64; height=64; depth=10").ok());
  EXPECT_FALSE(with("sampling=YCbCr-4:2:2; width=64; height=64; depth=12").ok());
  EXPECT_FALSE(with("sampling=RGB; width=64; height=64; depth=10").ok());
  const auto odd = with("sampling=YCbCr-4:2:2; width=63; height=64; depth=8");
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(odd.status().message(), HasSubstr("two pixels wide"));
  EXPECT_FALSE(ParseSdp("v=0\n").ok());
  EXPECT_FALSE(ParseSdp("v=0\nm=video 5004 RTP/AVP 96\na=rtpmap:96 raw/90000\n").ok());
  EXPECT_FALSE(with("sampling=RGB; width=x; height=64; depth=8").ok());
}

}  // namespace
}  // namespace tilestream
