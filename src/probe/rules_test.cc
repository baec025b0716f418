#include "seedance/probe/rules.h"

#include <gtest/gtest.h>

#include <cmath>

namespace seedance::probe {
namespace {

Value V(const std::string& metric, double value, const std::string& gpu = "") {
  Value v;
  v.metric = metric;
  v.value = value;
  if (!gpu.empty()) v.labels = {{"gpu", gpu}};
  if (metric.rfind("net.", 0) == 0) v.labels = {{"interface", "eth0"}};
  return v;
}

std::vector<std::string> Rules(const std::vector<Value>& values) {
  std::vector<std::string> out;
  for (const auto& f : Evaluate(values)) out.push_back(f.rule);
  return out;
}

TEST(RulesTest, EachRuleFiresAboveItsThresholdOnly) {
  using R = std::vector<std::string>;
  struct Case {
    std::vector<Value> values;
    R want;
  } cases[] = {
      // gpu.mem_bw: > 90 warning, (70, 90] the saturation knee.
      {{V("gpu.mem_bw", 92, "0")}, R{"gpu_mem_bw_high"}},
      {{V("gpu.mem_bw", 90, "0")}, R{"gpu_mem_bw_knee"}},
      {{V("gpu.mem_bw", 70, "0")}, R{}},
      // net.share > 70 % of line rate.
      {{V("net.share", 71)}, R{"net_saturated"}},
      {{V("net.share", 70)}, R{}},
      // iowait > 12 %.
      {{V("cpu.iowait", 12.5)}, R{"iowait_high"}},
      {{V("cpu.iowait", 12)}, R{}},
      // gpu.mem_used > 85 %.
      {{V("gpu.mem_used", 86, "0")}, R{"gpu_mem_pressure"}},
      // gpu.util < 40 %.
      {{V("gpu.util", 39, "0")}, R{"gpu_underused"}},
      // util > 85 and memory < 60 on the same GPU -> mixed precision.
      {{V("gpu.util", 90, "0"), V("gpu.mem_used", 50, "0")}, R{"mixed_precision_candidate"}},
      // ... not across two different GPUs.
      {{V("gpu.util", 90, "0"), V("gpu.mem_used", 50, "1")}, R{}},
      {{V("gpu.util", 90, "0"), V("gpu.mem_used", 60, "0")}, R{}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Rules(c.values), c.want) << c.values[0].metric << "=" << c.values[0].value;
  }
}

TEST(RulesTest, SaturationModelMatchesTheNote) {
  // k = 0.8, x = 1500 GB/s of B = 2048 GB/s -> 1 - e^(-0.5859) = 0.443.
  EXPECT_NEAR(EffectiveComputeFraction(1500.0 / 2048.0), 1 - std::exp(-0.8 * 1500 / 2048), 1e-12);
  EXPECT_DOUBLE_EQ(EffectiveComputeFraction(0), 0);
  // The finding quotes it: 80 % busy -> 1 - e^-0.64 = 47 %.
  auto f = Evaluate({V("gpu.mem_bw", 80, "0")});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].message.find("47%"), std::string::npos) << f[0].message;
  EXPECT_EQ(f[0].metric, "gpu.mem_bw{gpu=0}");
}

}  // namespace
}  // namespace seedance::probe
