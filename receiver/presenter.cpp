#include "receiver/presenter.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/base/clock.h"

namespace tilestream {
namespace {

// Repaint the window now and then even with nothing new (exposed windows,
// the overlay); no faster with no vsync (Xvfb, some drivers).
constexpr int64_t kRepaintNs = 100 * kNsPerMs;

}  // namespace

Presenter::Presenter(NodeParts* parts, bool overlay, int sync_priority)
    : p_(*parts),
      overlay_(overlay),
      overlay_text_(parts->tiles.size()),
      got_(parts->tiles.size()),
      shown_(parts->tiles.size(), nullptr),
      last_draw_ns_(MonotonicNs()) {
  if (p_.sync && sync_priority > 0) RaisePriority(sync_priority);
}

void Presenter::RaisePriority(int priority) {
  priority_.emplace(priority, MonotonicNs());
  counts_.real_time = priority_->real_time();
  if (counts_.real_time) return;
  spdlog::info("the swap sync's decisions are acted on at normal priority ({})",
               priority_->status().message());
  priority_.reset();
}

bool Presenter::Turn() {
  if (p_.sync) {
    events_.clear();
    // Headless, nothing but the sync's lines needs the loop: wake for them
    // (or stop, within 100 ms), not 200 times a second.
    WaitForSync(WaitMs(p_.display ? 2 : 100));
    for (const SyncEvent& e : events_)
      if (const std::optional<SyncEvent> now = schedule_.Take(e, RealtimeNs())) Present(*now);
    counts_.late_decisions = schedule_.late();
    counts_.late_decision_max_ns = schedule_.late_max_ns();
    PresentDue();
  }
  if (p_.display && !HandleWindowEvents()) return false;
  if (p_.sync && p_.sync->subscribed()) {
    // The coordinator decides what is shown; repaint now and then only.
    if (p_.display && DueForRepaint()) Repaint();
  } else if (p_.display) {
    ShowNewFrames();
  } else if (!p_.sync) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void Presenter::SetOverlayText(size_t k, std::string text) {
  overlay_text_[k] = std::move(text);
  if (p_.display && overlay_) p_.display->SetOverlay(k, overlay_text_[k]);
}

// Waits for input no longer than until just before the next timed decision.
// Leading, no longer than until the next tick is due to be decided
// (rounded up: a wait cut short of it wakes for nothing).
int Presenter::WaitMs(int most_ms) const {
  const int64_t now = RealtimeNs();
  int64_t ms = most_ms;
  if (schedule_.next_at_ns() != PresentSchedule::kNever)
    ms = std::min(ms, (schedule_.next_at_ns() - now - kSleepAheadNs) / kNsPerMs);
  if (const int64_t lead = p_.sync->lead_due_ns(); lead != INT64_MAX)
    ms = std::min(ms, (lead - now + kNsPerMs - 1) / kNsPerMs);
  return static_cast<int>(std::max<int64_t>(ms, 0));
}

// Shows the timed decisions due within kSleepAheadNs, each at its moment
// to the clock's precision (a sleep, not the input wait's milliseconds).
void Presenter::PresentDue() {
  while (schedule_.next_at_ns() != PresentSchedule::kNever &&
         schedule_.next_at_ns() - RealtimeNs() < kSleepAheadNs) {
    const int64_t at = schedule_.next_at_ns();
    const timespec ts{static_cast<time_t>(at / kNsPerSecond), static_cast<long>(at % kNsPerSecond)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
    counts_.woke_late_max_ns = std::max(counts_.woke_late_max_ns, RealtimeNs() - at);
    Present(schedule_.TakeNext());
  }
}

// The wait, apart from the work, for the budget of real-time work.
void Presenter::WaitForSync(int timeout_ms) {
  if (priority_) priority_->Sleeping(MonotonicNs());
  const bool ready = p_.sync->WaitForInput(timeout_ms);
  if (priority_) {
    priority_->Woke(MonotonicNs());
    counts_.windows_over_budget = priority_->windows_over_budget();
  }
  if (ready || p_.sync->lead_due_ns() <= RealtimeNs()) p_.sync->Read(&events_);
}

// Shows the released tick on every tile of the node at once, and says when.
void Presenter::Present(const SyncEvent& e) {
  if (e.decision == SyncDecision::kSkip) {
    ++counts_.skipped;
    return;
  }
  const bool partial = e.decision == SyncDecision::kPartial;
  ++(partial ? counts_.partial : counts_.presented);
  bool any = false;
  for (size_t i = 0; i < p_.tiles.size(); ++i) {
    auto f = p_.tiles[i]->TakeFrame(e.timestamp, partial);
    got_[i] = f.has_value();
    any = any || got_[i];
    if (!got_[i]) {
      ++counts_.missing;
      continue;
    }
    shown_[i] = f->pixels;
    if (p_.display) p_.display->Upload(i, f->pixels);
  }
  if (!any) return;
  counts_.last_tick = e.tick;
  if (p_.display) {
    p_.display->Show();
    last_draw_ns_ = MonotonicNs();
    ++counts_.window_updates;
  }
  const int64_t now = RealtimeNs();
  for (size_t i = 0; i < p_.tiles.size(); ++i) {
    if (!got_[i]) continue;
    p_.sync->ReportShown(p_.indices[i], e.timestamp, now);
    if (p_.present_log)
      fmt::print(p_.present_log.get(), "{} {} {}\n", p_.indices[i], e.timestamp, now);
  }
  if (p_.present_log) std::fflush(p_.present_log.get());
}

bool Presenter::HandleWindowEvents() {
  const Renderer::Events ev = p_.display->PollEvents();
  if (ev.quit) return false;
  for (const std::string& command : ev.commands)
    if (p_.sync) p_.sync->SendCommand(command);
  if (ev.toggle_overlay) {
    overlay_ = !overlay_;
    for (size_t i = 0; i < p_.tiles.size(); ++i)
      p_.display->SetOverlay(i, overlay_ ? overlay_text_[i] : "");
    last_draw_ns_ = 0;  // repaint now
  }
  return true;
}

// Without swap sync: each tile's newest frame as it comes.
void Presenter::ShowNewFrames() {
  bool fresh = false;
  for (size_t i = 0; i < p_.tiles.size(); ++i) {
    if (auto f = p_.tiles[i]->TakeReady()) {
      shown_[i] = f->pixels;
      p_.display->Upload(i, f->pixels);
      fresh = true;
    }
  }
  if (fresh || DueForRepaint()) {
    Repaint();  // vsync paces the loop where the display has it
    counts_.window_updates += fresh;
  } else if (!p_.sync) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void Presenter::Repaint() {
  p_.display->Show();
  last_draw_ns_ = MonotonicNs();
}

bool Presenter::DueForRepaint() const { return MonotonicNs() - last_draw_ns_ > kRepaintNs; }

}  // namespace tilestream
