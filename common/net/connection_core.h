// The one connection core of the wall's TCP listeners (issue 45,
// docs/decisions.md "One connection core"): the web side's HTTP
// (common/net/http_connections.h) and the coordinator's control port with
// its swap-sync connections (common/control/control_port.h) each run a
// listener on it. One epoll loop: it accepts under ConnectionGate's
// admission (a cap in all and per address, the first to yield giving its
// place to a newcomer), reads, writes without ever blocking, and closes at
// each connection's deadline, on a Clock the tests drive. What the bytes
// mean is the protocol's: it is told what happened and answers through the
// core's calls. Everything runs on the thread that calls Wait and Handle;
// not thread-safe.
//
// Bounds: at most max_input bytes wait unread per connection (then reading
// stops until the protocol takes some: TCP holds the sender back), at most
// max_output wait to be sent (past it the peer reads too slowly and is
// closed), kAcceptsPerRound accepts a round (a storm of connections waits in
// the accept queue and cannot hold the caller's loop up).
//
// Not here: the tile rank's wait (a hot path with no connections) and the
// testbed's delay line.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "common/base/unique_fd.h"
#include "common/net/connection_gate.h"

namespace tilestream {

// What a listener did, for /metrics (common/control/http_listener.h).
struct ConnectionCounters {
  std::atomic<uint64_t> open{0};      // connections now
  std::atomic<uint64_t> accepted{0};  // connections taken
  std::atomic<uint64_t> refused{0};   // turned away: their address or every place full
  std::atomic<uint64_t> evicted{0};   // closed for a newcomer
};

// What a listener's connections speak. Each call comes from the core's
// Handle; a connection closed in one (by the protocol or the core) is
// told Closed once, after the call.
class ConnectionProtocol {
 public:
  virtual ~ConnectionProtocol() = default;
  // Admitted at `now`: the protocol sets its standing (ConnectionCore::Stand).
  virtual void Opened(uint64_t id, int64_t now) = 0;
  // input(id) holds bytes: new ones, or those left when the protocol asked
  // Again. Also once after the peer closed, for what it sent before.
  virtual void Readable(uint64_t id, int64_t now) = 0;
  // Everything sent so far has been written.
  virtual void Written(uint64_t /*id*/, int64_t /*now*/) {}
  // Past its deadline: the last word, if any, before the core closes it.
  virtual void Expired(uint64_t id) = 0;
  virtual void Closed(uint64_t /*id*/) {}
  // What a newcomer turned away, and a connection evicted for one, are told.
  virtual std::string Refusal() const = 0;
  virtual std::string Eviction() const = 0;
};

struct ConnectionCoreOptions {
  std::string name = "listener";  // for messages: "coordinator http"
  std::string listen_address = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (tests)
  AdmissionLimits limits;
  size_t max_input = 16384;
  size_t max_output = size_t{1} << 20;
  // Whether a peer may take the reserved places (limits.reserved).
  std::function<bool(const sockaddr_storage&)> reserved;
  ConnectionCounters* counters = nullptr;  // the caller's, outliving the core; else its own
  Clock* clock = nullptr;                  // the tests'; else CLOCK_MONOTONIC
};

class ConnectionCore {
 public:
  static constexpr size_t kAcceptsPerRound = 64;
  static constexpr int64_t kDrainNs = 1'000'000'000;  // a last reply's drain (CloseAfterWrite)

  // Listens; the protocol outlives the core.
  static Result<std::unique_ptr<ConnectionCore>> Listen(const ConnectionCoreOptions& options,
                                                        ConnectionProtocol* protocol);
  ~ConnectionCore();
  ConnectionCore(const ConnectionCore&) = delete;
  ConnectionCore& operator=(const ConnectionCore&) = delete;

  uint16_t port() const { return port_; }
  int64_t now() const { return clock_->NowNs(); }

