// TickWait: how a tile rank waits for the coordinator's next tick, as a
// state machine with no MPI and no clock of its own (the rank tells it
// what happened and when), so each rule below is a unit test.
//
// The schedule. The coordinator's ticks keep one (tick k at start + k x
// interval) but each may come late; the earliest arrival relative to it is
// the best estimate, so a tick that came late does not push the next one's
// expected time back (the next one comes on time, right after it).
//
// The wait, never past the next heartbeat (the caller's deadline):
// * With the doorbell armed (streamer/doorbell.h; each tick says whether):
//   until it rings, or until the tick is kLateTickNs overdue. After a ring
//   for a tick not taken yet, or once overdue with no ring, MPI is probed
//   briefly, backing off from 50 us to 2 ms (for 20 ms after a ring, 4 ms
//   when overdue): the ring can come before the message does (Open MPI's
//   TCP transport, between servers and to spawned ranks, reads its sockets
//   only every so many progress calls). Then until the next ring or
//   heartbeat: paused, no tick comes.
// * Without it: until the tick is due, in one sleep (the coordinator sends
//   on time), then probing at 50 us backing off to 2 ms while none comes
//   (paused, or before the go). Polling every 100-500 us took about 100
//   wake-ups a tick; this costs about 500 a second while paused.
//
// Rings that never come (a firewall): after kUnrungTicks ticks in a row
// taken with no ring though the rank slept for them, the doorbell is
// given up and the rank polls.
#pragma once

#include <cstdint>

#include "streamer/messages.h"

namespace tilestream {

class TickWait {
 public:
  static constexpr int64_t kPollNs = 50'000, kMaxPollNs = 2'000'000;
  static constexpr int64_t kLateTickNs = 10'000'000;
  static constexpr int64_t kRingLookNs = 20'000'000, kLateLookNs = 4'000'000;
  static constexpr int kUnrungTicks = 10;

  // `has_doorbell`: the rank listens on one (the coordinator arms it).
  explicit TickWait(bool has_doorbell) : has_doorbell_(has_doorbell) {}

  // How long to sleep from `now` before probing MPI again; `heartbeat_ns`
  // is the latest wake-up the caller allows (its next statistics).
  int64_t WaitNs(int64_t now, int64_t heartbeat_ns) const;
  // The doorbell rang with this sequence (0: a datagram that was no ring).
  void Rang(uint64_t sequence, int64_t now);
  // A wait ended by its timer, with no ring.
  void Slept(int64_t now);
  // The tick (the newest of those waiting) was taken at `now`. Returns
  // true once, when the doorbell is given up.
  bool Took(const TickMessage& tick, int64_t now);

  // Of `plays` play ticks taken at once at `taken` (the newest due at
  // `newest_due`, each older one an interval before it): those due while
  // the rank was already waiting (since `waiting_since`) and yet taken over
  // a quarter interval late. Skipped ticks a rank was busy for do not
  // count; these say a tick came, or was seen, late. At most 64.
  static uint64_t SeenLate(int64_t waiting_since, int64_t taken, int64_t newest_due,
                           int64_t interval, uint64_t plays);

  bool doorbell() const { return armed_; }              // wait on it (ppoll) too
  int64_t tick_due_ns() const { return tick_due_ns_; }  // the taken tick's
  int64_t next_tick_due_ns() const { return next_tick_due_ns_; }

 private:
  void Expect(const TickMessage& tick, int64_t now);
  void Look(int64_t now, int64_t ns) {
    look_from_ns_ = now;
    look_until_ns_ = now + ns;
  }

  bool has_doorbell_;
  bool armed_ = false;     // the coordinator rings it (the last tick said so)
  bool deaf_ = false;      // rings did not come: polling
  uint64_t sequence_ = 0;  // of the last tick taken
  int64_t look_from_ns_ = 0, look_until_ns_ = 0;  // probing briefly
  bool late_looked_ = false;                      // looked for this tick once overdue
  bool slept_ = false, rung_ = false;             // waiting for this tick
  int unrung_ticks_ = 0;
  int64_t tick_due_ns_ = 0, next_tick_due_ns_ = 0;
  bool have_schedule_ = false;
  int64_t schedule_start_ns_ = 0;  // the coordinator's tick 0, as seen here
};

}  // namespace tilestream
