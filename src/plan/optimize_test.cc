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

TEST(OptimizeTest, MemorySectionOfTheDefaultJob) {
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok());
  const base::Report& m = (*r)["memory"];
  // 6,738,415,616 parameters x 16 bytes (bf16 weight and gradient, fp32
  // master, two fp32 Adam moments) do not fit 80 GB without sharding.
  EXPECT_EQ(m["persistent_bytes"], int64_t{6'738'415'616} * 16);
  EXPECT_EQ(m["fits"], false);
  EXPECT_EQ(m["max_micro_batch"], 0);
  EXPECT_LE(m["lower_bound_bytes"].get<int64_t>(), m["planned_peak_bytes"].get<int64_t>());
  EXPECT_LE(m["planned_peak_bytes"].get<int64_t>(), m["peak_without_reuse_bytes"].get<int64_t>());
}

TEST(OptimizeTest, MaxMicroBatchIsTheLargestThatFits) {
  // A 2-layer model on an L4 (24 GB): the bisection's answer must fit, and
  // one more sequence per micro-batch must not.
  const std::string base_yaml =
      "name: small\n"
      "model: {family: gpt, layers: 2, hidden_size: 1024, attention_heads: 16, ffn_size: 4096,\n"
      "        vocab_size: 32000, sequence_length: 2048}\n"
      "training: {global_batch: GB, micro_batch: MB, precision: bf16}\n"
      "hardware: {gpu: L4, gpus_per_node: 1}\n";
  auto with = [&](int64_t mb, int64_t gb) {
    std::string y = base_yaml;
    y.replace(y.find("GB"), 2, std::to_string(gb));
    y.replace(y.find("MB"), 2, std::to_string(mb));
    return OptimizeYaml(y, "s.yaml", cost::GpuCatalog::BuiltIn(), {});
  };
  auto r = with(1, 4096);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const int64_t max_mb = (*r)["memory"]["max_micro_batch"].get<int64_t>();
  ASSERT_GT(max_mb, 1);
  EXPECT_LT(max_mb, 4096);
  auto at_max = with(max_mb, max_mb);
  auto above = with(max_mb + 1, max_mb + 1);
  ASSERT_TRUE(at_max.ok() && above.ok());
  EXPECT_EQ((*at_max)["memory"]["fits"], true);
  EXPECT_EQ((*above)["memory"]["fits"], false);
}

TEST(OptimizeTest, DryRunStopsAfterTheNormalisedSpec) {
  OptimizeOptions opts{.profile = Profile::kProd, .dry_run = true};
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), opts);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->contains("derived"));
  EXPECT_FALSE(r->contains("memory"));
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
