#include "testbed/path_model.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>

namespace tilestream {
namespace {

constexpr int64_t kMaxDurationNs = 10'000'000'000;  // 10 s

// A non-negative number and what follows it.
bool SplitNumber(std::string_view text, double* number, std::string_view* unit) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, *number);
  if (ec != std::errc() || !std::isfinite(*number) || *number < 0) return false;
  *unit = std::string_view(p, static_cast<size_t>(end - p));
  return true;
}

struct Unit {
  std::string_view name;
  double scale;
};

// A number and one of `units` after it, scaled.
bool ParseScaled(std::string_view text, std::initializer_list<Unit> units, double* out) {
  double v = 0;
  std::string_view unit;
  if (!SplitNumber(text, &v, &unit)) return false;
  for (const Unit& u : units)
    if (unit == u.name) {
      *out = v * u.scale;
      return true;
    }
  return false;
}

bool ParseDuration(std::string_view text, int64_t* ns) {
  double v = 0;
  if (!ParseScaled(text, {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}, &v) ||
      v > kMaxDurationNs)
    return false;
  *ns = static_cast<int64_t>(std::llround(v));
  return true;
}

bool ParseShare(std::string_view text, double* share) {
  double v = 0;
  std::string_view unit;
  if (!SplitNumber(text, &v, &unit)) return false;
  if (unit == "%")
    v /= 100;
  else if (!unit.empty())
    return false;
  *share = v;
  return v <= 1;
}

