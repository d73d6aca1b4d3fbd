// Test helper: GStreamer's rtpbin receiving one tile stream with
// retransmission on, as an application has to set it up (gst-launch cannot:
// docs/protocol.md, "Retransmission"): rtpjitterbuffer asks for lost
// packets with Generic NACKs (AVPF profile), rtprtxreceive (rtpbin's aux
// receiver) turns our RFC 4588 packets back into the originals, and the
// NACKs leave through the socket the stream arrives on (RTCP multiplexed,
// RFC 5761) to where the stream comes from. Frames are depayloaded by
// rtpvrawdepay and written as raw RGB to a file, each whole before the
// next (fakesink's handoff).
//
//   gst_rtx_receiver PORT WIDTH HEIGHT FRAMES OUT.rgb
//
// Exits 0 after FRAMES frames, 1 on an error, 2 on bad arguments; gives up
// after 60 s.
#include <gst/gst.h>
#include <gst/net/gstnetaddressmeta.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr unsigned kPayloadType = 96, kRtxPayloadType = 97;

struct App {
  GstElement* pipeline = nullptr;
  GstElement* rtcp_sink = nullptr;
  GstElement* depay = nullptr;
  GMainLoop* loop = nullptr;
  FILE* out = nullptr;
  std::string video_caps;
  bool peer_known = false;
  int frames_left = 0;
  int exit_code = 1;
};

GstCaps* RequestPtMap(GstElement*, guint, guint pt, App* app) {
  if (pt == kPayloadType) return gst_caps_from_string(app->video_caps.c_str());
  if (pt == kRtxPayloadType)
    return gst_caps_from_string(
        "application/x-rtp,media=video,clock-rate=90000,encoding-name=RTX,apt=96");
  return nullptr;
}

// rtpbin's aux receiver for a session: rtprtxreceive in a bin with ghost
// pads named as rtpbin wants them.
GstElement* RequestAuxReceiver(GstElement*, guint session, App*) {
  GstElement* bin = gst_bin_new(nullptr);
  GstElement* rtx = gst_element_factory_make("rtprtxreceive", nullptr);
  GstStructure* map =
      gst_structure_new("application/x-rtp-pt-map", "96", G_TYPE_UINT, kRtxPayloadType, nullptr);
  g_object_set(rtx, "payload-type-map", map, nullptr);
  gst_structure_free(map);
  gst_bin_add(GST_BIN(bin), rtx);
  for (const char* dir : {"src", "sink"}) {
    GstPad* pad = gst_element_get_static_pad(rtx, dir);
    gchar* name = g_strdup_printf("%s_%u", dir, session);
    gst_element_add_pad(bin, gst_ghost_pad_new(name, pad));
    g_free(name);
    gst_object_unref(pad);
  }
  return bin;
}

// Ask as a wall must: at once (a LAN does not reorder), again every 5 ms,
// and only within the two frames our streamer keeps (60 ms at 25 fps); no
// guessing at packets not sent yet (ours come in bursts).
void NewJitterBuffer(GstElement*, GstElement* jitterbuffer, guint, guint, App*) {
  g_object_set(jitterbuffer, "rtx-delay", 1, "rtx-retry-timeout", 5, "rtx-min-retry-timeout", 5,
               "rtx-retry-period", 60, "rtx-next-seqnum", FALSE, nullptr);
}

void PadAdded(GstElement*, GstPad* pad, App* app) {
  gchar* name = gst_pad_get_name(pad);
  if (g_str_has_prefix(name, "recv_rtp_src_")) {
    GstPad* sink = gst_element_get_static_pad(app->depay, "sink");
    if (!gst_pad_is_linked(sink)) gst_pad_link(pad, sink);
    gst_object_unref(sink);
  }
  g_free(name);
}

// The first packet says where the stream comes from: RTCP goes there.
GstPadProbeReturn FirstPacket(GstPad*, GstPadProbeInfo* info, App* app) {
  if (app->peer_known) return GST_PAD_PROBE_REMOVE;
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  auto* meta = reinterpret_cast<GstNetAddressMeta*>(
      gst_buffer_get_meta(buffer, GST_NET_ADDRESS_META_API_TYPE));
  if (!meta) return GST_PAD_PROBE_OK;
  auto* address = G_INET_SOCKET_ADDRESS(meta->addr);
  gchar* host = g_inet_address_to_string(g_inet_socket_address_get_address(address));
  g_signal_emit_by_name(app->rtcp_sink, "add", host, g_inet_socket_address_get_port(address));
  g_free(host);
  app->peer_known = true;
  return GST_PAD_PROBE_REMOVE;
}

void WriteFrame(GstElement*, GstBuffer* buffer, GstPad*, App* app) {
  if (app->frames_left == 0) return;
  GstMapInfo map;
  if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return;
  std::fwrite(map.data, 1, map.size, app->out);
  std::fflush(app->out);
  gst_buffer_unmap(buffer, &map);
  if (--app->frames_left == 0) {
    app->exit_code = 0;
    g_main_loop_quit(app->loop);
  }
}

gboolean OnMessage(GstBus*, GstMessage* message, App* app) {
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    GError* error = nullptr;
    gst_message_parse_error(message, &error, nullptr);
    std::fprintf(stderr, "gst_rtx_receiver: %s\n", error->message);
    g_error_free(error);
    g_main_loop_quit(app->loop);
  }
  return TRUE;
}

