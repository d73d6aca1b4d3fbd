#include "common/wire/packetizer.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "tests/support/packet_builder.h"

namespace tilestream {
namespace {

using testing::PatternFrame;

std::vector<uint8_t> Bytes(std::span<const std::byte> s) {
  std::vector<uint8_t> v;
  for (std::byte b : s) v.push_back(static_cast<uint8_t>(b));
  return v;
}

Packetizer Make(TileGeometry tile, size_t max_payload, Packing packing = Packing::kPacked,
                uint32_t ssrc = 0xAABBCCDD) {
  PacketizerOptions o;
  o.tile = tile;
  o.max_payload = max_payload;
  o.packing = packing;
  o.ssrc = ssrc;
  auto p = Packetizer::Create(o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

TEST(Packetizer, MaxPayloadIsMtuMinus40) {
  EXPECT_EQ(MaxUdpPayloadForMtu(1500), 1460u);
  EXPECT_EQ(MaxUdpPayloadForMtu(9000), 8960u);
}

// A 4x2 tile fits one packet: two full-line segments, marker set.
TEST(Packetizer, SmallFrameHeaderBytesAreExact) {
  const Packetizer p = Make({4, 2}, 1460);
  ASSERT_EQ(p.packet_count(), 1u);
  std::vector<std::byte> frame(24), out(p.packet_size(0));
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = std::byte(i);
  ASSERT_EQ(p.Build(0, frame, 0x11223344, 0x00012345, out), 14u + 12u + 24u);
  const std::vector<uint8_t> header = {
      0x80, 0xE0, 0x23, 0x45,              // V=2, M=1, PT=96, sequence low
      0x11, 0x22, 0x33, 0x44,              // timestamp
      0xAA, 0xBB, 0xCC, 0xDD,              // SSRC
      0x00, 0x01,                          // extended sequence (high half)
      0x00, 0x0C, 0x00, 0x00, 0x80, 0x00,  // 12 bytes, line 0, C=1, offset 0
      0x00, 0x0C, 0x00, 0x01, 0x00, 0x00,  // 12 bytes, line 1, C=0, offset 0
  };
  EXPECT_EQ(Bytes(std::span(out).first(header.size())), header);
  EXPECT_EQ(Bytes(std::span(out).subspan(header.size())), Bytes(frame));
}

// 100x3 at a 256-byte payload: 242 bytes after the RTP header per packet.
// Packet 1 carries the last 22 pixels of line 0 and the first 54 of line 1.
TEST(Packetizer, SplitLineHeaderBytesAreExact) {
  const Packetizer p = Make({100, 3}, 256);
  ASSERT_EQ(p.packet_count(), 4u);
  EXPECT_EQ(p.packet_size(0), 254u);
  EXPECT_EQ(p.packet_size(1), 254u);
  EXPECT_EQ(p.packet_size(2), 254u);
  EXPECT_EQ(p.packet_size(3), 14u + 6u + 210u);
  std::vector<std::byte> out(p.header_size(1));
  p.WriteHeaders(1, 0x01020304, 0x0000ffff + 1, out);
  const std::vector<uint8_t> expected = {
      0x80, 0x60, 0x00, 0x00, 0x01, 0x02, 0x03,
      0x04, 0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x01,  // sequence 0x10000
      0x00, 0x42, 0x00, 0x00, 0x80, 0x4E,        // 66 bytes, line 0, C=1, offset 78
      0x00, 0xA2, 0x00, 0x01, 0x00, 0x00,        // 162 bytes, line 1, offset 0
  };
  EXPECT_EQ(Bytes(out), expected);
  EXPECT_EQ(p.pixels(1).offset, 78u * 3);
  EXPECT_EQ(p.pixels(1).length, 66u + 162u);
}

TEST(Packetizer, LinePackingPutsOne2560LineInEach9000MtuPacket) {
  const Packetizer p = Make({2560, 1600}, MaxUdpPayloadForMtu(9000), Packing::kLine);
  ASSERT_EQ(p.packet_count(), 1600u);
  for (uint32_t i = 0; i < p.packet_count(); ++i) ASSERT_EQ(p.packet_size(i), 7700u);
}

TEST(Packetizer, PackedFillsEveryPacketButTheLastToTheSameSize) {
  for (uint32_t width : {1u, 2u, 3u, 97u, 640u, 641u, 1000u, 2560u}) {
    for (size_t payload : {256u, 1000u, 1460u, 8960u}) {
      const Packetizer p = Make({width, 37}, payload);
      const size_t full = payload - (payload - kPayloadHeaderSize) % 3;
      for (uint32_t i = 0; i + 1 < p.packet_count(); ++i)
        ASSERT_EQ(p.packet_size(i), full)
            << width << " px, payload " << payload << ", packet " << i;
      ASSERT_LE(p.packet_size(p.packet_count() - 1), full);
      ASSERT_EQ(p.max_packet_size(), p.packet_count() > 1 ? full : p.packet_size(0));
    }
  }
}

TEST(Packetizer, FindsThePacketWhosePixelsStartAtAnOffset) {
  for (Packing packing : {Packing::kPacked, Packing::kLine}) {
    const Packetizer p = Make({641, 37}, 1460, packing);
    for (uint32_t i = 0; i < p.packet_count(); ++i) {
      ASSERT_EQ(p.PacketAt(p.pixels(i).offset), i);
      ASSERT_EQ(p.PacketAt(p.pixels(i).offset + 3), p.packet_count());  // inside a packet
    }
    EXPECT_EQ(p.PacketAt(size_t{641} * 37 * 3), p.packet_count());  // the frame's end
  }
}

TEST(Packetizer, RejectsImpossibleGeometry) {
  PacketizerOptions o;
  o.tile = {0, 10};
  EXPECT_FALSE(Packetizer::Create(o).ok());
  o.tile = {32768, 1};
  EXPECT_FALSE(Packetizer::Create(o).ok());
  o.tile = {64, 64};
  o.max_payload = 100;
  EXPECT_FALSE(Packetizer::Create(o).ok());
  o.max_payload = 1460;
  o.payload_type = 128;
  EXPECT_FALSE(Packetizer::Create(o).ok());
}

// packetize -> parse -> copy gives back the frame, with gapless sequence
// numbers across the 16-bit wrap, one timestamp, marker on the last packet.
class RoundTrip : public ::testing::TestWithParam<std::tuple<TileGeometry, uint32_t, Packing>> {};

TEST_P(RoundTrip, ReproducesEveryPixel) {
  const auto [tile, mtu, packing] = GetParam();
  const Packetizer p = Make(tile, MaxUdpPayloadForMtu(mtu), packing);
  const auto frame = PatternFrame(tile, tile.width);
  std::vector<std::byte> out(tile.frame_bytes()), packet(p.max_packet_size());
  const uint32_t first_sequence = 0xfffffff0u - p.packet_count() / 2;
  size_t bytes = 0;
  for (uint32_t i = 0; i < p.packet_count(); ++i) {
    const size_t n = p.Build(i, frame, 777, first_sequence + i, packet);
    ASSERT_EQ(n, p.packet_size(i));
    ASSERT_LE(n, MaxUdpPayloadForMtu(mtu));
    Rfc4175View v;
    ASSERT_EQ(ParseRfc4175(std::span(packet).first(n), tile, &v), ParseError::kOk) << i;
    ASSERT_EQ(v.sequence32(), first_sequence + i);
    ASSERT_EQ(v.rtp.timestamp, 777u);
    ASSERT_EQ(v.rtp.ssrc, 0xAABBCCDDu);
    ASSERT_EQ(v.rtp.marker, i + 1 == p.packet_count());
    bytes += CopySegmentsToFrame(v, tile, out);
  }
  EXPECT_EQ(bytes, tile.frame_bytes());
  EXPECT_TRUE(out == frame);
}

std::string RoundTripName(
    const ::testing::TestParamInfo<std::tuple<TileGeometry, uint32_t, Packing>>& info) {
  const auto& [tile, mtu, packing] = info.param;
  return std::to_string(tile.width) + "x" + std::to_string(tile.height) + "_mtu" +
         std::to_string(mtu) + (packing == Packing::kPacked ? "_packed" : "_line");
}

INSTANTIATE_TEST_SUITE_P(Geometries, RoundTrip,
                         ::testing::Combine(::testing::Values(TileGeometry{2560, 1600},
                                                              TileGeometry{641, 401}),
                                            ::testing::Values(1500u, 9000u),
                                            ::testing::Values(Packing::kPacked, Packing::kLine)),
                         RoundTripName);

}  // namespace
}  // namespace tilestream