  // Waits until something is ready, a deadline comes, or timeout_ns passed
  // (to the nanosecond: the coordinator's tick waits here); at once while
  // work the protocol left (Again) or a round's accepts wait. Then Handle,
  // which must follow it: the events, then the work left, the deadlines,
  // and last the newcomers (one taken a round before has its request read
  // before a newcomer may evict it).
  void Wait(int64_t timeout_ns);
  void Handle();
  void RunOnce(int64_t timeout_ns) {
    Wait(timeout_ns);
    Handle();
  }
  // Handle also calls on_readable when `fd` (not the core's) is readable.
  void Watch(int fd, std::function<void()> on_readable);

  // -- one connection, for its protocol -------------------------------------
  bool open(uint64_t id) const;
  // Its unread bytes: the protocol erases what it takes.
  std::string& input(uint64_t id) { return connections_.at(id).in; }
  // Its peer's host as bytes (IPv4-mapped IPv6 as IPv4): the per-address key.
  const std::string& address(uint64_t id) const { return connections_.at(id).address; }
  bool has_output(uint64_t id) const { return !connections_.at(id).out.empty(); }
  // Queues `bytes` and writes what the socket takes now; false when the
  // connection is closed (or is now: past max_output).
  bool Send(uint64_t id, std::string_view bytes);
  void Stand(uint64_t id, const Standing& standing);
  // Stops reading it (a request being served), or reads again.
  void Pause(uint64_t id, bool paused);
  // Readable again next round, though nothing new comes (lines left over).
  void Again(uint64_t id);
  // Whether a request of its address is within the address's rate now.
  bool TakeRequest(uint64_t id);
  // Closes it now (what is queued is dropped).
  void Close(uint64_t id);
  // Closes it once what is queued is written: then shuts it for writing and
  // reads what the client still sends for kDrainNs, so that a last reply is
  // not lost to a reset (RFC 9112 9.6).
  void CloseAfterWrite(uint64_t id);

 private:
  struct Connection {
    UniqueFd fd;
    std::string address;
    std::string in, out;
    size_t sent = 0;       // of out
    uint32_t watched = 0;  // the epoll events asked for now
    bool paused = false;   // not read
    bool close_after_write = false;
    bool draining = false;  // shut for writing, reading what comes
    bool closed = false;    // to be reaped
  };
  struct Watched {
    int fd;
    std::function<void()> on_readable;
  };

  ConnectionCore(const ConnectionCoreOptions& options, ConnectionProtocol* protocol);
  Status Open();
  void OnEvents(uint64_t id, uint32_t events);
  // Reads what the socket has, up to max_input; false when the peer is gone.
  bool Read(Connection& c);
  void Write(uint64_t id, Connection& c);
  // Asks epoll for what the connection needs now, a system call only when
  // that changes: a kept-alive client's requests cost none.
  void Rewatch(uint64_t id, Connection& c);
  void Accept(int64_t now);
  void Admit(UniqueFd fd, const sockaddr_storage& peer, int64_t now);
  void PauseAcceptsIfOutOfFiles(int64_t now);
  void ResumeAccepts(int64_t now);
  void OnDeadlines(int64_t now);
  // Says `bytes` once, without waiting, and closes.
  void SayAndClose(uint64_t id, const std::string& bytes);
  // Erases the closed connections and tells the protocol.
  void Reap();
  void CountOpen();

  ConnectionCoreOptions options_;
  ConnectionProtocol* protocol_;
  MonotonicClock monotonic_;
  Clock* clock_;
  ConnectionCounters own_counters_;
  ConnectionCounters* counters_;
  ConnectionGate gate_;
  UniqueFd listener_, epoll_;
  uint16_t port_ = 0;
  std::unordered_map<uint64_t, Connection> connections_;
  uint64_t next_id_ = 1;
  std::vector<Watched> watched_;
  std::vector<uint64_t> again_, written_, closed_, expired_, scratch_;
  std::vector<uint64_t> ready_ids_;  // Wait's events, for Handle
  std::vector<uint32_t> ready_events_;
  bool accept_ready_ = false;
  int64_t accepts_paused_until_ = 0;
};

}  // namespace tilestream
