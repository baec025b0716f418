#include "seedance/plan/optimize.h"

#include <gtest/gtest.h>

namespace seedance::plan {
namespace {

TEST(OptimizeTest, DefaultJobReport) {
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const base::Report& d = (*r)["derived"];
  EXPECT_EQ(d["parameters"], 6'738'415'616);
  EXPECT_EQ(d["tokens_per_step"], 512 * 4096);
  EXPECT_EQ(d["data_parallel_size"], 16);
  EXPECT_EQ(d["gradient_accumulation_steps"], 512 / (4 * 16));
  EXPECT_EQ(d["weight_bytes"], int64_t{6'738'415'616} * 2);
  EXPECT_DOUBLE_EQ(d["cluster_peak_tflops"].get<double>(), 16 * 989.5);
  const double flops_step = d["model_flops_per_step"].get<double>();
  EXPECT_DOUBLE_EQ(d["step_seconds_lower_bound"].get<double>(), flops_step / (16 * 989.5e12));
  EXPECT_EQ((*r)["job"]["profile"], "dev");
  EXPECT_EQ((*r)["job"]["dry_run"], false);
  EXPECT_DOUBLE_EQ((*r)["price"]["cluster_per_hour_usd"].get<double>(), 16 * 12.29);
}

TEST(OptimizeTest, DryRunStopsAfterTheNormalisedSpec) {
  OptimizeOptions opts{.profile = Profile::kProd, .dry_run = true};
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), opts);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->contains("derived"));
  EXPECT_EQ((*r)["job"]["profile"], "prod");
  EXPECT_EQ((*r)["job"]["search_time_limit_s"], 10.0);
}

TEST(OptimizeTest, ServingReportCountsKvCache) {
  const char* yaml =
      "name: chat\n"
      "model: {family: llama, layers: 32, hidden_size: 4096, attention_heads: 32, kv_heads: 8,\n"
      "        ffn_size: 14336, vocab_size: 128256, sequence_length: 8192}\n"
      "serving: {context_length: 8192, concurrent_requests: 16, precision: fp8}\n"
      "hardware: {gpu: H100-SXM, gpus_per_node: 1}\n";
  auto r = OptimizeYaml(yaml, "s.yaml", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const base::Report& d = (*r)["derived"];
  // 2 x 32 layers x 8 kv heads x 128 dims x 1 byte.
  EXPECT_EQ(d["kv_cache_bytes_per_token"], 65'536);
  EXPECT_EQ(d["kv_cache_bytes"], int64_t{65'536} * 8192 * 16);
  EXPECT_EQ(d["cluster_memory_bytes"], int64_t{80'000'000'000});
}

TEST(OptimizeTest, Profiles) {
  EXPECT_EQ(*ParseProfile("dev"), Profile::kDev);
  EXPECT_EQ(ParseProfile("staging").status().where(), "--profile");
  EXPECT_LT(SettingsFor(Profile::kDev).search_time_limit_s,
            SettingsFor(Profile::kProd).search_time_limit_s);
}

}  // namespace
}  // namespace seedance::plan
