// A receiver's requests for what it lost, as they go out: what the
// LossTracker has due now, written as Generic NACKs (RFC 4585, up to
// kMaxNackBatch sequence numbers each) and each sent nack_copies() times
// (docs/decisions.md, "A request asked again goes twice"). The tile
// receiver sends them on its socket, the wall's simulation over its paths:
// one loop for both. No allocation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/receive/loss_tracker.h"
#include "common/wire/rtcp_feedback.h"

namespace tilestream {

inline constexpr size_t kMaxNackBatch = 256;  // sequence numbers per NACK

// Takes what is due (always: what is past its window is given up) and,
// when the stream's SSRC is known, calls send(datagram) for each NACK.
template <class Send>
void AskForLost(LossTracker& loss, uint32_t receiver_ssrc, std::optional<uint32_t> media_ssrc,
                Send&& send) {
  std::array<uint16_t, kMaxNackBatch> due;
  std::array<std::byte, kNackHeaderSize + kMaxNackBatch * kNackEntrySize> packet;
  const size_t n = loss.TakeDue(due);
  if (!media_ssrc) return;  // nobody to ask yet: no packet accepted
  for (size_t done = 0; done < n;) {
    size_t taken = 0;
    const size_t size =
        WriteGenericNack(receiver_ssrc, *media_ssrc, {due.data() + done, n - done}, packet, &taken);
    for (int copy = 0; copy < loss.nack_copies(); ++copy) {
      send(std::span<const std::byte>(packet.data(), size));
      loss.CountNack();
    }
    done += taken;
  }
}

}  // namespace tilestream
