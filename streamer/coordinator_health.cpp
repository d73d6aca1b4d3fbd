// What the tile ranks report to the coordinator, and which of them are
// alive (streamer/coordinator_impl.h).
#include <cstring>

#include "streamer/coordinator_impl.h"

namespace tilestream {
namespace {

constexpr int64_t kTileSilenceNs = 3 * kSecond / 2;  // tiles report every 250 ms
// A silent tile is looked for this long more (rank_messages.h, MessageWithin):
// 1.6 s in all, before mpirun's own abort at 2 s.
constexpr int kConfirmSilenceMs = 100;

}  // namespace

void Coordinator::Drain() {
  DrainThumbnails();
  movies_.DrainReports();
  TileStats s;
  int from = 0;
  while (TryReceive(comm_.comm, MPI_ANY_SOURCE, kTagStats, &s, &from)) {
    const uint32_t t = s.tile;
    if (t >= tiles_ || plan_.rank(t) != from) continue;  // not from its rank
    s.error[sizeof s.error - 1] = '\0';
    if (s.error[0] != '\0' && latest_[t].error[0] == '\0')
      spdlog::error("tile {}: {}", TileName(c_, t), s.error);
    latest_[t] = s;
    heard_ns_[t] = clock_.NowNs();
    if (s.final) final_[t] = true;
  }
}

void Coordinator::AcceptThumbnail(int rank, std::span<const std::byte> message) {
  ThumbnailHeader h;
  if (message.size() < sizeof h) return;
  std::memcpy(&h, message.data(), sizeof h);
  if (h.tile < tiles_ && plan_.rank(h.tile) == rank) thumbnails_.Accept(message);
}

void Coordinator::DrainThumbnails() {
  thumbnail_inbox_.Drain([this](int rank, auto message) { AcceptThumbnail(rank, message); });
}

Coordinator::Health Coordinator::CheckAlive() {
  const int64_t now = clock_.NowNs();
  if (const int64_t stalled = StalledNs(&last_check_ns_, now))
    for (int64_t& heard : heard_ns_) heard += stalled;
  Health h = Health::kAlive;
  for (uint32_t t = 0; t < tiles_; ++t) {
    if (final_[t]) {
      h = Health::kStopping;
    } else if (now - heard_ns_[t] > kTileSilenceNs &&
               !MessageWithin(comm_.comm, plan_.rank(t), kTagStats, kConfirmSilenceMs)) {
      spdlog::error("{} (rank {}{}) stopped responding; ending the job", TilesOfRank(plan_.rank(t)),
                    plan_.rank(t), OnServer(t));
      return Health::kDead;
    }
  }
  return h;
}

std::string Coordinator::OnServer(uint32_t tile) const {
  if (!c_.several_servers()) return "";
  const std::string& server = c_.servers[c_.routes[tile].server].name;
  return hosts_[tile].empty() || hosts_[tile] == server
             ? fmt::format(", on server {}", server)
             : fmt::format(", on server {} (host {})", server, hosts_[tile]);
}

std::string Coordinator::TilesOfRank(int rank) const {
  std::string names;
  for (uint32_t t : plan_.tiles(rank)) names += (names.empty() ? "" : ", ") + TileName(c_, t);
  return (plan_.tiles(rank).size() > 1 ? "tiles " : "tile ") + names;
}

}  // namespace tilestream
