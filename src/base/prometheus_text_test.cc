#include "seedance/base/prometheus_text.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace seedance::base {
namespace {

TEST(PrometheusTextTest, FamiliesSamplesAndAHistogram) {
  PrometheusWriter w;
  w.Family("x_total", "counter", "Things.");
  w.Sample({{"k", "a\"b"}}, 3);
  w.Sample({}, 0.1);
  w.Family("lat_seconds", "histogram", "Latency.");
  const std::array<double, 2> bounds = {5e-7, 1};
  const std::array<uint64_t, 3> cumulative = {1, 4, 6};
  w.Histogram({{"tier", "host"}}, bounds, cumulative, 2.5);
  EXPECT_EQ(w.str(),
            "# HELP x_total Things.\n# TYPE x_total counter\n"
            "x_total{k=\"a\\\"b\"} 3\nx_total 0.1\n"
            "# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{tier=\"host\",le=\"5e-07\"} 1\n"
            "lat_seconds_bucket{tier=\"host\",le=\"1\"} 4\n"
            "lat_seconds_bucket{tier=\"host\",le=\"+Inf\"} 6\n"
            "lat_seconds_sum{tier=\"host\"} 2.5\n"
            "lat_seconds_count{tier=\"host\"} 6\n");
}

}  // namespace
}  // namespace seedance::base
