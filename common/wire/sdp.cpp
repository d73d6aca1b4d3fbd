#include "common/wire/sdp.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <vector>

#include "common/base/json_text.h"
#include "common/base/words.h"

namespace tilestream {
namespace {

std::string AddressType(const std::string& address) {
  return address.find(':') == std::string::npos ? "IP4" : "IP6";
}

std::string FrameRate(double fps) {
  // ST 2110 writes NTSC rates as a ratio.
  const double ntsc = fps * 1001.0 / 1000.0;
  if (std::fabs(ntsc - std::round(ntsc)) < 1e-6 && std::fabs(fps - std::round(fps)) > 1e-6)
    return fmt::format("{}000/1001", std::lround(ntsc));
  if (std::fabs(fps - std::round(fps)) < 1e-9) return fmt::format("{}", std::lround(fps));
  return fmt::format("{}/1000", std::lround(fps * 1000));
}

// The sampling that fmtp's sampling and depth name, if supported.
std::optional<Sampling> SamplingOf(std::string_view name, uint32_t depth) {
  if (name == "RGB" && depth == 8) return Sampling::kRgb8;
  if (name == "YCbCr-4:2:2" && depth == 8) return Sampling::kYCbCr422_8;
  if (name == "YCbCr-4:2:2" && depth == 10) return Sampling::kYCbCr422_10;
  return std::nullopt;
}

}  // namespace

std::string_view SamplingName(Sampling s) { return s == Sampling::kRgb8 ? "RGB" : "YCbCr-4:2:2"; }
int SamplingDepth(Sampling s) { return s == Sampling::kYCbCr422_10 ? 10 : 8; }

std::string WriteSdp(const TileStreamDescription& d) {
  const std::string src = d.source_address.empty() ? "0.0.0.0" : d.source_address;
  std::string s;
  s += "v=0\r\n";
  s += fmt::format("o=- {} 1 IN {} {}\r\n", d.ssrc, AddressType(src), src);
  s += fmt::format("s={}\r\n", d.name);
  s += fmt::format("c=IN {} {}\r\n", AddressType(d.destination_address), d.destination_address);
  s += "t=0 0\r\n";
  if (d.rtx_payload_type) {
    s += fmt::format("m=video {} RTP/AVPF {} {}\r\n", d.port, d.payload_type, d.rtx_payload_type);
  } else {
    s += fmt::format("m=video {} RTP/AVP {}\r\n", d.port, d.payload_type);
  }
  s += fmt::format("a=rtpmap:{} raw/90000\r\n", d.payload_type);
  s += fmt::format(
      "a=fmtp:{} sampling={}; width={}; height={}; depth={}; colorimetry={}; TCS=SDR; "
      "PM={}; SSN=ST2110-20:2017",
      d.payload_type, SamplingName(d.tile.sampling), d.tile.width, d.tile.height,
      SamplingDepth(d.tile.sampling), d.colorimetry, d.packed ? "2110GPM" : "2110BPM");
  if (d.fps > 0) s += fmt::format("; exactframerate={}", FrameRate(d.fps));
  s += "\r\n";
  if (d.rtx_payload_type) {
    s += fmt::format("a=rtcp-fb:{} nack\r\n", d.payload_type);
    s += fmt::format("a=rtpmap:{} rtx/90000\r\n", d.rtx_payload_type);
    s += fmt::format("a=fmtp:{} apt={};rtx-time={}\r\n", d.rtx_payload_type, d.payload_type,
                     d.rtx_time_ms);
    s += "a=rtcp-mux\r\na=rtcp-rsize\r\n";
    if (d.ssrc != 0) s += fmt::format("a=ssrc-group:FID {} {}\r\n", d.ssrc, d.rtx_ssrc);
  }
  if (d.ssrc != 0) s += fmt::format("a=ssrc:{} cname:{}\r\n", d.ssrc, d.name);
  if (d.ssrc != 0 && d.rtx_payload_type)
    s += fmt::format("a=ssrc:{} cname:{}\r\n", d.rtx_ssrc, d.name);
  s += "a=recvonly\r\n";
  return s;
}

namespace {

// What the video's fmtp says: "k=v; k=v; ...".
struct Fmtp {
  std::string sampling;
  uint32_t depth = 0;
};
Status ParseVideoFmtp(std::string_view params, TileStreamDescription* d, Fmtp* f) {
  while (!params.empty()) {
    const size_t semi = params.find(';');
    const std::string_view kv = TrimBlanks(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view k = TrimBlanks(kv.substr(0, eq)), v = TrimBlanks(kv.substr(eq + 1));
    bool ok = true;
    if (k == "sampling") f->sampling = std::string(v.substr(0, 32));
    if (k == "width") ok = ParseInteger(v, &d->tile.width);
    if (k == "height") ok = ParseInteger(v, &d->tile.height);
    if (k == "depth") ok = ParseInteger(v, &f->depth);
    if (k == "colorimetry") d->colorimetry = std::string(v.substr(0, 32));
    if (k == "PM") d->packed = v == "2110GPM";
    if (k == "exactframerate") {
      const size_t slash = v.find('/');
      double num = 0, den = 1;
      ok = ParseReal(TrimBlanks(v.substr(0, slash)), &num) &&
           (slash == std::string_view::npos || ParseReal(TrimBlanks(v.substr(slash + 1)), &den)) &&
           den > 0;
      d->fps = num / den;
    }
    if (!ok) return Status::InvalidArgument(fmt::format("SDP: bad fmtp value '{}'", kv));
  }
  return Status::Ok();
}

// "m=video PORT PROTO FMT...": the port and the first format, the video's.
Status ParseVideoMedia(std::string_view value, TileStreamDescription* d) {
  const size_t sp = value.find(' ');
  const size_t proto_end = sp == std::string_view::npos ? sp : value.find(' ', sp + 1);
  const std::string_view formats =
      proto_end == std::string_view::npos ? "" : value.substr(proto_end + 1);
  if (sp == std::string_view::npos || !ParseInteger(TrimBlanks(value.substr(0, sp)), &d->port) ||
      !ParseInteger(TrimBlanks(formats.substr(0, formats.find(' '))), &d->payload_type)) {
    return Status::InvalidArgument(fmt::format("SDP: bad media line 'm=video {}'", value));
  }
  return Status::Ok();
}

// "rtpmap:N rtx/90000" names a retransmission format; "fmtp:N apt=PT;
// rtx-time=MS" says whose. Returns N of an rtx rtpmap, else -1.
int RtxFormat(std::string_view value) {
  if (!value.starts_with("rtpmap:")) return -1;
  const std::string_view rest = value.substr(7);
  const size_t sp = rest.find(' ');
  uint8_t pt = 0;
  if (sp == std::string_view::npos || TrimBlanks(rest.substr(sp + 1)) != "rtx/90000" ||
      !ParseInteger(rest.substr(0, sp), &pt) || pt > 127)
    return -1;
  return pt;
}
void ParseRtxFmtp(std::string_view params, TileStreamDescription* d, uint8_t rtx_pt) {
  uint32_t apt = 256, ms = 0;
  while (!params.empty()) {
    const size_t semi = params.find(';');
    const std::string_view kv = TrimBlanks(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (kv.starts_with("apt=")) ParseInteger(TrimBlanks(kv.substr(4)), &apt);
    if (kv.starts_with("rtx-time=")) ParseInteger(TrimBlanks(kv.substr(9)), &ms);
  }
  if (apt != d->payload_type) return;
  d->rtx_payload_type = rtx_pt;
  d->rtx_time_ms = ms;
}

Status CheckVideo(TileStreamDescription* d, const Fmtp& f) {
  const std::optional<Sampling> sampling = SamplingOf(f.sampling, f.depth);
  if (!sampling)
    return Status::Unsupported(
        fmt::format("SDP: sampling={} depth={}: RGB at 8 bits or YCbCr-4:2:2 at 8 or 10 are",
                    Printable(f.sampling), f.depth));
  d->tile.sampling = *sampling;
  if (d->tile.width == 0 || d->tile.height == 0 || d->tile.width > kMaxTileDimension ||
      d->tile.height > kMaxTileDimension)
    return Status::InvalidArgument("SDP: width/height missing or outside 1..32767");
  if (d->tile.width % d->tile.pgroup_pixels() != 0)
    return Status::InvalidArgument(fmt::format(
        "SDP: width {} is odd: YCbCr-4:2:2's pixel groups are two pixels wide", d->tile.width));
  return Status::Ok();
}

}  // namespace

Result<TileStreamDescription> ParseSdp(std::string_view text) {
  TileStreamDescription d;
  bool have_media = false, have_rtpmap = false, have_fmtp = false;
  Fmtp fmtp;
  int rtx_pt = -1;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = TrimBlanks(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() < 2 || line[1] != '=') continue;
    const char type = line[0];
    std::string_view value = line.substr(2);
    if (type == 's') d.name = std::string(value.substr(0, 256));
    if (type == 'c') {
      const size_t sp = value.rfind(' ');
      if (sp != std::string_view::npos) {  // a multicast group's "/TTL[/COUNT]" left off
        const std::string_view address = value.substr(sp + 1);
        d.destination_address =
            std::string(address.substr(0, std::min<size_t>(address.find('/'), 64)));
      }
    }
    if (type == 'o') {
      const size_t sp = value.rfind(' ');
      if (sp != std::string_view::npos) d.source_address = std::string(value.substr(sp + 1, 64));
    }
    if (type == 'm' && !have_media && value.starts_with("video ")) {
      if (Status st = ParseVideoMedia(value.substr(6), &d); !st.ok()) return st;
      have_media = true;
      continue;
    }
    if (type == 'm' && have_media) break;  // the video's attributes end at the next media
    if (type != 'a' || !have_media) continue;
    const std::string rtpmap = fmt::format("rtpmap:{} ", d.payload_type);
    const std::string video_fmtp = fmt::format("fmtp:{} ", d.payload_type);
    if (value.starts_with(rtpmap)) {
      if (TrimBlanks(value.substr(rtpmap.size())) != "raw/90000")
        return Status::Unsupported(fmt::format("SDP: '{}' is not raw/90000", Printable(value)));
      have_rtpmap = true;
    } else if (value.starts_with(video_fmtp)) {
      have_fmtp = true;
      if (Status st = ParseVideoFmtp(value.substr(video_fmtp.size()), &d, &fmtp); !st.ok())
        return st;
    } else if (const int pt = RtxFormat(value); pt >= 0) {
      rtx_pt = pt;
    } else if (rtx_pt >= 0 && value.starts_with(fmt::format("fmtp:{} ", rtx_pt))) {
      ParseRtxFmtp(value.substr(value.find(' ') + 1), &d, static_cast<uint8_t>(rtx_pt));
    } else if (value.starts_with("ssrc:") && d.ssrc == 0) {  // the first: the video's
      const std::string_view rest = value.substr(5);
      ParseInteger(TrimBlanks(rest.substr(0, rest.find(' '))), &d.ssrc);
    }
  }
  if (!have_media) return Status::InvalidArgument("SDP: no m=video line");
  if (!have_rtpmap || !have_fmtp)
    return Status::InvalidArgument("SDP: no a=rtpmap/a=fmtp for the video payload type");
  if (Status st = CheckVideo(&d, fmtp); !st.ok()) return st;
  return d;
}

Result<TileStreamDescription> ReadSdpFile(const std::string& path) {
  constexpr size_t kMaxSdpBytes = size_t{64} << 10;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("{}: cannot read this SDP file", path));
  std::string text;
  text.resize(kMaxSdpBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxSdpBytes)
    return Status::InvalidArgument(fmt::format("{}: larger than 64 KiB: not an SDP", path));
  auto d = ParseSdp(text);
  if (!d.ok()) return Status::InvalidArgument(fmt::format("{}: {}", path, d.status().message()));
  if (d->port == 0)
    return Status::InvalidArgument(fmt::format("{}: the m=video line names no port", path));
  return d;
}

}  // namespace tilestream
