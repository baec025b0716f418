// Optimizer offload (ZeRO-Offload) in the memory model, the time model, the search and the
// emitted DeepSpeed config.
#include <gtest/gtest.h>

#include <algorithm>

#include "seedance/plan/emit.h"
#include "seedance/plan/memory_model.h"
#include "seedance/plan/search.h"
#include "seedance/plan/time_model.h"

namespace seedance::plan {
namespace {

// A 13B Llama on one node of `gpus` H100s; `host` is the hardware.host section or "".
JobSpec OffloadJob13B(const std::string& host, int64_t gpus = 8) {
  const std::string yaml =
      "name: offload\n"
      "framework: deepspeed\n"  // ZeRO-Offload is DeepSpeed's
      "model: {family: llama, layers: 40, hidden_size: 5120, attention_heads: 40, kv_heads: 40,\n"
      "        ffn_size: 13824, vocab_size: 32000, sequence_length: 4096}\n"
      "training: {global_batch: 64, micro_batch: 1, precision: bf16, optimizer: adamw}\n"
      "hardware: {gpu: H100-SXM, gpus_per_node: " +
      std::to_string(gpus) + (host.empty() ? "" : ", host: " + host) + "}\n";
  auto spec = ParseJobSpec(yaml, "o.yaml", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

const char* kOffloadHost = "{memory_gbytes: 2000, memory_gbytes_per_s: 400, pcie_gbytes_per_s: 50}";

const cost::GpuSpec& OffloadGpu() { return **cost::GpuCatalog::BuiltIn().Get("H100-SXM"); }

// The GPU keeps 16-bit weights and gradients; the host keeps each shard's fp32 master weights,
// Adam's two moments and an fp32 gradient copy: 16 bytes per parameter of the shard. Without
// offload DeepSpeed's ZeRO 1 keeps those 16 bytes of its shard on the GPU.
TEST(OffloadTest, MemoryMovesMasterAndStatesToTheHost) {
  const JobSpec spec = OffloadJob13B(kOffloadHost);
  const ModelFigures f = ComputeModelFigures(spec.model);
  ParallelConfig c{.zero_stage = 1, .recompute = Recompute::kFull, .micro_batch = 1};
  const MemoryEstimate on = EstimateMemory(spec, f, c, OffloadGpu().MemoryBytes());
  c.offload_optimizer = true;
  const MemoryEstimate off = EstimateMemory(spec, f, c, OffloadGpu().MemoryBytes());
  const double psi = static_cast<double>(f.parameters);
  EXPECT_NEAR(static_cast<double>(off.model_state_bytes), psi * 4, 1);  // w + g
  EXPECT_NEAR(static_cast<double>(on.model_state_bytes), psi * (2 + 2 + 16.0 / 8), 1);
  EXPECT_NEAR(static_cast<double>(off.host_bytes_per_node), psi / 8 * 16 * 8, 8);
  EXPECT_EQ(on.host_bytes_per_node, 0);
  EXPECT_EQ(off.activation_bytes, on.activation_bytes);
  // A host too small for the shards: the layout does not fit, however empty the GPU.
  const JobSpec small_host =
      OffloadJob13B("{memory_gbytes: 100, memory_gbytes_per_s: 400, pcie_gbytes_per_s: 50}");
  EXPECT_FALSE(EstimateMemory(small_host, f, c, OffloadGpu().MemoryBytes()).fits);
  EXPECT_TRUE(off.fits);
}

// The CPU step streams the shard's master weights and moments (read and write), its fp32
// gradients and the new 16-bit weights at the node's bandwidth shared by 8 GPUs; the weight
// shard's upload is exposed, the gradient shard's download hides behind the backward pass.
TEST(OffloadTest, TimeChargesTheHostStepAndTheUpload) {
  const JobSpec spec = OffloadJob13B(kOffloadHost);
  const ModelFigures f = ComputeModelFigures(spec.model);
  const Links links = ResolveLinks(spec.hardware, OffloadGpu());
  ParallelConfig c{.zero_stage = 2, .recompute = Recompute::kFull, .micro_batch = 1};
  const StepTime gpu_step = EstimateStepTime(spec, f, c, OffloadGpu(), links);
  c.offload_optimizer = true;
  const StepTime host_step = EstimateStepTime(spec, f, c, OffloadGpu(), links);
  const double shard = static_cast<double>(f.parameters) / 8;
  EXPECT_NEAR(host_step.optimizer_s, shard * (2 * 12 + 4 + 2) / (400e9 / 8), 1e-9);
  EXPECT_GE(host_step.offload_s, shard * 2 / 50e9 - 1e-12);
  EXPECT_NEAR(host_step.step_s - host_step.optimizer_s - host_step.offload_s,
              gpu_step.step_s - gpu_step.optimizer_s, 1e-9);
  EXPECT_EQ(gpu_step.offload_s, 0);
}

// ZeRO-Offload's transfers, G the 16-bit gradient shard over PCIe, B a micro-batch's backward pass.
// Every layout sends the gradients to the host as fp32 (2G, hidden behind the backward pass where
// the reduction overlaps it) and brings the weights back (G). ZeRO 2 accumulates on the host: each
// micro-batch after the first brings the running sum back and every one sends it out (the last
// too, as DeepSpeed 0.19.8 does), 2G - B exposed for each round trip and G - B for the extra
// send; ZeRO 3 round-trips every micro-batch, the first included. ZeRO 1 reduces
// after the backward passes (2G + G exposed) and, with more than one micro-batch, copies the host
// sum back once more (G). A PCIe of 1 GB/s so that nothing hides.
TEST(OffloadTest, ZeroTwoAndThreeSendTheirAccumulatingGradientsThroughTheHost) {
  const JobSpec slow =
      OffloadJob13B("{memory_gbytes: 2000, memory_gbytes_per_s: 400, pcie_gbytes_per_s: 1}");
  const ModelFigures f = ComputeModelFigures(slow.model);
  const Links links = ResolveLinks(slow.hardware, OffloadGpu());
  auto offload = [&](int zero, int64_t global_batch) {
    JobSpec spec = slow;
    spec.training.global_batch = global_batch;  // over 8 GPUs at micro-batch 1
    const ParallelConfig c{.zero_stage = zero,
                           .recompute = Recompute::kFull,
                           .micro_batch = 1,
                           .offload_optimizer = true};
    return EstimateStepTime(spec, f, c, OffloadGpu(), links).offload_s;
  };
  const double g = static_cast<double>(f.parameters) / 8 * 2 / 1e9;
  const double one = offload(2, 8);  // one micro-batch a step: (2G - B) + G
  EXPECT_GT(one, g);
  EXPECT_LT(one, 3 * g);
  const double b = 3 * g - one;
  EXPECT_NEAR(offload(2, 64), one + 7 * (2 * g - b) + std::max(0.0, g - b), 1e-9);
  EXPECT_NEAR(offload(3, 8), one + (2 * g - b), 1e-9);
  EXPECT_NEAR(offload(3, 64), one + 8 * (2 * g - b), 1e-9);
  EXPECT_NEAR(offload(1, 8), 3 * g, 1e-9);
  EXPECT_NEAR(offload(1, 64), 4 * g, 1e-9);
}

// Offload is weighed only when the host is described, and chosen only when it pays. On 8 GPUs
// without a host the fastest layout that fits is ZeRO 3 with full recomputation. With a host of
// 400 GB/s an offloaded layout without recomputation is faster than it, and the plan offloads, its
// reasons saying what keeping the optimizer on the GPU would cost; a host of 40 GB/s makes the CPU
// step ten times as long, and the plan is the one without a host. On one GPU nothing fits without
// offload.
TEST(OffloadTest, SearchChoosesOffloadOnlyWhenItPays) {
  const SearchResult without = Search(OffloadJob13B(""), OffloadGpu());
  ASSERT_FALSE(without.fitting.empty());
  for (const Evaluation& e : without.fitting) EXPECT_FALSE(e.config.offload_optimizer);
  const JobSpec spec = OffloadJob13B(kOffloadHost);
  const SearchResult with = Search(spec, OffloadGpu());
  EXPECT_GT(with.candidates, without.candidates);
  ASSERT_FALSE(with.fitting.empty());
  const Evaluation& best = with.fitting.front();
  EXPECT_TRUE(best.config.offload_optimizer);
  EXPECT_LT(best.time.step_s, without.fitting.front().time.step_s);
  size_t plain = 0, offloaded = 0;
  for (const Evaluation& e : with.fitting) {
    if (!e.config.offload_optimizer) {
      plain += e.config.gradient_compression == GradCompression::kNone ? 1 : 0;
      continue;
    }
    ++offloaded;
    EXPECT_GE(e.config.zero_stage, 1);
    EXPECT_LE(static_cast<double>(e.memory.host_bytes_per_node),
              spec.hardware.host.memory_gbytes * 1e9);
  }
  EXPECT_EQ(plain, without.fitting.size());  // the layouts without offload are all still there
  EXPECT_GT(offloaded, 0u);
  bool named = false;
  for (const std::string& r : Reasons(best, spec, OffloadGpu(), {})) {
    named = named || r.starts_with("offload_optimizer true");
  }
  EXPECT_TRUE(named);
  const SearchResult slow_host =
      Search(OffloadJob13B("{memory_gbytes: 2000, memory_gbytes_per_s: 40, pcie_gbytes_per_s: 50}"),
             OffloadGpu());
  ASSERT_FALSE(slow_host.fitting.empty());
  EXPECT_EQ(slow_host.fitting.front().config, without.fitting.front().config);

  // One GPU: 16 bytes per parameter of model states alone exceed 80 GB.
  EXPECT_TRUE(Search(OffloadJob13B("", 1), OffloadGpu()).fitting.empty());
  const SearchResult single = Search(OffloadJob13B(kOffloadHost, 1), OffloadGpu());
  ASSERT_FALSE(single.fitting.empty());
  for (const Evaluation& e : single.fitting) EXPECT_TRUE(e.config.offload_optimizer);
}

TEST(OffloadTest, LayoutRulesNameTheKey) {
  JobSpec spec = OffloadJob13B(kOffloadHost);
  ParallelConfig c{.zero_stage = 0, .micro_batch = 1, .offload_optimizer = true};
  base::Status s = CheckParallelism(c, spec);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.where(), "parallelism.offload_optimizer");
  c.zero_stage = 1;
  EXPECT_TRUE(CheckParallelism(c, spec).ok());
  s = CheckParallelism(c, OffloadJob13B(""));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.where(), "parallelism.offload_optimizer");
  // A host section missing a field is an error naming it.
  auto bad = ParseJobSpec(
      "name: x\nmodel: {family: llama, layers: 2, hidden_size: 64, attention_heads: 4, "
      "kv_heads: 4, ffn_size: 128, vocab_size: 100, sequence_length: 32}\n"
      "training: {global_batch: 8, micro_batch: 1}\n"
      "hardware: {gpu: H100-SXM, gpus_per_node: 8, host: {memory_gbytes: 10, "
      "memory_gbytes_per_s: 10}}\n",
      "o.yaml", cost::GpuCatalog::BuiltIn());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().where().find("hardware.host.pcie_gbytes_per_s"), std::string::npos)
      << bad.status().ToString();
}

}  // namespace
}  // namespace seedance::plan
