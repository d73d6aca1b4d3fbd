// How a send's errno is taken (common/net/send_errors.h): retried, a
// refusal of what the call carried, or the end of the socket.
#include "common/net/send_errors.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace tilestream {
namespace {

TEST(SendErrors, ASignalIsRetried) { EXPECT_EQ(ClassifySendError(EINTR), SendErrorClass::kRetry); }

TEST(SendErrors, AFullBufferIsRetriedAsAFullBuffer) {
  for (int e : {EAGAIN, EWOULDBLOCK, ENOBUFS, ENOMEM})
    EXPECT_EQ(ClassifySendError(e), SendErrorClass::kFullBuffer) << ErrnoName(e);
}

TEST(SendErrors, AFirewallARouteOrAReceiverGoneRefuseOneDatagram) {
  for (int e : {EPERM, EACCES, ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ENETDOWN, EHOSTDOWN,
                EADDRNOTAVAIL, EIO, ENONET})
    EXPECT_EQ(ClassifySendError(e), SendErrorClass::kRefused) << ErrnoName(e);
}

TEST(SendErrors, AnErrnoNobodyForesawRefusesOneDatagramNotTheSocket) {
  EXPECT_EQ(ClassifySendError(12345), SendErrorClass::kRefused);
  EXPECT_EQ(ClassifySendError(EKEYEXPIRED), SendErrorClass::kRefused);
}

TEST(SendErrors, OnlyASocketThatCanNeverSendAgainIsHard) {
  for (int e : {EBADF, ENOTSOCK, EFAULT, EINVAL, EMSGSIZE, EDESTADDRREQ, ENOTCONN, EISCONN,
                EAFNOSUPPORT, EOPNOTSUPP, EPIPE})
    EXPECT_EQ(ClassifySendError(e), SendErrorClass::kHard) << ErrnoName(e);
}

TEST(SendErrors, RefusalsAreCountedByErrnoWithTheRestUnderOther) {
  RefusalCounts c;
  c.Add(EPERM, 7);
  c.Add(EPERM, 1);
  c.Add(ECONNREFUSED, 1);
  c.Add(EKEYEXPIRED, 2);
  c.Add(12345, 1);
  EXPECT_EQ(c.of(EPERM), 8u);
  EXPECT_EQ(c.of(ECONNREFUSED), 1u);
  EXPECT_EQ(c.at(RefusalCounts::kSlots - 1), 3u);
  EXPECT_EQ(c.total(), 12u);
  EXPECT_EQ(c.Text(), "EPERM 8, ECONNREFUSED 1, other 3");
  EXPECT_EQ(RefusalCounts{}.Text(), "");
}

TEST(SendErrors, EverySlotHasANameAndTheDifferenceOfTwoCountsIsPerSlot) {
  for (size_t k = 0; k + 1 < RefusalCounts::kSlots; ++k) {
    EXPECT_EQ(RefusalCounts::Slot(RefusalCounts::SlotErrno(k)), k);
    EXPECT_STREQ(RefusalCounts::SlotName(k), ErrnoName(RefusalCounts::SlotErrno(k)));
  }
  EXPECT_STREQ(RefusalCounts::SlotName(RefusalCounts::kSlots - 1), "other");
  RefusalCounts now, before;
  now.Add(EPERM, 10);
  now.Add(ENETDOWN, 4);
  before.Add(EPERM, 3);
  now -= before;
  EXPECT_EQ(now.Text(), "EPERM 7, ENETDOWN 4");
}

TEST(SendErrors, ErrnoNamesAreTheCLibrarysOrSayUnknown) {
  EXPECT_STREQ(ErrnoName(EPERM), "EPERM");
  EXPECT_STREQ(ErrnoName(EHOSTUNREACH), "EHOSTUNREACH");
  EXPECT_STREQ(ErrnoName(12345), "errno unknown");
}

}  // namespace
}  // namespace tilestream
