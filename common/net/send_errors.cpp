#include "common/net/send_errors.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace tilestream {
namespace {

struct NamedErrno {
  int error;
  const char* name;
};

// Slot order; "other" follows the last.
constexpr std::array<NamedErrno, RefusalCounts::kSlots - 1> kNamed{{
    {EPERM, "EPERM"},
    {EACCES, "EACCES"},
    {ECONNREFUSED, "ECONNREFUSED"},
    {EHOSTUNREACH, "EHOSTUNREACH"},
    {ENETUNREACH, "ENETUNREACH"},
    {ENETDOWN, "ENETDOWN"},
    {EHOSTDOWN, "EHOSTDOWN"},
    {EADDRNOTAVAIL, "EADDRNOTAVAIL"},
    {ENOBUFS, "ENOBUFS"},
    {EAGAIN, "EAGAIN"},
    {ENOMEM, "ENOMEM"},
}};

}  // namespace

SendErrorClass ClassifySendError(int e) {
  switch (e) {
    case EINTR:
      return SendErrorClass::kRetry;
    case EAGAIN:
    case ENOBUFS:
    case ENOMEM:
      return SendErrorClass::kFullBuffer;
    case EBADF:
    case ENOTSOCK:
    case EFAULT:
    case EINVAL:
    case EMSGSIZE:
    case EDESTADDRREQ:
    case ENOTCONN:
    case EISCONN:
    case EAFNOSUPPORT:
    case EOPNOTSUPP:
    case EPIPE:
      return SendErrorClass::kHard;
    default:
      return SendErrorClass::kRefused;
  }
}

const char* ErrnoName(int e) {
  if (const char* name = strerrorname_np(e)) return name;
  return "errno unknown";
}

size_t RefusalCounts::Slot(int e) {
  for (size_t s = 0; s < kNamed.size(); ++s)
    if (kNamed[s].error == e) return s;
  return kSlots - 1;
}

const char* RefusalCounts::SlotName(size_t slot) {
  return slot < kNamed.size() ? kNamed[slot].name : "other";
}

int RefusalCounts::SlotErrno(size_t slot) { return slot < kNamed.size() ? kNamed[slot].error : 0; }

uint64_t RefusalCounts::total() const {
  uint64_t sum = 0;
  for (uint64_t c : counts_) sum += c;
  return sum;
}

std::string RefusalCounts::Text() const {
  std::string text;
  for (size_t k = 0; k < kSlots; ++k)
    if (counts_[k] > 0)
      text += fmt::format("{}{} {}", text.empty() ? "" : ", ", SlotName(k), counts_[k]);
  return text;
}

RefusalCounts& RefusalCounts::operator-=(const RefusalCounts& before) {
  for (size_t k = 0; k < kSlots; ++k) counts_[k] -= before.counts_[k];
  return *this;
}

}  // namespace tilestream
