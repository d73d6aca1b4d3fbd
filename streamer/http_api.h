// The coordinator's web side (docs/control.md): the operator's panel, the
// REST API, the live picture of the wall and Prometheus' /metrics, on
// http.listen:http.port.
//
// A REST call becomes the control channel's command line and goes through
// the same ControlCommands on the coordinator's thread, so it has the same
// effect and the same reply by either road (HTTP 200 for "ok":true, 400
// for an error reply). Every route that reads or changes the wall hands its
// work to the coordinator's loop through a Mailbox (common/base/mailbox.h)
// and waits for it (503 if the loop does not answer within 2 s); what is
// costly and needs no wall state, like encoding a PNG, runs on the HTTP
// thread. GET never changes anything. A library movie's poster
// (GET /api/movies/NAME.png) is made on the HTTP thread from the movie's
// files alone (streamer/movie_poster.h).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/base/mailbox.h"
#include "common/base/result.h"
#include "common/control/control_commands.h"
#include "common/image/ppm.h"
#include "common/net/http_service.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// What the routes ask of the wall; each runs on the coordinator's thread.
struct WallEndpoints {
  std::function<std::string(std::string_view line)> command;  // one control line, its reply
  std::function<std::string()> metrics;                       // Prometheus text
  std::function<Image()> wall_picture;                        // the wall's thumbnails, composed
  // A tile's thumbnail (width 0: none yet); nothing when there is no such tile.
  std::function<std::optional<Image>(std::string_view tile)> tile_picture;
  // GET /api/movies; unset: the library of the config, as this host sees it.
  ControlCommands::MovieList movies;
  // A live source's newest picture as a thumbnail (width 0: none yet);
  // nothing when `name` is no live source. GET /api/movies/NAME.png.
  std::function<std::optional<Image>(std::string_view name)> live_picture;
};

class HttpApi {
 public:
  // Listens when http.port is not 0 (else returns null); reads the token of
  // control.token_file.
  static Result<std::unique_ptr<HttpApi>> Start(const WallConfig& config, WallEndpoints wall);

  // The coordinator's side: watch fd(), then call RunPending().
  int fd() const { return mailbox_.fd(); }
  void RunPending() { mailbox_.RunPending(); }
  uint16_t port() const { return service_->port(); }

 private:
  HttpApi(WallEndpoints wall, std::string library)
      : wall_(std::move(wall)), library_(std::move(library)) {}
  std::vector<HttpRoute> Routes();
  HttpReply Command(std::string_view line);
  HttpReply CommandWithBody(std::string_view name, std::string_view body);
  HttpReply Picture(std::function<std::optional<Image>()> take);
  HttpReply Poster(std::string_view rest);
  std::optional<std::string> OnWall(std::function<std::string()> work);

  WallEndpoints wall_;
  const std::string library_;          // library.path; "" for none
  ControlCommands::MovieList movies_;  // its listing; unset for none
  // Posters made, by movie name, with their movie.toml's time: a poster is
  // made again only when its movie is cut again (at most kMaxPosters kept).
  std::mutex posters_mu_;
  std::map<std::string, std::pair<std::filesystem::file_time_type, std::string>> posters_;
  Mailbox mailbox_;
  HttpCounters counters_;
  std::unique_ptr<HttpService> service_;  // last: stopped before the rest goes
};

}  // namespace tilestream
