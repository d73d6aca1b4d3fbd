// What a failed send means (docs/decisions.md, "A send the kernel
// refuses"): the errno of a send is sorted into a class that says whether
// to try again, drop what the call carried, or give the socket up; and the
// datagrams dropped are counted per errno in fixed slots, so the hot path
// allocates nothing and a report can name each kind.
//
//   retry    EINTR; EAGAIN/ENOBUFS/ENOMEM a bounded number of times (a full
//            buffer that stays full is then a refusal of what it carried)
//   refused  this datagram, not the socket: EPERM and EACCES (a firewall
//            rule, a full conntrack table), ECONNREFUSED (ICMP port
//            unreachable from an earlier datagram), EHOSTUNREACH,
//            ENETUNREACH, ENETDOWN, EHOSTDOWN, EADDRNOTAVAIL (a route or an
//            address that went away), and any errno not listed as hard
//   hard     the socket can never send again: EBADF, ENOTSOCK, EFAULT,
//            EINVAL, EMSGSIZE, EDESTADDRREQ, ENOTCONN, EISCONN,
//            EAFNOSUPPORT, EOPNOTSUPP, EPIPE
//
// An unknown errno is a refusal, not a hard error: a wall plays on through
// what nobody foresaw, and the count names it. Plain data; not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tilestream {

enum class SendErrorClass : uint8_t { kRetry = 0, kFullBuffer = 1, kRefused = 2, kHard = 3 };

SendErrorClass ClassifySendError(int e);
// "EPERM"; "errno unknown" for one the C library cannot name.
const char* ErrnoName(int e);

// Datagrams dropped, by the errno that dropped them.
class RefusalCounts {
 public:
  // The errnos with a slot of their own; the last slot holds every other.
  static constexpr size_t kSlots = 12;
  static size_t Slot(int e);
  // "EPERM", ..., "other".
  static const char* SlotName(size_t slot);
  // The errno of a slot (0 for "other").
  static int SlotErrno(size_t slot);

  void Add(int e, uint64_t datagrams) { counts_[Slot(e)] += datagrams; }
  uint64_t at(size_t slot) const { return counts_[slot]; }
  uint64_t of(int e) const { return counts_[Slot(e)]; }
  uint64_t total() const;
  // "EPERM 12, ECONNREFUSED 1"; "" when none. Allocates: for reports.
  std::string Text() const;
  RefusalCounts& operator-=(const RefusalCounts& before);

 private:
  std::array<uint64_t, kSlots> counts_{};
};

}  // namespace tilestream
