#include "seedance/plan/optimize.h"

#include <gtest/gtest.h>

#include "seedance/plan/serving.h"

namespace seedance::plan {
namespace {

TEST(OptimizeTest, DefaultJobReport) {
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const base::Report& d = (*r)["derived"];
  EXPECT_EQ(d["parameters"], 6'738'415'616);
  EXPECT_EQ(d["tokens_per_step"], 512 * 4096);
  EXPECT_EQ(d["weight_bytes"], int64_t{6'738'415'616} * 2);
  EXPECT_DOUBLE_EQ(d["cluster_peak_tflops"].get<double>(), 16 * 989.5);
  const double flops_step = d["model_flops_per_step"].get<double>();
  EXPECT_DOUBLE_EQ(d["step_seconds_lower_bound"].get<double>(), flops_step / (16 * 989.5e12));
  EXPECT_EQ((*r)["job"]["profile"], "dev");
  EXPECT_EQ((*r)["job"]["dry_run"], false);
  EXPECT_DOUBLE_EQ((*r)["price"]["cluster_per_hour_usd"].get<double>(), 16 * 6.88);
  // The stated layout: FSDP full shard with full recomputation, micro-batch 4.
  const base::Report& p = (*r)["parallelism"];
  EXPECT_EQ(p["zero_stage"], 3);
  EXPECT_EQ(p["recompute"], "full");
  EXPECT_EQ(p["data_parallel"], 16);
  EXPECT_EQ(p["gradient_accumulation_steps"], 512 / (4 * 16));
}

// The acceptance of the planner: the default job comes back with a plan that fits, reasons and
// a saving; before and after carry the same keys; every micro-batch proposed keeps the global
// batch exact; the report never disagrees with itself.
TEST(OptimizeTest, DefaultJobPlansToAFittingLayoutWithASaving) {
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["fits"], true);
  const base::Report& before = (*r)["before"];
  const base::Report& after = (*r)["after"];
  for (const char* key : {"fits", "memory_bytes_per_gpu", "step_time_s", "tokens_per_s_per_gpu",
                          "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu",
                          "cost_per_step_usd", "energy_per_step_j", "parallelism"}) {
    EXPECT_TRUE(before.contains(key)) << key;
    EXPECT_TRUE(after.contains(key)) << key;
  }
  EXPECT_EQ(before["parallelism"], (*r)["parallelism"]);
  EXPECT_EQ(after["fits"], true);
  EXPECT_LE(after["memory_bytes_per_gpu"].get<int64_t>(), (*r)["gpu_memory_bytes"].get<int64_t>());
  EXPECT_LE(after["step_time_s"].get<double>(), before["step_time_s"].get<double>());
  EXPECT_GT((*r)["saving"]["step_time_pct"].get<double>(), 0);
  EXPECT_GT((*r)["saving"]["cost_per_step_usd"].get<double>(), 0);
  EXPECT_NEAR(before["cost_per_step_usd"].get<double>() - after["cost_per_step_usd"].get<double>(),
              (*r)["saving"]["cost_per_step_usd"].get<double>(), 1e-12);
  EXPECT_FALSE((*r)["reasons"].empty());
  auto divides = [](const base::Report& par) {
    return 512 % (par["micro_batch"].get<int64_t>() * par["data_parallel"].get<int64_t>()) == 0;
  };
  EXPECT_TRUE(divides(after["parallelism"]));
  for (const auto& alt : (*r)["alternatives"]) EXPECT_TRUE(divides(alt["parallelism"]));
  for (const auto& alt : (*r)["pareto_front"]["layouts"]) EXPECT_TRUE(divides(alt["parallelism"]));
  // One figure, one value: the cost per step is the step time at the cluster's price.
  EXPECT_NEAR(after["cost_per_step_usd"].get<double>(),
              after["step_time_s"].get<double>() / 3600 * 16 * 6.88, 1e-12);
}

// A 13B model at 16k tokens on 8 A100-40GB needs recomputation: the report adds the per-layer
// plan (MEM-5) that fits the same memory at no more recompute time than the uniform choice.
TEST(OptimizeTest, PerLayerRecomputePlanForARecomputingLayout) {
  const char* yaml =
      "name: long\n"
      "model: {family: llama, layers: 40, hidden_size: 5120, attention_heads: 40,\n"
      "        ffn_size: 13824, vocab_size: 32000, sequence_length: 16384}\n"
      "training: {global_batch: 64, micro_batch: 1, precision: bf16}\n"
      "hardware: {gpu: A100-40GB, gpus_per_node: 8}\n";
  auto r = OptimizeYaml(yaml, "long.yaml", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_NE((*r)["after"]["parallelism"]["recompute"], "none");
  const base::Report& plan = (*r)["recompute_plan"];
  EXPECT_EQ(plan["fits"], true);
  EXPECT_LE(plan["activation_bytes"].get<int64_t>(),
            plan["activation_budget_bytes"].get<int64_t>());
  EXPECT_LE(plan["recompute_s"].get<double>(), plan["uniform_recompute_s"].get<double>() + 1e-12);
  const int64_t layers = 40 / (*r)["after"]["parallelism"]["pipeline"].get<int64_t>();
  EXPECT_EQ(plan["dropped_per_layer"].size(), static_cast<size_t>(layers));
}

TEST(OptimizeTest, EvaluateOnlyStopsAtBefore) {
  OptimizeOptions opts;
  opts.evaluate_only = true;
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), opts);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->contains("before"));
  EXPECT_FALSE(r->contains("after"));
  EXPECT_FALSE(r->contains("search"));
  EXPECT_EQ((*r)["fits"], true);
}

TEST(OptimizeTest, AJobThatCannotFitSaysWhatWouldMakeItFit) {
  // A 7B-shaped model on one 24 GB L4: its 108 GB of model states fit no layout; more nodes
  // (one L4 each) would.
  const char* yaml =
      "name: big\n"
      "model: {family: llama, layers: 32, hidden_size: 4096, attention_heads: 32,\n"
      "        ffn_size: 11008, vocab_size: 32000, sequence_length: 4096}\n"
      "training: {global_batch: 64, micro_batch: 1, precision: bf16}\n"
      "hardware: {gpu: L4, gpus_per_node: 1}\n";
  auto r = OptimizeYaml(yaml, "big.yaml", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["fits"], false);
  EXPECT_TRUE((*r)["after"].is_null());
  const base::Report& change = (*r)["does_not_fit"]["smallest_change"];
  ASSERT_TRUE(change.contains("hardware.nodes")) << change.dump();
  EXPECT_GT(change["hardware.nodes"].get<int64_t>(), 1);
}

TEST(OptimizeTest, DryRunStopsAfterTheNormalisedSpec) {
  OptimizeOptions opts{.profile = Profile::kProd, .dry_run = true};
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), opts);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->contains("derived"));
  EXPECT_FALSE(r->contains("before"));
  EXPECT_EQ((*r)["job"]["profile"], "prod");
  EXPECT_EQ((*r)["job"]["search_micro_batches"], "every divisor");
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
  // 2 x 32 layers x 8 kv heads x 128 dims x 2 bytes: unquantized keys and values are bf16
  // activations beside fp8 weights.
  EXPECT_EQ(d["kv_cache_bytes_per_token"], 131'072);
  EXPECT_EQ(d["kv_cache_bytes"], int64_t{131'072} * 8192 * 16);
  EXPECT_EQ(d["cluster_memory_bytes"], int64_t{80} << 30);  // the datasheet's 80 GB are GiB
  // The verdict: it fits one H100, and the largest concurrency and context it reports are the
  // edges of what fits (one more request or token does not).
  EXPECT_EQ((*r)["fits"], true);
  const base::Report& after = (*r)["after"];
  EXPECT_EQ(after["tensor"], 1);
  // auto on vLLM (the default engine): its fp8 cache's measured KL is above 1e-3, so the cache
  // stays unquantized, bf16.
  EXPECT_EQ(after["engine"], "vllm");
  EXPECT_EQ(after["kv_precision"], "weights");
  EXPECT_EQ(after["kv_bits_per_value"], 16.0);
  EXPECT_GT(FindKvPrecision(ServingEngine::kVllm, "fp8", "")->kl_mean, 1e-3);
  auto spec = ParseJobSpec(yaml, "s.yaml", cost::GpuCatalog::BuiltIn());
  ASSERT_TRUE(spec.ok());
  const cost::GpuSpec& gpu = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const KvPrecision kv = *FindKvPrecision(ServingEngine::kVllm, "weights", "");
  const int64_t most = after["max_concurrent_requests"].get<int64_t>();
  ASSERT_GE(most, 16);
  JobSpec edge = *spec;
  edge.serving.concurrent_requests = most;
  EXPECT_TRUE(EvaluateServing(edge, gpu, 1, kv).fits);
  edge.serving.concurrent_requests = most + 1;
  EXPECT_FALSE(EvaluateServing(edge, gpu, 1, kv).fits);
  // Memory would hold a longer context; the model's own is the cap.
  EXPECT_EQ(after["max_context_length"].get<int64_t>(), spec->model.sequence_length);
  // Cost per million tokens is the GPU-hour price over the throughput.
  EXPECT_NEAR(after["cost_per_million_tokens_usd"].get<double>(),
              6.88 / 3600 / after["tokens_per_s"].get<double>() * 1e6, 1e-9);
}

TEST(OptimizeTest, ServingThatCannotFit) {
  const char* yaml =
      "name: big\n"
      "model: {family: llama, layers: 80, hidden_size: 8192, attention_heads: 64, kv_heads: 8,\n"
      "        ffn_size: 28672, vocab_size: 128256, sequence_length: 8192}\n"
      "serving: {context_length: 8192, concurrent_requests: 16}\n"
      "hardware: {gpu: L4, gpus_per_node: 1}\n";
  auto r = OptimizeYaml(yaml, "s.yaml", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["fits"], false);
  EXPECT_TRUE((*r)["after"].is_null());
  EXPECT_EQ((*r)["does_not_fit"]["max_concurrent_requests"], 0);
}

TEST(OptimizeTest, Profiles) {
  EXPECT_EQ(*ParseProfile("dev"), Profile::kDev);
  EXPECT_EQ(ParseProfile("staging").status().where(), "profile");
  EXPECT_FALSE(SettingsFor(Profile::kDev).space.every_micro_batch);
  EXPECT_TRUE(SettingsFor(Profile::kProd).space.every_micro_batch);
  EXPECT_LT(SettingsFor(Profile::kDev).space.max_virtual_stages,
            SettingsFor(Profile::kProd).space.max_virtual_stages);
}

}  // namespace
}  // namespace seedance::plan