gboolean GiveUp(App* app) {
  std::fprintf(stderr, "gst_rtx_receiver: %d frames still missing after 60 s\n", app->frames_left);
  g_main_loop_quit(app->loop);
  return FALSE;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (argc != 6) {
    std::fprintf(stderr, "usage: gst_rtx_receiver PORT WIDTH HEIGHT FRAMES OUT.rgb\n");
    return 2;
  }
  App app;
  app.frames_left = std::atoi(argv[4]);
  app.video_caps = std::string(
                       "application/x-rtp,media=video,clock-rate=90000,encoding-name=RAW,"
                       "sampling=RGB,depth=(string)8,payload=96,width=(string)") +
                   argv[2] + ",height=(string)" + argv[3];
  app.pipeline = gst_pipeline_new(nullptr);
  GstElement* source = gst_element_factory_make("udpsrc", nullptr);
  GstElement* rtpbin = gst_element_factory_make("rtpbin", nullptr);
  app.rtcp_sink = gst_element_factory_make("udpsink", nullptr);
  app.depay = gst_element_factory_make("rtpvrawdepay", nullptr);
  GstElement* sink = gst_element_factory_make("fakesink", nullptr);
  app.out = std::fopen(argv[5], "wb");
  if (!app.out) {
    std::perror(argv[5]);
    return 1;
  }
  if (!source || !rtpbin || !app.rtcp_sink || !app.depay || !sink) {
    std::fprintf(stderr, "gst_rtx_receiver: missing GStreamer elements (plugins-good?)\n");
    return 1;
  }
  GstCaps* caps = gst_caps_from_string(app.video_caps.c_str());
  g_object_set(source, "port", std::atoi(argv[1]), "caps", caps, "buffer-size", 64 << 20,
               "retrieve-sender-address", TRUE, nullptr);
  gst_caps_unref(caps);
  g_object_set(rtpbin, "do-retransmission", TRUE, "rtp-profile", 3 /* AVPF */, "latency", 500,
               nullptr);
  g_object_set(app.rtcp_sink, "sync", FALSE, "async", FALSE, nullptr);
  g_signal_emit_by_name(app.rtcp_sink, "clear");  // no default client: the sender's comes later
  g_object_set(sink, "sync", FALSE, "signal-handoffs", TRUE, nullptr);
  g_signal_connect(sink, "handoff", G_CALLBACK(WriteFrame), &app);
  gst_bin_add_many(GST_BIN(app.pipeline), source, rtpbin, app.rtcp_sink, app.depay, sink, nullptr);
  g_signal_connect(rtpbin, "request-pt-map", G_CALLBACK(RequestPtMap), &app);
  g_signal_connect(rtpbin, "request-aux-receiver", G_CALLBACK(RequestAuxReceiver), &app);
  g_signal_connect(rtpbin, "pad-added", G_CALLBACK(PadAdded), &app);
  g_signal_connect(rtpbin, "new-jitterbuffer", G_CALLBACK(NewJitterBuffer), &app);
  gst_element_link_pads(source, "src", rtpbin, "recv_rtp_sink_0");
  gst_element_link_pads(rtpbin, "send_rtcp_src_0", app.rtcp_sink, "sink");
  gst_element_link(app.depay, sink);
  // RTCP may go as often as NACKs need (by default RTCP is held to 5% of
  // an estimated session bandwidth and its NACKs came 200 ms late, past
  // the two frames our streamer keeps).
  GstElement* session = nullptr;
  g_signal_emit_by_name(rtpbin, "get-session", 0u, &session);
  if (session) {
    g_object_set(session, "bandwidth", 100e6, "rtcp-fraction", 0.05, "rtcp-min-interval",
                 guint64{1'000'000}, nullptr);
    gst_object_unref(session);
  }
  // RTCP leaves through the stream's own socket (RFC 5761).
  gst_element_set_state(source, GST_STATE_READY);
  GSocket* socket = nullptr;
  g_object_get(source, "used-socket", &socket, nullptr);
  g_object_set(app.rtcp_sink, "socket", socket, "close-socket", FALSE, nullptr);
  if (socket) g_object_unref(socket);
  GstPad* source_pad = gst_element_get_static_pad(source, "src");
  gst_pad_add_probe(source_pad, GST_PAD_PROBE_TYPE_BUFFER, GstPadProbeCallback(FirstPacket), &app,
                    nullptr);
  gst_object_unref(source_pad);
  app.loop = g_main_loop_new(nullptr, FALSE);
  GstBus* bus = gst_element_get_bus(app.pipeline);
  gst_bus_add_watch(bus, GstBusFunc(OnMessage), &app);
  gst_object_unref(bus);
  g_timeout_add_seconds(60, GSourceFunc(GiveUp), &app);
  gst_element_set_state(app.pipeline, GST_STATE_PLAYING);
  std::fprintf(stderr, "gst_rtx_receiver: listening\n");
  g_main_loop_run(app.loop);
  gst_element_set_state(app.pipeline, GST_STATE_NULL);
  gst_object_unref(app.pipeline);
  std::fclose(app.out);
  return app.exit_code;
}
