#include "common/base/metrics_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

namespace tilestream {
namespace {

TEST(MetricsText, FamiliesHaveHelpAndTypeAndSamplesTheirLabels) {
  MetricsText m;
  m.Family("tilestream_sent_bytes_total", "counter", "bytes sent");
  m.Sample({{"tile", "r0c0"}, {"nic", "eth2"}}, uint64_t{123456789012});
  m.Sample({{"tile", "r0c1"}, {"nic", "eth3"}}, 0.5);
  m.Family("tilestream_up", "gauge", "one");
  m.Sample({}, uint64_t{1});
  EXPECT_EQ(m.text(),
            "# HELP tilestream_sent_bytes_total bytes sent\n"
            "# TYPE tilestream_sent_bytes_total counter\n"
            "tilestream_sent_bytes_total{tile=\"r0c0\",nic=\"eth2\"} 123456789012\n"
            "tilestream_sent_bytes_total{tile=\"r0c1\",nic=\"eth3\"} 0.5\n"
            "# HELP tilestream_up one\n"
            "# TYPE tilestream_up gauge\n"
            "tilestream_up 1\n");
}

TEST(MetricsText, LabelValuesAndHelpAreEscaped) {
  MetricsText m;
  m.Family("x", "gauge", "a \\ b\nc \"d\"");
  m.Sample({{"node", "a\"b\\c\nd"}}, uint64_t{1});
  EXPECT_EQ(m.text(),
            "# HELP x a \\\\ b\\nc \"d\"\n"
            "# TYPE x gauge\n"
            "x{node=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(MetricsText, SpecialValuesAndSuffixes) {
  MetricsText m;
  m.Family("h", "histogram", "skew");
  m.Sample({{"le", "+Inf"}}, std::numeric_limits<double>::infinity(), "_bucket");
  m.Sample({}, std::nan(""), "_sum");
  EXPECT_EQ(m.text(), "# HELP h skew\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} +Inf\nh_sum NaN\n");
}

}  // namespace
}  // namespace tilestream