bool ParseRate(std::string_view text, double* bps) {
  return ParseScaled(text, {{"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}}, bps) &&
         *bps > 0 && *bps <= 1e12;
}

bool ParseCount(std::string_view text, uint64_t limit, uint64_t* out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && p == text.data() + text.size() && *out <= limit;
}

Status Apply(std::string_view key, std::string_view value, PathSpec* s) {
  bool ok = false;
  uint64_t n = 0;
  if (key == "rtt" && (ok = ParseDuration(value, &s->delay_ns))) s->delay_ns /= 2;
  if (key == "delay") ok = ParseDuration(value, &s->delay_ns);
  if (key == "jitter") ok = ParseDuration(value, &s->jitter_ns);
  if (key == "jitter_period")
    ok = ParseDuration(value, &s->jitter_period_ns) && s->jitter_period_ns > 0;
  if (key == "loss") ok = ParseShare(value, &s->loss);
  if (key == "tcp_loss" && (ok = value == "yes" || value == "no")) s->tcp_loss = value == "yes";
  if (key == "burst" && (ok = ParseCount(value, 1'000'000, &n)))
    s->burst = static_cast<uint32_t>(n);
  if (key == "burst_at") ok = ParseDuration(value, &s->burst_at_ns);
  if (key == "burst_to") {
    in_addr a{};
    ok = value.size() < 16 && inet_pton(AF_INET, std::string(value).c_str(), &a) == 1;
    if (ok) s->burst_to = ntohl(a.s_addr);
  }
  if (key == "reorder") ok = ParseShare(value, &s->reorder);
  if (key == "reorder_by") ok = ParseDuration(value, &s->reorder_by_ns) && s->reorder_by_ns > 0;
  if (key == "rate") ok = ParseRate(value, &s->rate_bps);
  if (key == "seed") ok = ParseCount(value, UINT64_MAX, &s->seed);
  if (ok) return Status::Ok();
  return Status::InvalidArgument(fmt::format("path: bad {} '{}'", key, value.substr(0, 40)));
}

}  // namespace

Result<PathSpec> ParsePathSpec(std::string_view text) {
  PathSpec s;
  if (text.size() > 1024) return Status::InvalidArgument("path: over 1024 characters");
  while (!text.empty()) {
    const size_t comma = std::min(text.find(','), text.size());
    const std::string_view item = text.substr(0, comma);
    text.remove_prefix(std::min(comma + 1, text.size()));
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return Status::InvalidArgument(
          fmt::format("path: '{}' is not key=value", item.substr(0, 40)));
    if (Status st = Apply(item.substr(0, eq), item.substr(eq + 1), &s); !st.ok()) return st;
  }
  return s;
}

std::string PathSpec::Describe() const {
  std::string d =
      fmt::format("delay {:.1f} ms each way (rtt {:.1f} ms)", delay_ns / 1e6, 2 * delay_ns / 1e6);
  if (jitter_ns)
    d += fmt::format(", jitter {:.1f} ms (normal, cut at 3x, drawn every {:.1f} ms, in order)",
                     jitter_ns / 1e6, std::max(jitter_period_ns, 6 * jitter_ns) / 1e6);
  if (loss > 0) d += fmt::format(", loss {:.3g}% of UDP{}", loss * 100, tcp_loss ? " and TCP" : "");
  if (burst) d += fmt::format(", a burst of {} at {:.1f} s", burst, burst_at_ns / 1e9);
  if (reorder > 0)
    d += fmt::format(", {:.3g}% reordered by up to {:.2f} ms", reorder * 100, reorder_by_ns / 1e6);
  if (rate_bps > 0) d += fmt::format(", rate cap {:.3g} Gbit/s", rate_bps / 1e9);
  return d;
}

PathModel::PathModel(const PathSpec& spec, int64_t start_ns)
    : spec_(spec), start_ns_(start_ns), burst_left_(spec.burst), random_(spec.seed) {}

// Normal samples drawn every period and blended between: the weights are
// normalised so that the blend is normal of the same deviation at every
// moment, and a period of 6 deviations or more keeps the delay from
// falling faster than time passes (packets in order are then never held
// back by the one before them).
int64_t PathModel::Delay(Way& w, int64_t now_ns) {
  if (spec_.jitter_ns == 0) return spec_.delay_ns;
  const int64_t period = std::max(spec_.jitter_period_ns, 6 * spec_.jitter_ns);
  auto draw = [&] { return std::clamp(normal_(random_), -3.0, 3.0); };
  if (w.period_start_ns == 0 || now_ns - w.period_start_ns >= 2 * period) {
    w.from = draw(), w.to = draw();
    w.period_start_ns = now_ns;
  } else if (now_ns - w.period_start_ns >= period) {
    w.from = w.to, w.to = draw();
    w.period_start_ns += period;
  }
  const double t = static_cast<double>(now_ns - w.period_start_ns) / static_cast<double>(period);
  const double z = ((1 - t) * w.from + t * w.to) / std::sqrt((1 - t) * (1 - t) + t * t);
  const auto jitter =
      static_cast<int64_t>(std::clamp(z, -3.0, 3.0) * static_cast<double>(spec_.jitter_ns));
  return std::max<int64_t>(0, spec_.delay_ns + jitter);
}

bool PathModel::Lose(const PacketInfo& p, Way& w) {
  if (p.udp && p.direction == Direction::kOut && burst_left_ > 0 &&
      now_ns_ >= start_ns_ + spec_.burst_at_ns &&
      (!spec_.burst_to || *spec_.burst_to == p.destination)) {
    --burst_left_;
    ++w.counts.burst_lost;
    return true;
  }
  if (spec_.loss > 0 && (p.udp || spec_.tcp_loss) && unit_(random_) < spec_.loss) {
    ++w.counts.lost;
    return true;
  }
  return false;
}

PathVerdict PathModel::Judge(const PacketInfo& p, int64_t now_ns) {
  Way& w = way_[static_cast<int>(p.direction)];
  ++w.counts.packets;
  w.counts.bytes += p.bytes;
  now_ns_ = now_ns;
  if (Lose(p, w)) return {.drop = true};
  int64_t release = now_ns + Delay(w, now_ns);
  if (spec_.rate_bps > 0 && p.direction == Direction::kOut)  // after the packet before it
    release =
        std::max(release, w.last_release_ns + static_cast<int64_t>(p.bytes * 8e9 / spec_.rate_bps));
  if (p.udp && spec_.reorder > 0 && unit_(random_) < spec_.reorder) {
    ++w.counts.reordered;
    const auto extra = static_cast<int64_t>(std::ceil(unit_(random_) * spec_.reorder_by_ns));
    return {.reordered = true,
            .release_ns = std::max(release, w.last_release_ns) + std::max<int64_t>(1, extra)};
  }
  release = std::max(release, w.last_release_ns);
  w.last_release_ns = release;
  return {.release_ns = release};
}

}  // namespace tilestream
