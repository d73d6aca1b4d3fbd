// Point-to-point messages between the coordinator and the tile ranks
// (streamer/messages.h), the one place that probes, receives and sends
// them. Every message is a plain struct sent as MPI_BYTE within one build.
#pragma once

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "streamer/messages.h"

namespace tilestream {

// Whether a message of `tag` from `source` (or MPI_ANY_SOURCE) is waiting.
inline bool MessageWaiting(MPI_Comm comm, int source, MessageTag tag, int* from = nullptr) {
  int pending = 0;
  MPI_Status st;
  MPI_Iprobe(source, tag, comm, &pending, &st);
  if (pending && from) *from = st.MPI_SOURCE;
  return pending != 0;
}

// Before a silent peer is called gone: looks for a message of `tag` from
// `source` for up to `ms` more, probing each millisecond. Open MPI's TCP
// transport shows a message only after several progress calls, and a rank
// that was not scheduled for seconds (a stalled virtual machine: seen on a
// 16-core one, every tile rank at once) finds its peers' messages still
// unprogressed.
inline bool MessageWithin(MPI_Comm comm, int source, MessageTag tag, int ms) {
  const timespec one_ms{0, 1'000'000};
  for (int i = 0; i <= ms; ++i) {
    if (MessageWaiting(comm, source, tag)) return true;
    nanosleep(&one_ms, nullptr);
  }
  return false;
}

// Silence that counts: the time this process itself did not run is nobody's
// silence. Called at each look for a peer's messages; returns the gap since
// the last look when it is longer than any wait between looks (1 s: a
// stalled machine), to move the peers' last-heard times forward by, else 0.
inline int64_t StalledNs(int64_t* last_look_ns, int64_t now) {
  constexpr int64_t kStalledNs = 1'000'000'000;
  const int64_t gap = *last_look_ns > 0 ? now - *last_look_ns : 0;
  *last_look_ns = now;
  return gap > kStalledNs ? gap : 0;
}

// Takes one waiting message of `tag` from `source` into *out: true, with its
// sender in *from; false (nothing touched) when none waits. Never blocks.
template <typename Message>
bool TryReceive(MPI_Comm comm, int source, MessageTag tag, Message* out, int* from = nullptr) {
  int sender = source;
  if (!MessageWaiting(comm, source, tag, &sender)) return false;
  MPI_Recv(out, sizeof *out, MPI_BYTE, sender, tag, comm, MPI_STATUS_IGNORE);
  if (from) *from = sender;
  return true;
}

// Takes one waiting text message of `tag` (any source; the job's own
// ranks) into *out: true, with its sender in *from. Never blocks.
inline bool TryReceiveText(MPI_Comm comm, MessageTag tag, std::string* out, int* from) {
  int pending = 0;
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &pending, &st);
  if (!pending) return false;
  int bytes = 0;
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  out->resize(static_cast<size_t>(std::max(bytes, 0)));
  MPI_Recv(out->data(), bytes, MPI_BYTE, st.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE);
  *from = st.MPI_SOURCE;
  return true;
}

template <typename Message>
void SendMessage(MPI_Comm comm, int rank, MessageTag tag, const Message& m) {
  MPI_Send(&m, sizeof m, MPI_BYTE, rank, tag, comm);
}

}  // namespace tilestream
