// Real-time scheduling for a thread that sleeps between short bursts of
// work and must not queue behind busier threads when it wakes: the
// streamer's frame clock (docs/decisions.md, "The frame clock runs at
// SCHED_FIFO").
#pragma once

#include "common/base/result.h"

namespace tilestream {

// Puts the calling thread (only it: threads it starts later inherit it, so
// call it after starting them) under SCHED_FIFO at `priority` (1-99). Needs
// root, CAP_SYS_NICE or an RLIMIT_RTPRIO of at least `priority`; the
// status says why not. The kernel's real-time throttling (by default 95%
// of each second) still bounds what such a thread can take.
Status RunCallingThreadRealTime(int priority);

}  // namespace tilestream
