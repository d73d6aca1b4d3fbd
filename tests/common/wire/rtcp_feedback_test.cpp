#include "common/wire/rtcp_feedback.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "common/base/bytes.h"

namespace tilestream {
namespace {

std::vector<uint16_t> Expand(std::span<const NackRequest> requests) {
  std::vector<uint16_t> out;
  for (const NackRequest& r : requests)
    ForEachNacked(r.entry, [&](uint16_t s) { out.push_back(s); });
  return out;
}

std::vector<std::byte> Nack(std::vector<uint16_t> lost, uint32_t media = 0x74730001) {
  std::vector<std::byte> out(1500);
  size_t taken = 0;
  out.resize(WriteGenericNack(0x74640001, media, lost, out, &taken));
  EXPECT_EQ(taken, lost.size());
  return out;
}

TEST(GenericNack, RoundTripsSequencesPackedSeventeenToAnEntry) {
  std::vector<uint16_t> lost;
  for (uint16_t s = 100; s < 140; ++s) lost.push_back(s);  // 40 in a row: 3 entries
  lost.push_back(500);
  const auto packet = Nack(lost);
  EXPECT_EQ(packet.size(), kNackHeaderSize + 4 * kNackEntrySize);
  EXPECT_EQ(static_cast<uint8_t>(packet[0]), 0x81);  // V=2, FMT=1
  EXPECT_EQ(static_cast<uint8_t>(packet[1]), 205);
  EXPECT_EQ(LoadBE16(packet.data() + 2), packet.size() / 4 - 1);
  EXPECT_TRUE(LooksLikeRtcp(packet));
  std::array<NackRequest, 16> got;
  size_t count = 0;
  ASSERT_EQ(ParseGenericNacks(packet, got, &count), RtcpError::kOk);
  ASSERT_EQ(count, 4u);
  EXPECT_EQ(got[0].media_ssrc, 0x74730001u);
  EXPECT_EQ(Expand({got.data(), count}), lost);
}

TEST(GenericNack, PacksAcrossTheSequenceWrap) {
  const std::vector<uint16_t> lost = {65534, 65535, 0, 3};
  const auto packet = Nack(lost);
  EXPECT_EQ(packet.size(), kNackHeaderSize + kNackEntrySize);
  std::array<NackRequest, 4> got;
  size_t count = 0;
  ASSERT_EQ(ParseGenericNacks(packet, got, &count), RtcpError::kOk);
  EXPECT_EQ(Expand({got.data(), count}), lost);
}

TEST(GenericNack, StopsWhereTheBufferEndsAndSaysHowMuchWentIn) {
  std::vector<uint16_t> lost = {1, 100, 200, 300};
  std::array<std::byte, kNackHeaderSize + 2 * kNackEntrySize> out;
  size_t taken = 0;
  EXPECT_EQ(WriteGenericNack(1, 2, lost, out, &taken), out.size());
  EXPECT_EQ(taken, 2u);
  std::array<std::byte, kNackHeaderSize> none;
  EXPECT_EQ(WriteGenericNack(1, 2, lost, none, &taken), 0u);
  EXPECT_EQ(taken, 0u);
}

// A compound packet as RFC 4585 senders without rtcp-rsize send it: an
// empty receiver report, then the NACK; and another feedback format after.
TEST(GenericNack, TakesNacksOutOfACompoundPacketAndSkipsTheRest) {
  std::vector<std::byte> compound(8);
  compound[0] = std::byte(0x80);
  compound[1] = std::byte(201);  // RR, no report blocks
  StoreBE16(compound.data() + 2, 1);
  const auto nack = Nack({7, 9});
  compound.insert(compound.end(), nack.begin(), nack.end());
  std::vector<std::byte> pli(12);  // PSFB PLI (PT 206, FMT 1): not ours
  pli[0] = std::byte(0x81);
  pli[1] = std::byte(206);
  StoreBE16(pli.data() + 2, 2);
  compound.insert(compound.end(), pli.begin(), pli.end());
  std::array<NackRequest, 4> got;
  size_t count = 0;
  ASSERT_EQ(ParseGenericNacks(compound, got, &count), RtcpError::kOk);
  EXPECT_EQ(Expand({got.data(), count}), (std::vector<uint16_t>{7, 9}));
}

TEST(GenericNack, KeepsNoMoreEntriesThanThereIsRoomFor) {
  const auto packet = Nack({1, 100, 200});
  std::array<NackRequest, 2> got;
  size_t count = 0;
  EXPECT_EQ(ParseGenericNacks(packet, got, &count), RtcpError::kOk);
  EXPECT_EQ(count, 2u);
}

// One test per malformed case: each is refused with its reason and nothing
// is read past the datagram (ASan).
TEST(GenericNack, RefusesATruncatedHeader) {
  const auto packet = Nack({1});
  std::array<NackRequest, 4> got;
  size_t count = 0;
  EXPECT_EQ(ParseGenericNacks(std::span(packet).first(3), got, &count), RtcpError::kTooShort);
  EXPECT_EQ(count, 0u);
}

TEST(GenericNack, RefusesAnotherVersion) {
  auto packet = Nack({1});
  packet[0] = std::byte(0x41);
  std::array<NackRequest, 4> got;
  size_t count = 0;
  EXPECT_EQ(ParseGenericNacks(packet, got, &count), RtcpError::kBadVersion);
}

TEST(GenericNack, RefusesALengthPastTheDatagram) {
  auto packet = Nack({1});
  StoreBE16(packet.data() + 2, 40);
  std::array<NackRequest, 4> got;
  size_t count = 0;
  EXPECT_EQ(ParseGenericNacks(packet, got, &count), RtcpError::kBadLength);
  EXPECT_EQ(count, 0u);
}

TEST(GenericNack, RefusesANackWithoutItsSsrcs) {
  std::vector<std::byte> packet(8);
  packet[0] = std::byte(0x81);
  packet[1] = std::byte(205);
  StoreBE16(packet.data() + 2, 1);
  std::array<NackRequest, 4> got;
  size_t count = 0;
  EXPECT_EQ(ParseGenericNacks(packet, got, &count), RtcpError::kTooShort);
}

TEST(GenericNack, RefusesTrailingBytesShorterThanAHeaderButKeepsWhatCameBefore) {
  auto packet = Nack({5});
  packet.push_back(std::byte(0x80));
  std::array<NackRequest, 4> got;
  size_t count = 0;
  EXPECT_EQ(ParseGenericNacks(packet, got, &count), RtcpError::kTooShort);
  EXPECT_EQ(count, 1u);
}

TEST(GenericNack, TellsRtcpFromRtpOnAMultiplexedPort) {
  std::array<std::byte, 2> rtp{std::byte(0x80), std::byte(96)};
  std::array<std::byte, 2> rtp_marker{std::byte(0x80), std::byte(0x80 | 96)};
  std::array<std::byte, 2> rtcp{std::byte(0x81), std::byte(205)};
  EXPECT_FALSE(LooksLikeRtcp(rtp));
  EXPECT_FALSE(LooksLikeRtcp(rtp_marker));
  EXPECT_TRUE(LooksLikeRtcp(rtcp));
  EXPECT_FALSE(LooksLikeRtcp(std::span(rtcp).first(1)));
}

// The sender's BYE: reduced-size as we write it, or after a receiver report
// naming several sources; a truncated one names none it cannot hold.
TEST(RtcpBye, NamesItsSourcesAloneOrInACompoundPacket) {
  std::array<std::byte, kByeSize> bye;
  ASSERT_EQ(WriteBye(0x01020304, bye), kByeSize);
  EXPECT_TRUE(LooksLikeRtcp(bye));
  EXPECT_TRUE(SaysBye(bye, 0x01020304));
  EXPECT_FALSE(SaysBye(bye, 0x01020305));

  std::vector<std::byte> compound(8);
  compound[0] = std::byte(0x80);
  compound[1] = std::byte(201);  // RR, no report blocks
  StoreBE16(compound.data() + 2, 1);
  const std::vector<std::byte> two = {
      std::byte(0x82), std::byte(kRtcpBye), std::byte(0), std::byte(2), std::byte(0), std::byte(0),
      std::byte(0),    std::byte(5),        std::byte(0), std::byte(0), std::byte(0), std::byte(6)};
  compound.insert(compound.end(), two.begin(), two.end());
  EXPECT_TRUE(SaysBye(compound, 5));
  EXPECT_TRUE(SaysBye(compound, 6));
  EXPECT_FALSE(SaysBye(compound, 7));

  auto lying = two;  // says 2 sources, holds 1
  StoreBE16(lying.data() + 2, 1);
  lying.resize(8);
  EXPECT_TRUE(SaysBye(lying, 5));
  EXPECT_FALSE(SaysBye(lying, 6));
  EXPECT_FALSE(SaysBye(std::span(bye).first(6), 0x01020304));  // past the datagram
}

}  // namespace
}  // namespace tilestream
