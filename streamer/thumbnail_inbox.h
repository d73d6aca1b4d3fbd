// ThumbnailInbox: the coordinator's side of the tile ranks' thumbnails,
// received one at a time without ever waiting for a rank. A thumbnail
// (48 KB) is past Open MPI's shared-memory eager limit (4 KB): without its
// single-copy support it moves only as its sender calls MPI, and a tile
// rank asleep on its doorbell calls MPI only when a tick comes, which a
// coordinator blocked in a receive does not send. A blocking receive held
// a static job's ticks back for 5 s at a time (docs/decisions.md).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace tilestream {

class ThumbnailInbox {
 public:
  using Accept = std::function<void(int rank, std::span<const std::byte> message)>;

  // Messages of `tag` on `comm`, at most `max_bytes` each.
  ThumbnailInbox(MPI_Comm comm, int tag, size_t max_bytes)
      : comm_(comm), tag_(tag), buffer_(max_bytes) {}

  // Hands every message complete by now to `accept` and starts receiving
  // the next one waiting. Never blocks.
  void Drain(const Accept& accept);
  // Waits for the message under way, if any: only once its sender has
  // finished sending (its final report came after it).
  void Finish(const Accept& accept);

 private:
  MPI_Comm comm_;
  int tag_;
  std::vector<std::byte> buffer_;
  MPI_Request request_ = MPI_REQUEST_NULL;  // buffer_'s receive under way
  size_t bytes_ = 0;
  int from_ = -1;
};

}  // namespace tilestream
