#include "common/wire/rfc4175.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "tests/support/packet_builder.h"

namespace tilestream {
namespace {

using testing::Craft;
using testing::CraftedPacket;
using testing::CraftedSegment;
using testing::PatternFrame;

const TileGeometry kTile{64, 16};

std::span<const std::byte> Span(const std::vector<std::byte>& v) { return {v.data(), v.size()}; }

ParseError Parse(const std::vector<std::byte>& packet, Rfc4175View* view = nullptr) {
  Rfc4175View scratch;
  return ParseRfc4175(Span(packet), kTile, view ? view : &scratch);
}

CraftedPacket OneSegment(uint16_t line, uint16_t offset, uint16_t length) {
  CraftedPacket p;
  p.segments = {{line, offset, length}};
  return p;
}

TEST(Rfc4175, LineHeaderRoundTripsAllBits) {
  std::byte buf[kLineHeaderSize];
  const LineHeader in{0xBEEF & ~1, 0x7fff, 0x1234, true, true};
  StoreLineHeader(buf, in);
  const LineHeader out = LoadLineHeader(buf);
  EXPECT_EQ(out.length, in.length);
  EXPECT_EQ(out.line, 0x7fff);
  EXPECT_EQ(out.offset, 0x1234);
  EXPECT_TRUE(out.field);
  EXPECT_TRUE(out.continuation);
  EXPECT_EQ(static_cast<uint8_t>(buf[2]), 0xff);  // F in the top bit of the line
  EXPECT_EQ(static_cast<uint8_t>(buf[4]), 0x92);  // C in the top bit of the offset
}

TEST(Rfc4175, ParsesRtpFieldsAndExtendedSequence) {
  CraftedPacket p = OneSegment(3, 5, 30);
  p.marker = true;
  p.payload_type = 101;
  p.sequence = 0x0007fffe;
  p.timestamp = 0xdeadbeef;
  p.ssrc = 0xcafef00d;
  const auto frame = PatternFrame(kTile, 1);
  Rfc4175View v;
  ASSERT_EQ(Parse(Craft(p, kTile, frame), &v), ParseError::kOk);
  EXPECT_TRUE(v.rtp.marker);
  EXPECT_EQ(v.rtp.payload_type, 101);
  EXPECT_EQ(v.rtp.sequence, 0xfffe);
  EXPECT_EQ(v.extended_sequence, 0x0007);
  EXPECT_EQ(v.sequence32(), 0x0007fffeu);
  EXPECT_EQ(v.rtp.timestamp, 0xdeadbeefu);
  EXPECT_EQ(v.rtp.ssrc, 0xcafef00du);
  EXPECT_EQ(v.segment_count, 1u);
  EXPECT_EQ(v.pixel_bytes, 30u);
}

TEST(Rfc4175, ARetransmissionParsesAsTheOriginalUnderItsSequenceNumber) {
  CraftedPacket p = OneSegment(3, 5, 30);
  p.marker = true;
  p.sequence = 0x0002abcd;
  p.timestamp = 777;
  p.padding = 4;
  const auto frame = PatternFrame(kTile, 1);
  const auto original = Craft(p, kTile, frame);
  Rfc4175View o, v;
  ASSERT_EQ(Parse(original, &o), ParseError::kOk);
  uint16_t rtx_sequence = 0;
  const auto rtx = testing::MakeRtx(original, 97, 0x99, 4321);  // v points into it
  ASSERT_EQ(ParseRtx(rtx, kTile, &v, &rtx_sequence), ParseError::kOk);
  EXPECT_EQ(rtx_sequence, 4321);
  EXPECT_EQ(v.rtp.sequence, 0xabcd);
  EXPECT_EQ(v.extended_sequence, 0x0002);
  EXPECT_EQ(v.rtp.payload_type, 97);
  EXPECT_EQ(v.rtp.ssrc, 0x99u);
  EXPECT_EQ(v.rtp.timestamp, 777u);
  EXPECT_TRUE(v.rtp.marker);
  EXPECT_EQ(v.pixel_bytes, o.pixel_bytes);
  EXPECT_TRUE(std::equal(v.pixels.begin(), v.pixels.end(), o.pixels.begin(), o.pixels.end()));
  EXPECT_TRUE(std::equal(v.line_headers.begin(), v.line_headers.end(), o.line_headers.begin(),
                         o.line_headers.end()));
}

TEST(Rfc4175, WritesTheRetransmissionPrefixAsParsed) {
  RtpHeader h;
  h.marker = true;
  h.payload_type = 97;
  h.sequence = 9;
  h.timestamp = 1234;
  h.ssrc = 0x74720003;
  std::array<std::byte, kRtpHeaderSize + kRtxPrefixSize> prefix;
  EXPECT_EQ(WriteRtxPrefix(h, 0xbeef, /*padding=*/false, prefix), prefix.size());
  RtpHeader back;
  ASSERT_EQ(ParseRtpHeader(prefix, &back), ParseError::kOk);
  EXPECT_TRUE(back.marker);
  EXPECT_EQ(back.payload_type, 97);
  EXPECT_EQ(back.sequence, 9);
  EXPECT_EQ(back.timestamp, 1234u);
  EXPECT_EQ(back.ssrc, 0x74720003u);
  EXPECT_EQ(LoadBE16(prefix.data() + kRtpHeaderSize), 0xbeef);
}

// Malformed retransmissions: too short for the original sequence number,
// and a payload that is not a valid RFC 4175 one after it.
TEST(Rfc4175, RefusesARetransmissionWithoutItsOriginalSequenceNumber) {
  std::vector<std::byte> rtx(kRtpHeaderSize + 1);
  rtx[0] = std::byte(0x80);
  Rfc4175View v;
  uint16_t rtx_sequence = 0;
  EXPECT_EQ(ParseRtx(rtx, kTile, &v, &rtx_sequence), ParseError::kTooShort);
}

TEST(Rfc4175, RefusesARetransmissionWhosePayloadIsBroken) {
  const auto frame = PatternFrame(kTile, 1);
  auto rtx = testing::MakeRtx(Craft(OneSegment(3, 5, 30), kTile, frame), 97, 1, 1);
  rtx.resize(rtx.size() - 10);  // pixels cut short
  Rfc4175View v;
  uint16_t rtx_sequence = 0;
  EXPECT_EQ(ParseRtx(rtx, kTile, &v, &rtx_sequence), ParseError::kPayloadTruncated);
}

// The layout GStreamer's rtpvrawpay produces: several segments in a packet,
// lines split at arbitrary pixels, continuing in the next packet.
TEST(Rfc4175, AcceptsSeveralLinesPerPacketSplitAnywhere) {
  const auto frame = PatternFrame(kTile, 2);
  CraftedPacket a;
  a.segments = {{0, 10, 54 * 3}, {1, 0, 64 * 3}, {2, 0, 7 * 3}};
  CraftedPacket b;
  b.segments = {{2, 7, 57 * 3}, {3, 0, 64 * 3}};
  std::vector<std::byte> out(kTile.frame_bytes());
  for (const CraftedPacket& p : {a, b}) {
    const auto packet = Craft(p, kTile, frame);
    Rfc4175View v;
    ASSERT_EQ(Parse(packet, &v), ParseError::kOk);
    CopySegmentsToFrame(v, kTile, out);
  }
  const size_t begin = 10 * 3, end = 4 * kTile.row_bytes();
  EXPECT_TRUE(std::equal(frame.begin() + begin, frame.begin() + end, out.begin() + begin));
  EXPECT_EQ(out[0], std::byte{0});  // pixels 0..9 of line 0 were never sent
  EXPECT_EQ(out[end], std::byte{0});
}

TEST(Rfc4175, AcceptsCsrcsHeaderExtensionAndPadding) {
  CraftedPacket p = OneSegment(15, 60, 12);
  p.csrc_count = 3;
  p.extension = std::vector<std::byte>(8, std::byte{0x5a});
  p.padding = 4;
  const auto frame = PatternFrame(kTile, 3);
  const auto packet = Craft(p, kTile, frame);
  Rfc4175View v;
  ASSERT_EQ(Parse(packet, &v), ParseError::kOk);
  EXPECT_EQ(v.pixel_bytes, 12u);
  std::vector<std::byte> out(kTile.frame_bytes());
  CopySegmentsToFrame(v, kTile, out);
  const size_t at = (15 * 64 + 60) * 3;
  EXPECT_TRUE(std::equal(frame.begin() + at, frame.begin() + at + 12, out.begin() + at));
}

TEST(Rfc4175, IgnoresTrailingBytesAfterAnnouncedPixels) {
  auto packet = Craft(OneSegment(0, 0, 3), kTile, PatternFrame(kTile, 4));
  packet.push_back(std::byte{1});
  Rfc4175View v;
  ASSERT_EQ(Parse(packet, &v), ParseError::kOk);
  EXPECT_EQ(v.pixels.size(), 3u);
}

TEST(Rfc4175, RejectsTruncationAtEveryByte) {
  CraftedPacket p;
  p.csrc_count = 1;
  p.extension = std::vector<std::byte>(4, std::byte{1});
  p.segments = {{0, 0, 30}, {1, 0, 30}};
  const auto packet = Craft(p, kTile, PatternFrame(kTile, 5));
  ASSERT_EQ(Parse(packet), ParseError::kOk);
  for (size_t n = 0; n < packet.size(); ++n) {
    const std::vector<std::byte> cut(packet.begin(), packet.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_NE(Parse(cut), ParseError::kOk) << "truncated to " << n << " bytes";
  }
}

TEST(Rfc4175, RejectsPacketShorterThanRtpHeader) {
  EXPECT_EQ(Parse(std::vector<std::byte>(11, std::byte{0x80})), ParseError::kTooShort);
}

TEST(Rfc4175, RejectsWrongVersion) {
  for (uint8_t version : {0, 1, 3}) {
    CraftedPacket p = OneSegment(0, 0, 3);
    p.version = version;
    EXPECT_EQ(Parse(Craft(p, kTile, {})), ParseError::kBadVersion);
  }
}

TEST(Rfc4175, RejectsLineBeyondTileHeight) {
  EXPECT_EQ(Parse(Craft(OneSegment(16, 0, 3), kTile, {})), ParseError::kLineBeyondHeight);
  EXPECT_EQ(Parse(Craft(OneSegment(0x7fff, 0, 3), kTile, {})), ParseError::kLineBeyondHeight);
}

TEST(Rfc4175, RejectsOffsetPlusLengthBeyondTileWidth) {
  EXPECT_EQ(Parse(Craft(OneSegment(0, 63, 6), kTile, {})), ParseError::kSegmentBeyondWidth);
  EXPECT_EQ(Parse(Craft(OneSegment(0, 64, 3), kTile, {})), ParseError::kSegmentBeyondWidth);
  EXPECT_EQ(Parse(Craft(OneSegment(0, 0x7fff, 0xfffc), kTile, {})),
            ParseError::kSegmentBeyondWidth);
  EXPECT_EQ(Parse(Craft(OneSegment(0, 63, 3), kTile, {})), ParseError::kOk);
}

TEST(Rfc4175, RejectsLengthNotMultipleOfPgroup) {
  EXPECT_EQ(Parse(Craft(OneSegment(0, 0, 4), kTile, {})), ParseError::kLengthNotPgroup);
}

// YCbCr 4:2:2 (a live source's, docs/live.md): pixel groups of two pixels,
// 4 octets at 8 bits and 5 at 10; offsets in pixels, on a group's start.
TEST(Rfc4175, PlacesYCbCr422PixelGroupsOfTwoPixels) {
  for (const Sampling sampling : {Sampling::kYCbCr422_8, Sampling::kYCbCr422_10}) {
    const TileGeometry tile{64, 4, sampling};
    const size_t group = tile.pgroup_bytes();
    const auto frame = PatternFrame(tile, 3);
    CraftedPacket p;
    p.segments = {{1, 10, static_cast<uint16_t>(27 * group)}, {2, 0, static_cast<uint16_t>(group)}};
    const auto packet = Craft(p, tile, frame);
    Rfc4175View v;
    ASSERT_EQ(ParseRfc4175(Span(packet), tile, &v), ParseError::kOk);
    std::vector<std::byte> out(tile.frame_bytes());
    CopySegmentsToFrame(v, tile, out);
    const size_t begin = tile.row_bytes() + 5 * group, end = 2 * tile.row_bytes() + group;
    EXPECT_TRUE(std::equal(frame.begin() + begin, frame.begin() + end, out.begin() + begin));
    EXPECT_EQ(out[begin - 1], std::byte{0});
    EXPECT_EQ(out[end], std::byte{0});
    // An odd offset splits a group; a length not of whole groups; a group
    // past the width.
    EXPECT_EQ(ParseRfc4175(Span(Craft(OneSegment(0, 3, group), tile, {})), tile, &v),
              ParseError::kLengthNotPgroup);
    EXPECT_EQ(ParseRfc4175(Span(Craft(OneSegment(0, 2, group + 1), tile, {})), tile, &v),
              ParseError::kLengthNotPgroup);
    EXPECT_EQ(ParseRfc4175(Span(Craft(OneSegment(0, 62, 2 * group), tile, {})), tile, &v),
              ParseError::kSegmentBeyondWidth);
  }
}

TEST(Rfc4175, RejectsZeroLength) {
  EXPECT_EQ(Parse(Craft(OneSegment(0, 0, 0), kTile, {})), ParseError::kZeroLength);
}

TEST(Rfc4175, RejectsSecondFieldOfInterlacedVideo) {
  CraftedPacket p = OneSegment(0, 0, 3);
  p.segments[0].field = true;
  EXPECT_EQ(Parse(Craft(p, kTile, {})), ParseError::kInterlaced);
}

TEST(Rfc4175, RejectsHeaderChainRunningPastPayload) {
  auto packet = Craft(OneSegment(0, 0, 3), kTile, {});
  packet[kPayloadHeaderSize + 4] |= std::byte{0x80};  // C bit: "another header follows"
  packet.resize(kPayloadHeaderSize + kLineHeaderSize);
  EXPECT_EQ(Parse(packet), ParseError::kTruncatedHeaders);
}

TEST(Rfc4175, RejectsPixelsShorterThanAnnounced) {
  auto packet = Craft(OneSegment(0, 0, 30), kTile, {});
  packet.pop_back();
  EXPECT_EQ(Parse(packet), ParseError::kPayloadTruncated);
}

TEST(Rfc4175, RejectsPaddingCountOfZeroOrBeyondPayload) {
  CraftedPacket p = OneSegment(0, 0, 3);
  p.padding = 1;
  auto packet = Craft(p, kTile, {});
  packet.back() = std::byte{0};
  EXPECT_EQ(Parse(packet), ParseError::kBadPadding);
  packet.back() = std::byte{255};
  EXPECT_EQ(Parse(packet), ParseError::kBadPadding);
}

TEST(Rfc4175, RejectsExtensionBeyondPacket) {
  CraftedPacket p = OneSegment(0, 0, 3);
  p.extension = std::vector<std::byte>(4, std::byte{0});
  auto packet = Craft(p, kTile, {});
  StoreBE16(&packet[kRtpHeaderSize + 2], 1000);  // extension length in words
  EXPECT_EQ(Parse(packet), ParseError::kBadExtension);
}

TEST(Rfc4175, RejectsCsrcListBeyondPacket) {
  auto packet = Craft(OneSegment(0, 0, 3), kTile, {});
  packet[0] |= std::byte{0x0f};  // 15 CSRCs = 60 bytes
  packet.resize(40);
  EXPECT_EQ(Parse(packet), ParseError::kTooShort);
}

TEST(Rfc4175, EveryParseErrorHasAName) {
  for (int e = 0; e < static_cast<int>(ParseError::kCount); ++e)
    EXPECT_STRNE(ParseErrorName(static_cast<ParseError>(e)), "unknown");
}

TEST(Rfc4175, TimestampIs90kHzTicksFromBase) {
  EXPECT_EQ(RtpTimestampForTick(0, 30, 1000), 1000u);
  EXPECT_EQ(RtpTimestampForTick(1, 30, 1000), 4000u);
  EXPECT_EQ(RtpTimestampForTick(22, 22, 0), 90000u);
  EXPECT_EQ(RtpTimestampForTick(1, 29.97, 0), 3003u);
  EXPECT_EQ(RtpTimestampForTick(1, 30, 0xffffffffu - 999), 3000u - 1000u);  // wraps
}

}  // namespace
}  // namespace tilestream
