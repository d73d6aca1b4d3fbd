// The options of a web listener of the wall (the coordinator's, a display
// node's) from the config: `[http]`'s limits and control.token_file's
// token (docs/config.md); what a listener did, for its /metrics.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/metrics_text.h"
#include "common/base/result.h"
#include "common/net/http_service.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// `name` says which listener in messages ("http listener (http.port in
// wall.toml)"); an unreadable token file is an error.
Result<HttpServiceOptions> HttpListenerOptions(const WallConfig& c, std::string name,
                                               std::string address, uint16_t port);

// The listener's counters as Prometheus families (tilestream_http_*), each
// sample labelled `labels` (docs/operations.md).
void AppendHttpMetrics(const HttpCounters& k, const MetricLabels& labels, MetricsText* m);

}  // namespace tilestream
