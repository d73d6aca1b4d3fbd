#include "common/wire/sdp.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

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

}  // namespace

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
      "a=fmtp:{} sampling=RGB; width={}; height={}; depth=8; colorimetry=BT709; TCS=SDR; "
      "PM={}; SSN=ST2110-20:2017",
      d.payload_type, d.tile.width, d.tile.height, d.packed ? "2110GPM" : "2110BPM");
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

Result<TileStreamDescription> ParseSdp(std::string_view text) {
  TileStreamDescription d;
  bool have_media = false, have_rtpmap = false, have_fmtp = false;
  std::string sampling;
  uint32_t depth = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = TrimBlanks(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() < 2 || line[1] != '=') continue;
    const char type = line[0];
    std::string_view value = line.substr(2);
    if (type == 's') d.name = std::string(value);
    if (type == 'c') {
      const size_t sp = value.rfind(' ');
      if (sp != std::string_view::npos) d.destination_address = std::string(value.substr(sp + 1));
    }
    if (type == 'm' && !have_media && value.starts_with("video ")) {
      value.remove_prefix(6);
      // "PORT PROTO FMT...": the first format is the video's.
      const size_t sp = value.find(' ');
      const size_t proto_end = sp == std::string_view::npos ? sp : value.find(' ', sp + 1);
      const std::string_view formats =
          proto_end == std::string_view::npos ? "" : value.substr(proto_end + 1);
      if (sp == std::string_view::npos || !ParseInteger(TrimBlanks(value.substr(0, sp)), &d.port) ||
          !ParseInteger(TrimBlanks(formats.substr(0, formats.find(' '))), &d.payload_type)) {
        return Status::InvalidArgument(fmt::format("SDP: bad media line 'm={}'", value));
      }
      have_media = true;
    }
    if (type == 'a' && have_media) {
      const std::string rtpmap = fmt::format("rtpmap:{} ", d.payload_type);
      const std::string fmtp = fmt::format("fmtp:{} ", d.payload_type);
      if (value.starts_with(rtpmap)) {
        if (TrimBlanks(value.substr(rtpmap.size())) != "raw/90000")
          return Status::Unsupported(fmt::format("SDP: '{}' is not raw/90000", value));
        have_rtpmap = true;
      } else if (value.starts_with(fmtp)) {
        have_fmtp = true;
        std::string_view params = value.substr(fmtp.size());
        while (!params.empty()) {
          const size_t semi = params.find(';');
          const std::string_view kv = TrimBlanks(params.substr(0, semi));
          params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
          const size_t eq = kv.find('=');
          if (eq == std::string_view::npos) continue;
          const std::string_view k = TrimBlanks(kv.substr(0, eq)),
                                 v = TrimBlanks(kv.substr(eq + 1));
          bool ok = true;
          if (k == "sampling") sampling = std::string(v);
          if (k == "width") ok = ParseInteger(v, &d.tile.width);
          if (k == "height") ok = ParseInteger(v, &d.tile.height);
          if (k == "depth") ok = ParseInteger(v, &depth);
          if (k == "PM") d.packed = v == "2110GPM";
          if (k == "exactframerate") {
            const size_t slash = v.find('/');
            double num = 0, den = 1;
            ok = ParseReal(TrimBlanks(v.substr(0, slash)), &num) &&
                 (slash == std::string_view::npos ||
                  ParseReal(TrimBlanks(v.substr(slash + 1)), &den)) &&
                 den > 0;
            d.fps = num / den;
          }
          if (!ok) return Status::InvalidArgument(fmt::format("SDP: bad fmtp value '{}'", kv));
        }
      } else if (value.starts_with("ssrc:") && d.ssrc == 0) {  // the first: the video's
        const std::string_view rest = value.substr(5);
        ParseInteger(TrimBlanks(rest.substr(0, rest.find(' '))), &d.ssrc);
      }
    }
    if (type == 'o') {
      const size_t sp = value.rfind(' ');
      if (sp != std::string_view::npos) d.source_address = std::string(value.substr(sp + 1));
    }
  }
  if (!have_media) return Status::InvalidArgument("SDP: no m=video line");
  if (!have_rtpmap || !have_fmtp)
    return Status::InvalidArgument("SDP: no a=rtpmap/a=fmtp for the video payload type");
  if (sampling != "RGB" || depth != 8)
    return Status::Unsupported(
        fmt::format("SDP: sampling={} depth={}: only RGB 8-bit is supported", sampling, depth));
  if (d.tile.width == 0 || d.tile.height == 0 || d.tile.width > kMaxTileDimension ||
      d.tile.height > kMaxTileDimension)
    return Status::InvalidArgument("SDP: width/height missing or outside 1..32767");
  return d;
}

}  // namespace tilestream
