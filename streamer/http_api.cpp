#include "streamer/http_api.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/base/json_text.h"
#include "common/base/metrics_text.h"
#include "common/control/http_listener.h"
#include "common/control/movie_listing.h"
#include "common/control/rest_calls.h"
#include "common/image/png.h"
#include "common/store/tile_store.h"
#include "streamer/movie_poster.h"
#include "streamer/panel.h"

namespace tilestream {
namespace {

constexpr std::chrono::milliseconds kWallAnswerTimeout{2000};
constexpr size_t kMaxPosters = 256;

HttpReply Unavailable() {
  return HttpReply::Error(503, "the coordinator did not answer in time (starting or stopping?)");
}

}  // namespace

Result<std::unique_ptr<HttpApi>> HttpApi::Start(const WallConfig& config, WallEndpoints wall) {
  if (config.http.port == 0) return std::unique_ptr<HttpApi>();
  auto o =
      HttpListenerOptions(config, fmt::format("http listener (http.port in {})", config.source),
                          config.http.listen_address, config.http.port);
  if (!o.ok()) return o.status();
  std::unique_ptr<HttpApi> api(new HttpApi(std::move(wall), config.library_path));
  api->movies_ = api->wall_.movies;
  if (!api->movies_ && !config.library_path.empty()) api->movies_ = LibraryLister(config);
  o->counters = &api->counters_;
  auto service = HttpService::Start(*o, api->Routes());
  if (!service.ok()) return service.status();
  api->service_ = std::move(service).value();
  return api;
}

std::vector<HttpRoute> HttpApi::Routes() {
  std::vector<HttpRoute> routes;
  const auto page = [](const HttpRequest&) {
    return HttpReply{200, "text/html; charset=utf-8", std::string(PanelHtml())};
  };
  routes.push_back({"GET", "/", page, false, true});
  routes.push_back({"GET", "/index.html", page, false, true});
  routes.push_back(
      {"GET", "/api/status", [this](const HttpRequest&) { return Command("status"); }});
  routes.push_back(
      {"GET", "/api/playlist", [this](const HttpRequest&) { return Command("playlist"); }});
  // The library is listed here, on the HTTP thread: it needs no wall
  // state, and a scan of many movies is no work for the frame clock's thread.
  routes.push_back({"GET", "/api/movies", [this](const HttpRequest&) {
                      std::string reply = MoviesReply(movies_);
                      const bool ok = JsonBool(nlohmann::json::parse(reply, nullptr, false), "ok");
                      return HttpReply{ok ? 200 : 400, "application/json", std::move(reply)};
                    }});
  routes.push_back(
      {"GET", "/api/movies/", [this](const HttpRequest& r) { return Poster(r.rest); }, true});
  for (const char* name : {"play", "pause", "toggle", "stop", "seek", "step", "speed", "loop",
                           "load", "next", "previous", "playlist"}) {
    routes.push_back({"POST", fmt::format("/api/{}", name), [this, name](const HttpRequest& r) {
                        return CommandWithBody(name, r.body);
                      }});
  }
  routes.push_back({"GET", "/api/wall.png", [this](const HttpRequest&) {
                      return Picture([this] { return std::optional<Image>(wall_.wall_picture()); });
                    }});
  routes.push_back({"GET", "/api/tile/",
                    [this](const HttpRequest& r) {
                      if (!r.rest.ends_with(".png"))
                        return HttpReply::Error(404, "expected /api/tile/r0c1.png");
                      const std::string tile(r.rest.substr(0, r.rest.size() - 4));
                      return Picture([this, tile] { return wall_.tile_picture(tile); });
                    },
                    true});
  routes.push_back(
      {"GET", "/metrics", [this](const HttpRequest&) {
         auto text = OnWall([this] { return wall_.metrics(); });
         if (!text) return Unavailable();
         MetricsText listener;
         AppendHttpMetrics(counters_, {{"listener", "coordinator"}}, &listener);
         *text += listener.text();
         return HttpReply{200, std::string(MetricsText::kContentType), std::move(*text)};
       }});
  return routes;
}

std::optional<std::string> HttpApi::OnWall(std::function<std::string()> work) {
  return mailbox_.Call(std::move(work), kWallAnswerTimeout);
}

HttpReply HttpApi::Command(std::string_view line) {
  auto reply = OnWall([this, line = std::string(line)] { return wall_.command(line); });
  if (!reply) return Unavailable();
  const nlohmann::json j = nlohmann::json::parse(*reply, nullptr, false);
  return {JsonBool(j, "ok") ? 200 : 400, "application/json", std::move(*reply)};
}

HttpReply HttpApi::CommandWithBody(std::string_view name, std::string_view body) {
  auto line = ControlLineOfRestCall(name, body);
  if (!line.ok()) return HttpReply::Error(400, line.status().message());
  return Command(*line);
}

// The picture is copied on the coordinator's thread and encoded here.
HttpReply HttpApi::Picture(std::function<std::optional<Image>()> take) {
  std::optional<Image> image;
  auto taken = OnWall([&] {
    image = take();
    return std::string();
  });
  if (!taken) return Unavailable();
  if (!image) return HttpReply::Error(404, "no such tile");
  if (image->width == 0) return HttpReply::Error(404, "no picture yet");
  auto png = EncodePng(image->width, image->height, image->rgb);
  if (!png.ok()) return HttpReply::Error(500, png.status().message());
  return {200, "image/png", std::move(png).value()};
}

HttpReply HttpApi::Poster(std::string_view rest) {
  if (!rest.ends_with(".png")) return HttpReply::Error(404, "expected /api/movies/NAME.png");
  const std::string name(rest.substr(0, rest.size() - 4));
  if (wall_.live_picture) {
    if (std::optional<Image> live = wall_.live_picture(name)) {
      if (live->width == 0) return HttpReply::Error(404, "no picture yet");
      auto png = EncodePng(live->width, live->height, live->rgb);
      if (!png.ok()) return HttpReply::Error(500, png.status().message());
      return {200, "image/png", std::move(png).value()};
    }
  }
  if (library_.empty()) return HttpReply::Error(404, "no movie library");
  std::error_code ec;
  const auto made =
      std::filesystem::last_write_time(std::filesystem::path(library_) / name / kManifestName, ec);
  {
    std::lock_guard lock(posters_mu_);
    const auto it = posters_.find(name);
    if (!ec && it != posters_.end() && it->second.first == made)
      return {200, "image/png", it->second.second};
  }
  auto poster = MoviePoster(library_, name);
  if (!poster.ok()) return HttpReply::Error(404, poster.status().message());
  auto png = EncodePng(poster->width, poster->height, poster->rgb);
  if (!png.ok()) return HttpReply::Error(500, png.status().message());
  if (!ec) {
    std::lock_guard lock(posters_mu_);
    if (posters_.size() >= kMaxPosters) posters_.clear();
    posters_[name] = {made, *png};
  }
  return {200, "image/png", std::move(png).value()};
}

}  // namespace tilestream
