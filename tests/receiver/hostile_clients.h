// What the HostileControlPorts tests share (issue 35): connections from
// other loopback addresses (127.0.0.2 on), as they would come from other
// hosts, and the live 2x2 wall of live_wall.h with room for thousands of
// sockets.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "common/base/unique_fd.h"
#include "tests/receiver/live_wall.h"

namespace tilestream {

// A connection to 127.0.0.1:port from 127.0.0.`host`; invalid if it failed.
// `wait`: connected on return; else still connecting, perhaps (a full
// accept queue makes a blocking connect wait seconds).
inline UniqueFd ConnectFrom(uint8_t host, uint16_t port, bool wait = true) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (wait ? 0 : SOCK_NONBLOCK), 0));
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(0x7f000000u + host);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      (connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 &&
       (wait || errno != EINPROGRESS)))
    return UniqueFd();
  return fd;
}

class HostileControlPorts : public ReceiverTest {
 protected:
  void SetUp() override {
    ReceiverTest::SetUp();
    rlimit files{};  // a thousand sockets here, as many in the coordinator
    getrlimit(RLIMIT_NOFILE, &files);
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  // Ends the show (`wallctl stop`) when it goes, whatever happened.
  struct ShowStopper {
    HostileControlPorts* wall;
    ~ShowStopper() { wall->Ctl("stop"); }
  };

  // The current tick of the streamer of this test, -1 if it does not answer.
  int64_t CurrentTick() {
    const auto j = nlohmann::json::parse(Ctl("status").second, nullptr, false);
    return j.is_object() ? j.value("tick", int64_t{-1}) : -1;
  }

 public:  // for the cases' helpers
  // Plays the wall while `hostile` runs (the show stops when it returns),
  // then checks that it played on: every tick shown that no sender
  // skipped (but `skips_allowed`), every frame sent complete.
  // The swap sync's deadline is generous: the flood's clients, the wall's
  // processes and, under ASan, their slowness share 2 cores, and a display
  // node whose own /metrics is flooded reported one tick after the default
  // deadline once (a skip of the sync's, not the stream's).
  void PlayWhile(const std::function<void()>& hostile, uint64_t skips_allowed = 0) {
    Configure("[sync]\ndeadline_ms = 500\n");
    const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
    std::thread during([&] {
      const ShowStopper stop{this};
      ASSERT_TRUE(WaitForTick(5)) << "the wall never played";
      hostile();
    });
    const auto tx = Stream(3000);  // until stopped
    during.join();
    ASSERT_EQ(tx.exit_code, 0) << tx.output;
    StopReceiver(left);
    StopReceiver(right);
    EXPECT_LE(Report("streamer")["sync"]["skipped"].get<uint64_t>(),
              TicksSkippedBySenders() + skips_allowed);
    for (const std::string tag : {"left", "right"}) {
      const nlohmann::json report = Report(tag);
      for (const auto& t : report["tiles"])
        EXPECT_EQ(t["frames_complete"], SentFrames(t["tile"])) << t.dump();
    }
  }

  // Appends `toml` to the wall's config.
  void Configure(const std::string& toml) { std::ofstream(config_, std::ios::app) << toml; }
};

}  // namespace tilestream
