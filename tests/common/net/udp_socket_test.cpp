// Loopback tests of the UDP sender and receiver: a real kernel path, small
// enough to fit default socket buffers, bounded in time.
#include "common/net/udp_socket.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "common/wire/packetizer.h"
#include "tests/support/packet_builder.h"

namespace tilestream {
namespace {

using testing::PatternFrame;

UdpReceiver OpenReceiver(bool gro = true) {
  UdpReceiverOptions o;
  o.bind_address = "127.0.0.1";
  o.receive_buffer = 8 << 20;
  o.gro = gro;
  o.timeout_ms = 50;
  auto r = UdpReceiver::Open(o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

UdpSender OpenSender(uint16_t port, bool gso = true, SocketCalls calls = {}) {
  UdpSenderOptions o;
  o.calls = calls;
  o.destination = "127.0.0.1";
  o.port = port;
  o.source_address = "127.0.0.1";
  o.gso = gso;
  auto s = UdpSender::Open(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

// Receives until `want` datagrams arrived or a quiet second passes.
std::vector<std::vector<std::byte>> Drain(UdpReceiver& r, size_t want) {
  std::vector<std::vector<std::byte>> got;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got.size() < want && std::chrono::steady_clock::now() < give_up) {
    if (r.ReceiveBatch().messages == 0) continue;
    r.ForEachDatagram([&](std::span<const std::byte> d, const sockaddr_storage&) {
      got.emplace_back(d.begin(), d.end());
    });
  }
  return got;
}

// Packetizes a frame, sends it as header + pixel iovecs in bursts, receives
// and reassembles it.
void SendAndCheckFrame(bool gso, bool gro, uint32_t mtu) {
  const TileGeometry tile{160, 100};
  PacketizerOptions po;
  po.tile = tile;
  po.max_payload = MaxUdpPayloadForMtu(mtu);
  auto p = Packetizer::Create(po);
  ASSERT_TRUE(p.ok());
  const auto frame = PatternFrame(tile, mtu);
  UdpReceiver receiver = OpenReceiver(gro);
  UdpSender sender = OpenSender(receiver.port(), gso);

  std::vector<std::byte> headers(size_t{p->packet_count()} * 1024);
  std::vector<iovec> iov;
  constexpr uint32_t kBurst = 8;
  for (uint32_t first = 0; first < p->packet_count(); first += kBurst) {
    iov.clear();
    const uint32_t end = std::min(p->packet_count(), first + kBurst);
    for (uint32_t i = first; i < end; ++i) {
      std::byte* h = headers.data() + size_t{i} * 1024;
      const size_t n = p->WriteHeaders(i, 90000, i, {h, 1024});
      iov.push_back({h, n});
      iov.push_back(
          {const_cast<std::byte*>(frame.data()) + p->pixels(i).offset, p->pixels(i).length});
      const auto pad = p->padding(i);
      if (!pad.empty()) iov.push_back({const_cast<std::byte*>(pad.data()), pad.size()});
    }
    ASSERT_TRUE(sender.Send(iov, p->packet_size(first)).ok());
  }
  EXPECT_EQ(sender.stats().datagrams, p->packet_count());
  EXPECT_EQ(sender.stats().dropped, 0u);
  if (gso) {
    EXPECT_TRUE(sender.gso());
    EXPECT_LE(sender.stats().syscalls, (p->packet_count() + 7) / 8);  // a burst of 8 per call
  }

  const auto got = Drain(receiver, p->packet_count());
  ASSERT_EQ(got.size(), p->packet_count());
  std::vector<std::byte> out(tile.frame_bytes());
  for (size_t i = 0; i < got.size(); ++i) {
    Rfc4175View v;
    ASSERT_EQ(ParseRfc4175(got[i], tile, &v), ParseError::kOk) << i;
    EXPECT_EQ(v.sequence32(), i);  // loopback keeps order
    CopySegmentsToFrame(v, tile, out);
  }
  EXPECT_TRUE(out == frame);
}

TEST(UdpSocket, FrameCrossesLoopbackWithGsoAndGro) { SendAndCheckFrame(true, true, 9000); }
TEST(UdpSocket, FrameCrossesLoopbackWithGsoAt1500Mtu) { SendAndCheckFrame(true, true, 1500); }
TEST(UdpSocket, FrameCrossesLoopbackWithoutGso) { SendAndCheckFrame(false, false, 9000); }
TEST(UdpSocket, FrameCrossesLoopbackWithGsoToNonGroReceiver) {
  SendAndCheckFrame(true, false, 1500);
}

TEST(UdpSocket, SplitsOneBufferIntoDatagramsWithAShorterLast) {
  for (bool gso : {true, false}) {
    UdpReceiver receiver = OpenReceiver();
    UdpSender sender = OpenSender(receiver.port(), gso);
    std::vector<std::byte> data(10000);
    for (size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i * 7);
    // Two iovecs whose boundary falls inside the second datagram.
    const iovec iov[2] = {{data.data(), 4000}, {data.data() + 4000, 6000}};
    ASSERT_TRUE(sender.Send(iov, 3000).ok());
    const auto got = Drain(receiver, 4);
    ASSERT_EQ(got.size(), 4u) << "gso " << gso;
    std::vector<std::byte> joined;
    for (const auto& d : got) joined.insert(joined.end(), d.begin(), d.end());
    EXPECT_EQ(got[3].size(), 1000u);
    EXPECT_TRUE(joined == data);
    EXPECT_EQ(sender.stats().bytes, 10000u);
  }
}

TEST(UdpSocket, GsoSendsSeveralSuperDatagramsInOneCall) {
  UdpReceiver receiver = OpenReceiver();
  UdpSender sender = OpenSender(receiver.port(), true);
  if (!sender.gso()) GTEST_SKIP() << "kernel without UDP GSO";
  std::vector<std::byte> data(100 * 1400, std::byte{1});  // 100 datagrams > 64 segments
  const iovec iov{data.data(), data.size()};
  ASSERT_TRUE(sender.Send({&iov, 1}, 1400).ok());
  EXPECT_EQ(sender.stats().syscalls, 1u);  // 46 + 46 + 8 (65507 / 1400 = 46 a message)
  EXPECT_EQ(sender.stats().datagrams, 100u);
  EXPECT_EQ(Drain(receiver, 100).size(), 100u);
}

// Runs of different datagram sizes (a burst whose packets differ), with and
// without GSO: one call, each datagram its run's size.
TEST(UdpSocket, RunsOfSeveralSizesGoInOneCall) {
  for (bool gso : {true, false}) {
    UdpReceiver receiver = OpenReceiver();
    UdpSender sender = OpenSender(receiver.port(), gso);
    std::vector<std::byte> a(3 * 2000, std::byte{2}), b(2 * 700 + 100, std::byte{3});
    const iovec iov_a{a.data(), a.size()}, iov_b{b.data(), b.size()};
    const DatagramRun runs[2] = {{{&iov_a, 1}, 2000}, {{&iov_b, 1}, 700}};
    ASSERT_TRUE(sender.Send(runs).ok());
    EXPECT_EQ(sender.stats().syscalls, 1u) << "gso " << gso;
    const auto got = Drain(receiver, 6);
    ASSERT_EQ(got.size(), 6u) << "gso " << gso;
    const size_t sizes[6] = {2000, 2000, 2000, 700, 700, 100};
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(got[i].size(), sizes[i]) << i;
    EXPECT_EQ(got[3][0], std::byte{3});
  }
}

TEST(UdpSocket, ReceiverReportsTheSenderAddress) {
  UdpReceiver receiver = OpenReceiver();
  UdpSender sender = OpenSender(receiver.port());
  std::byte b[10] = {};
  const iovec iov{b, sizeof b};
  ASSERT_TRUE(sender.Send({&iov, 1}, sizeof b).ok());
  auto local = SocketAddress::Resolve("127.0.0.1", 0);
  auto other = SocketAddress::Resolve("127.0.0.2", 0);
  bool seen = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!seen && std::chrono::steady_clock::now() < give_up) {
    receiver.ReceiveBatch();
    receiver.ForEachDatagram([&](std::span<const std::byte>, const sockaddr_storage& from) {
      EXPECT_TRUE(local->SameHost(from));
      EXPECT_FALSE(other->SameHost(from));
      seen = true;
    });
  }
  EXPECT_TRUE(seen);
}

TEST(UdpSocket, MissingReceiverIsASoftError) {
  uint16_t port;
  {
    UdpReceiver gone = OpenReceiver();
    port = gone.port();
  }
  UdpSender sender = OpenSender(port);
  std::byte b[100] = {};
  const iovec iov{b, sizeof b};
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(sender.Send({&iov, 1}, sizeof b).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GT(sender.stats().refusals.of(ECONNREFUSED), 0u);  // ICMP port unreachable came back
}

TEST(UdpSocket, ReceiveTimesOutWithZero) {
  UdpReceiver receiver = OpenReceiver();
  const BatchResult r = receiver.ReceiveBatch();
  EXPECT_EQ(r.messages, 0);
  EXPECT_TRUE(r.status.ok());
}

TEST(UdpSocket, UnknownInterfaceIsRefusedOrIgnoredWithoutPrivilege) {
  UdpSenderOptions o;
  o.destination = "127.0.0.1";
  o.port = 9;
  o.device = "nosuchnic0";
  auto s = UdpSender::Open(o);
  if (geteuid() == 0) {  // permitted: the kernel says ENODEV
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("nosuchnic0"), std::string::npos);
  }
}

TEST(UdpSocket, UnresolvableDestinationIsAnError) {
  UdpSenderOptions o;
  o.destination = "no-such-host.invalid";
  o.port = 9;
  EXPECT_FALSE(UdpSender::Open(o).ok());
}

// A kernel or device that refuses GSO at send time (EIO for a message with
// a UDP_SEGMENT control message), as some NICs and tunnels do: the sender
// falls back to a datagram per message, and nothing is lost.
int RefuseGso(int fd, mmsghdr* messages, unsigned count, int flags) {
  if (messages[0].msg_hdr.msg_controllen > 0) {
    errno = EIO;
    return -1;
  }
  return ::sendmmsg(fd, messages, count, flags);
}

TEST(UdpSocket, ASendWhoseGsoIsRefusedFallsBackToSendmmsgAndLosesNothing) {
  UdpReceiver receiver = OpenReceiver();
  SocketCalls calls;
  calls.sendmmsg = RefuseGso;
  UdpSender sender = OpenSender(receiver.port(), true, calls);
  if (!sender.gso()) GTEST_SKIP() << "no UDP GSO on this kernel: nothing to fall back from";
  std::vector<std::byte> bytes(10 * 1400);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte(i * 7);
  const iovec iov{bytes.data(), bytes.size()};
  ASSERT_TRUE(sender.Send({&iov, 1}, 1400).ok());
  EXPECT_FALSE(sender.gso());
  EXPECT_EQ(sender.stats().gso_fallbacks, 1u);
  EXPECT_EQ(sender.stats().datagrams, 10u);
  ASSERT_TRUE(sender.Send({&iov, 1}, 1400).ok());  // by sendmmsg from now on
  EXPECT_EQ(sender.stats().gso_fallbacks, 1u);
  const auto got = Drain(receiver, 20);
  ASSERT_EQ(got.size(), 20u);
  for (size_t d = 0; d < got.size(); ++d) {
    ASSERT_EQ(got[d].size(), 1400u);
    EXPECT_EQ(got[d][0], bytes[(d % 10) * 1400]) << d;
  }
}

// The kernel refusing one message of a sendmmsg, as a firewall rule or a
// route does: the message whose first byte is g_refused_mark fails with
// g_refused_errno, the ones before it go out (sendmmsg returns their count,
// as the kernel does), the call after it starts with the refused one.
unsigned char g_refused_mark = 0;
int g_refused_errno = 0;
int g_refusals = 0;

int RefuseMarked(int fd, mmsghdr* messages, unsigned count, int flags) {
  for (unsigned i = 0; i < count; ++i) {
    const auto* first = static_cast<const unsigned char*>(messages[i].msg_hdr.msg_iov[0].iov_base);
    if (*first != g_refused_mark) continue;
    if (i > 0) return ::sendmmsg(fd, messages, i, flags);
    ++g_refusals;
    errno = g_refused_errno;
    return -1;
  }
  return ::sendmmsg(fd, messages, count, flags);
}

// `count` datagrams of `size` bytes, datagram d starting with byte d.
std::vector<std::byte> Numbered(size_t count, size_t size) {
  std::vector<std::byte> bytes(count * size, std::byte{0xee});
  for (size_t d = 0; d < count; ++d) bytes[d * size] = std::byte(d);
  return bytes;
}

// The first bytes of what arrived.
std::vector<int> Arrived(UdpReceiver& r, size_t want) {
  std::vector<int> firsts;
  for (const auto& d : Drain(r, want)) firsts.push_back(static_cast<int>(d[0]));
  return firsts;
}

TEST(UdpSocket, ARefusalAtMessageKSendsTheOthersAndCountsThatOneByItsErrno) {
  for (const int e : {EPERM, EACCES, ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ENETDOWN,
                      EADDRNOTAVAIL, EKEYEXPIRED}) {
    UdpReceiver receiver = OpenReceiver();
    g_refused_mark = 4;
    g_refused_errno = e;
    g_refusals = 0;
    SocketCalls calls;
    calls.sendmmsg = RefuseMarked;
    UdpSender sender = OpenSender(receiver.port(), /*gso=*/false, calls);
    const std::vector<std::byte> bytes = Numbered(10, 1400);
    const iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
    const IoStatus status = sender.Send({&iov, 1}, 1400);
    EXPECT_TRUE(status.ok()) << ErrnoName(e) << ": " << status.message();
    EXPECT_EQ(g_refusals, 1) << ErrnoName(e) << ": asked once, never again";
    EXPECT_EQ(sender.stats().datagrams, 9u) << ErrnoName(e);
    EXPECT_EQ(sender.stats().dropped, 1u) << ErrnoName(e);
    EXPECT_EQ(sender.stats().refusals.of(e), 1u) << ErrnoName(e);
    EXPECT_EQ(sender.stats().refusals.total(), 1u) << ErrnoName(e);
    EXPECT_EQ(Arrived(receiver, 9), (std::vector<int>{0, 1, 2, 3, 5, 6, 7, 8, 9})) << ErrnoName(e);
  }
}

// A refusal that does not last (a random drop) inside a batch: sendmmsg
// returns the count sent before it and no errno. Sent again alone, it goes.
int RefuseMarkedOnceInsideABatch(int fd, mmsghdr* messages, unsigned count, int flags) {
  for (unsigned i = 1; i < count && g_refusals == 0; ++i) {
    const auto* first = static_cast<const unsigned char*>(messages[i].msg_hdr.msg_iov[0].iov_base);
    if (*first != g_refused_mark) continue;
    ++g_refusals;
    return ::sendmmsg(fd, messages, i, flags);
  }
  return ::sendmmsg(fd, messages, count, flags);
}

TEST(UdpSocket, AMessageRefusedInsideABatchGoesAgainAloneAndIsCounted) {
  UdpReceiver receiver = OpenReceiver();
  g_refused_mark = 4;
  g_refusals = 0;
  SocketCalls calls;
  calls.sendmmsg = RefuseMarkedOnceInsideABatch;
  UdpSender sender = OpenSender(receiver.port(), /*gso=*/false, calls);
  const std::vector<std::byte> bytes = Numbered(10, 1400);
  const iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
  ASSERT_TRUE(sender.Send({&iov, 1}, 1400).ok());
  EXPECT_EQ(g_refusals, 1);
  EXPECT_EQ(sender.stats().refused_resent, 1u);
  EXPECT_EQ(sender.stats().refusals.total(), 0u);
  EXPECT_EQ(sender.stats().datagrams, 10u);
  EXPECT_EQ(sender.stats().syscalls, 3u) << "the batch to it, it alone, the rest";
  EXPECT_EQ(Arrived(receiver, 10), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

// With GSO a message is several datagrams: the kernel refuses them together.
TEST(UdpSocket, ARefusedGsoMessageCostsItsDatagramsOnlyAndGsoStaysOn) {
  UdpReceiver receiver = OpenReceiver();
  g_refused_mark = 3;  // the second message: datagrams 3, 4, 5 (3 of 20,000 bytes a message)
  g_refused_errno = EPERM;
  SocketCalls calls;
  calls.sendmmsg = RefuseMarked;
  UdpSender sender = OpenSender(receiver.port(), /*gso=*/true, calls);
  if (!sender.gso()) GTEST_SKIP() << "no UDP GSO on this kernel";
  const std::vector<std::byte> bytes = Numbered(9, 20000);
  const iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
  ASSERT_TRUE(sender.Send({&iov, 1}, 20000).ok());
  EXPECT_TRUE(sender.gso());
  EXPECT_EQ(sender.stats().datagrams, 6u);
  EXPECT_EQ(sender.stats().refusals.of(EPERM), 3u);
  EXPECT_EQ(Arrived(receiver, 6), (std::vector<int>{0, 1, 2, 6, 7, 8}));
}

TEST(UdpSocket, ABufferThatStaysFullIsRetriedABoundedNumberOfTimesThenRefusesThatDatagram) {
  UdpReceiver receiver = OpenReceiver();
  g_refused_mark = 1;
  g_refused_errno = ENOBUFS;
  g_refusals = 0;
  SocketCalls calls;
  calls.sendmmsg = RefuseMarked;
  UdpSender sender = OpenSender(receiver.port(), /*gso=*/false, calls);
  const std::vector<std::byte> bytes = Numbered(3, 1400);
  const iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
  ASSERT_TRUE(sender.Send({&iov, 1}, 1400).ok());
  EXPECT_GT(g_refusals, 1);
  EXPECT_LE(g_refusals, 100);
  EXPECT_EQ(sender.stats().no_buffer, static_cast<uint64_t>(g_refusals - 1));
  EXPECT_EQ(sender.stats().refusals.of(ENOBUFS), 1u);
  EXPECT_EQ(Arrived(receiver, 2), (std::vector<int>{0, 2}));
}

TEST(UdpSocket, AnErrorAfterWhichTheSocketCannotSendIsReturnedAndEndsTheCall) {
  for (const int e : {EBADF, ENOTSOCK, EFAULT, EINVAL, EMSGSIZE, ENOTCONN}) {
    UdpReceiver receiver = OpenReceiver();
    g_refused_mark = 2;
    g_refused_errno = e;
    SocketCalls calls;
    calls.sendmmsg = RefuseMarked;
    UdpSender sender = OpenSender(receiver.port(), /*gso=*/false, calls);
    const std::vector<std::byte> bytes = Numbered(5, 1400);
    const iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
    const IoStatus status = sender.Send({&iov, 1}, 1400);
    EXPECT_EQ(status.error, e) << ErrnoName(e);
    EXPECT_EQ(sender.stats().datagrams, 2u) << ErrnoName(e) << ": those before it went out";
    EXPECT_EQ(sender.stats().refusals.total(), 0u) << ErrnoName(e);
  }
}

int BrokenReceive(int, mmsghdr*, unsigned, int, timespec*) {
  errno = EBADF;
  return -1;
}

TEST(UdpSocket, AHardReceiveErrorIsReturnedNotHidden) {
  UdpReceiverOptions o;
  o.bind_address = "127.0.0.1";
  o.calls.recvmmsg = BrokenReceive;
  auto r = UdpReceiver::Open(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const BatchResult b = r->ReceiveBatch();
  EXPECT_EQ(b.messages, 0);
  EXPECT_EQ(b.status.error, EBADF);
  EXPECT_EQ(b.status.message(), std::strerror(EBADF));
}

// Sends `count` datagrams of 4,000 bytes to the receiver, each starting
// with its index, and waits (bounded) until all are queued.
void Queue(UdpReceiver& r, uint32_t count) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(r.port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<std::byte> d(4000, std::byte{0x5a});
  for (uint32_t i = 0; i < count; ++i) {
    std::memcpy(d.data(), &i, sizeof i);
    ASSERT_EQ(sendto(fd, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
              static_cast<ssize_t>(d.size()));
  }
  close(fd);
  size_t last = 0;
  for (int i = 0; i < 500 && (r.QueuedBytes() == 0 || r.QueuedBytes() != last); ++i) {
    last = r.QueuedBytes();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// A receiver far behind throws away the oldest of its queue, unread, about
// as much as it is told; what is left arrives whole and in order.
TEST(UdpReceiverTest, DiscardThrowsAwayTheOldestAboutAsMuchAsAsked) {
  UdpReceiver r = OpenReceiver(/*gro=*/false);
  Queue(r, 100);
  const size_t queued = r.QueuedBytes();
  ASSERT_GT(queued, 100u * 4000) << "the kernel charges more than the payload";
  r.Discard(40 * 4000);
  const uint64_t thrown = r.stats().discarded_bytes / 4000;
  EXPECT_EQ(r.stats().discarded_bytes % 4000, 0u);
  EXPECT_GE(thrown, 40u);
  EXPECT_LT(thrown, 40u + r.batch()) << "a batch more at most";
  EXPECT_EQ(r.stats().catch_ups, 1u);
  EXPECT_EQ(r.stats().datagrams, 0u) << "nothing thrown away was handed on";
  const auto rest = Drain(r, 100 - thrown);
  ASSERT_EQ(rest.size(), 100 - thrown);
  for (size_t k = 0; k < rest.size(); ++k) {
    uint32_t index = 0;
    std::memcpy(&index, rest[k].data(), sizeof index);
    EXPECT_EQ(index, thrown + k);
    EXPECT_EQ(rest[k].size(), 4000u);
  }
}

TEST(UdpReceiverTest, DiscardToNothingLeavesTheSocketReceivingAsBefore) {
  UdpReceiver r = OpenReceiver();
  Queue(r, 20);
  r.Discard(size_t{1} << 30);  // more than waits: it stops when the queue is empty
  EXPECT_EQ(r.QueuedBytes(), 0u);
  EXPECT_EQ(r.stats().discarded_bytes, 20u * 4000);
  Queue(r, 1);
  const auto got = Drain(r, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].size(), 4000u);
}

}  // namespace
}  // namespace tilestream
