// Which ticks the wall sends when its senders cannot keep up: all of them
// while they can; otherwise the same evenly spread share on every tile, so
// that the ticks the wall does send arrive whole (docs/decisions.md, "An
// overloaded wall drops the same ticks on every tile").
//
// A tile rank that is late takes the newest tick and skips the ones it
// missed, each rank on its own; a tick is shown only if every tile has it,
// so on the 2-core VM about 11% of tile frames skipped that way left under
// 10% of the ticks shown. Dropping ticks for the whole wall at the coordinator keeps
// the rest whole, as a video player drops frames.
//
// The signal is the senders' own: of the ticks their tiles were given
// since the last look, the share they skipped (their statistics, about a
// second apart). A tick is shown only if every tile has it, so what counts
// is the share of ticks that lost a tile: 1 - (1 - skipped)^tiles were the
// tiles' skips independent (1.4% of 15 tiles' frames is 19% of the ticks;
// a stall that hits every tile at once counts more than it costs). At 10%
// or more of the ticks in two readings in a row the share kept is cut to
// what the senders managed in the last, less 2%: the cut follows their
// throughput, not the ticks lost, which overstate it. One reading's skips
// are a moment's (the show starting, a seek, a stalled disk), and a cut
// for them would drop ticks long after (each 2% back takes three
// readings). A second's worth of readings after a cut is ignored, since it
// may still hold skips from before. After 3 readings in a row under 2% of
// the ticks it is raised by 2% of all ticks again, up to all; in between
// it holds: a sender skips now and then on a busy machine whatever the
// load, and a cut for that would not end it.
//
// Dropping ticks lowers the average rate but not the rate a frame is sent
// at: each frame would still go out within one interval. So when a tick is
// sent, the ticks shed after it are decided at once (ticks_to_next), and
// its frames are paced over all of that time; a change of share applies
// from the next tick sent. Plain logic; not thread-safe.
#pragma once

#include <cstdint>

namespace tilestream {

class TickShedder {
 public:
  // Of the ticks that lost a tile: cut at, and quiet under.
  static constexpr double kCutAt = 0.10, kQuietUnder = 0.02;
  static constexpr double kMargin = 0.02, kRaiseStep = 0.02, kMinKeep = 0.25;
  static constexpr int kBusyLooksToCut = 2, kQuietLooksToRaise = 3, kLooksIgnoredAfterCut = 1;

  // Whether the next tick that would send a frame is sent.
  bool Keep();
  // After Keep() said yes: in how many ticks the next one is sent (1 while
  // none are shed), as far as the share now goes.
  uint32_t ticks_to_next() const { return pending_shed_ + 1; }
  // The senders' counts since the last look, summed over `tiles` tiles:
  // ticks given to their tiles that were sent, and that were skipped late.
  // About once a second.
  void Look(uint64_t sent, uint64_t skipped, uint32_t tiles = 1);

  // The most the wall can send (kMinKeep..1), whatever the senders
  // manage: the share of the wall's rate its NICs carry while some are down
  // (docs/streamer.md, "NIC failover"). keep() never exceeds it; when it
  // rises, a share it held down follows at once.
  void SetCeiling(double ceiling);
  double ceiling() const { return ceiling_; }

  double keep() const { return keep_; }
  uint64_t shed() const { return shed_; }
  uint64_t cuts() const { return cuts_; }

 private:
  double keep_ = 1.0;
  double ceiling_ = 1.0;
  double credit_ = 0;          // Bresenham: ticks owed, sent when it reaches 1
  uint32_t pending_shed_ = 0;  // ticks already decided to be shed
  uint64_t shed_ = 0, cuts_ = 0;
  int busy_looks_ = 0, quiet_looks_ = 0, ignore_looks_ = 0;
};

}  // namespace tilestream
