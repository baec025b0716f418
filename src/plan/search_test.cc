#include "seedance/plan/search.h"

#include <gtest/gtest.h>

#include "seedance/plan/framework.h"
#include "seedance/plan/optimize.h"

namespace seedance::plan {
namespace {

JobSpec Parse(const std::string& yaml) {
  auto spec = ParseJobSpec(yaml, "t.yaml", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

const cost::GpuSpec& Gpu(const JobSpec& spec) {
  return **cost::GpuCatalog::BuiltIn().Get(spec.hardware.gpu);
}

// Every layout the search keeps is valid, runs on some framework and fits with the headroom, the
// ranking is by step time, and no such layout left out by the brute-force enumeration below both
// fits with the headroom and is faster than the first.
TEST(Search, AgreesWithBruteForceOnASmallJob) {
  const JobSpec spec = Parse(
      "name: small\n"
      "model: {family: llama, layers: 8, hidden_size: 2048, attention_heads: 16, kv_heads: 4,\n"
      "        ffn_size: 5632, vocab_size: 32000, sequence_length: 2048}\n"
      "training: {global_batch: 64, micro_batch: 1, precision: bf16}\n"
      "hardware: {gpu: L4, gpus_per_node: 4, nodes: 2}\n");
  const cost::GpuSpec& gpu = Gpu(spec);
  PlanSettings settings;
  settings.space.every_micro_batch = true;
  const SearchResult r = Search(spec, gpu, settings);
  ASSERT_FALSE(r.fitting.empty());
  for (size_t i = 0; i < r.fitting.size(); ++i) {
    const Evaluation& e = r.fitting[i];
    EXPECT_TRUE(CheckParallelism(e.config, spec).ok());
    EXPECT_TRUE(e.memory.fits);
    EXPECT_LE(static_cast<double>(e.memory.total_bytes),
              static_cast<double>(gpu.MemoryBytes()) * (1 - spec.planning.headroom));
    if (i > 0) {
      EXPECT_LE(r.fitting[i - 1].time.step_s, e.time.step_s);
    }
    EXPECT_EQ(spec.training.global_batch %
                  (e.config.micro_batch * DataParallel(e.config, spec.hardware.total_gpus())),
              0);
  }
  int64_t fitting = 0;
  const double capacity = static_cast<double>(gpu.MemoryBytes()) * (1 - spec.planning.headroom);
  for (int64_t t = 1; t <= 8; ++t) {
    for (int64_t cp : {1, 2}) {  // the search's bound: at least 1,024 tokens a GPU
      for (int64_t p = 1; p <= 8; ++p) {
        for (int64_t b = 1; b <= 64; ++b) {
          for (int64_t v = 1; v <= 2; ++v) {
            for (int zero = 0; zero <= 3; ++zero) {
              for (bool sp : {false, true}) {
                for (Recompute rc : {Recompute::kNone, Recompute::kSelective,
                                     Recompute::kOpSelective, Recompute::kFull}) {
                  const ParallelConfig c{.tensor = t,
                                         .pipeline = p,
                                         .virtual_stages = v,
                                         .sequence_parallel = sp,
                                         .context_parallel = cp,
                                         .zero_stage = zero,
                                         .recompute = rc,
                                         .micro_batch = b};
                  if (!CheckParallelism(c, spec).ok() || !RunnableBySome(spec, c)) continue;
                  const Evaluation e = Evaluate(spec, gpu, c, settings);
                  if (static_cast<double>(e.memory.total_bytes) > capacity) continue;
                  ++fitting;
                  EXPECT_GE(e.time.step_s, r.fitting.front().time.step_s);
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(fitting, static_cast<int64_t>(r.fitting.size()));
}

TEST(Search, InvalidLayoutsNameTheirKey) {
  const JobSpec spec = Parse(std::string(DefaultJobYaml()));
  ParallelConfig c = spec.parallelism;
  c.tensor = 3;  // 32 heads
  EXPECT_EQ(CheckParallelism(c, spec).where(), "parallelism.tensor");
  c.tensor = 16;  // more than a node
  EXPECT_EQ(CheckParallelism(c, spec).where(), "parallelism.tensor");
  c = spec.parallelism;
  c.pipeline = 3;  // 16 GPUs
  EXPECT_EQ(CheckParallelism(c, spec).where(), "parallelism.pipeline");
  c = spec.parallelism;
  c.sequence_parallel = true;  // without TP
  EXPECT_EQ(CheckParallelism(c, spec).where(), "parallelism.sequence_parallel");
  c = spec.parallelism;
  c.micro_batch = 3;  // 512 is not a multiple of 3 x 16
  EXPECT_EQ(CheckParallelism(c, spec).where(), "training.global_batch");
}

// More sharding and more recomputation never need more memory; ZeRO 3 with full recomputation
// of the default job fits where the pure data-parallel layout does not.
TEST(Search, MemoryFallsWithShardingAndRecomputation) {
  const JobSpec spec = Parse(std::string(DefaultJobYaml()));
  const cost::GpuSpec& gpu = Gpu(spec);
  const ModelFigures f = ComputeModelFigures(spec.model);
  int64_t previous = INT64_MAX;
  for (int zero = 0; zero <= 3; ++zero) {
    ParallelConfig c{.zero_stage = zero, .micro_batch = 4};
    const int64_t bytes = EstimateMemory(spec, f, c, gpu.MemoryBytes()).total_bytes;
    EXPECT_LT(bytes, previous) << "zero " << zero;
    previous = bytes;
  }
  int64_t last = INT64_MAX;
  for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    ParallelConfig c{.zero_stage = 3, .recompute = rc, .micro_batch = 4};
    const int64_t bytes = EstimateMemory(spec, f, c, gpu.MemoryBytes()).total_bytes;
    EXPECT_LE(bytes, last);
    last = bytes;
  }
  EXPECT_FALSE(EstimateMemory(spec, f, {.micro_batch = 4}, gpu.MemoryBytes()).fits);
  EXPECT_TRUE(EstimateMemory(spec, f, spec.parallelism, gpu.MemoryBytes()).fits);
}

// Time model sanity: recomputation costs time, TP across a slower link costs more, the
// pipeline bubble is bubble x (p - 1)/v micro-batches.
TEST(Search, TimeModelDirections) {
  const JobSpec spec = Parse(std::string(DefaultJobYaml()));
  const cost::GpuSpec& gpu = Gpu(spec);
  const Evaluation none = Evaluate(spec, gpu, {.zero_stage = 3, .micro_batch = 4});
  const Evaluation full =
      Evaluate(spec, gpu, {.zero_stage = 3, .recompute = Recompute::kFull, .micro_batch = 4});
  EXPECT_GT(full.time.step_s, none.time.step_s);
  EXPECT_GT(full.hfu, full.mfu);
  EXPECT_DOUBLE_EQ(none.hfu, none.mfu);
  const Evaluation pp = Evaluate(spec, gpu, {.pipeline = 4, .micro_batch = 4});
  const double m = 512.0 / (4 * 4);
  const double bubble = PlanSettings{}.hardware.coefficients[Coef::kBubble];  // the fitted one
  EXPECT_NEAR(pp.time.pp_bubble_s, 3 * (pp.time.compute_s + pp.time.tp_comm_s) / m * bubble, 1e-9);
  const Evaluation pp2 =
      Evaluate(spec, gpu, {.pipeline = 4, .virtual_stages = 2, .micro_batch = 4});
  EXPECT_NEAR(pp2.time.pp_bubble_s, pp.time.pp_bubble_s / 2, 1e-9);
  // Fewer micro-batches than stages, interleaved (PyTorch's schedule runs m = 2 on 4 stages):
  // each micro-batch's chunks wait on the stages, p + (m - 1)/v = 4.5 micro-batch times for a
  // step of m = 2, a bubble of 2.5 rather than (p - 1)/v = 1.5.
  JobSpec titan = spec;
  titan.framework = Framework::kTorchtitan;
  const ParallelConfig few{
      .pipeline = 4, .virtual_stages = 2, .zero_stage = 3, .micro_batch = 64};  // m = 2
  ASSERT_EQ(Inexpressible(Framework::kTorchtitan, titan, few), "");
  const Evaluation short_step = Evaluate(titan, gpu, few);
  EXPECT_NEAR(short_step.time.pp_bubble_s,
              2.5 * (short_step.time.compute_s + short_step.time.tp_comm_s) / 2 * bubble, 1e-9);
  // Without interleaving the same count is 1F1B's m + p - 1: the bubble stays p - 1.
  ParallelConfig plain = few;
  plain.virtual_stages = 1;
  const Evaluation plain_step = Evaluate(titan, gpu, plain);
  EXPECT_NEAR(plain_step.time.pp_bubble_s,
              3.0 * (plain_step.time.compute_s + plain_step.time.tp_comm_s) / 2 * bubble, 1e-9);
  // The attention kernel: Megatron's default on Hopper is cuDNN's, FSDP's FlashAttention-2, which
  // the FlashAttention-3 paper (figure 5, H100 causal forward) puts at 335 against cuDNN's 539.
  const ParallelConfig dp{.zero_stage = 1, .recompute = Recompute::kFull, .micro_batch = 1};
  const ParallelConfig shard{.zero_stage = 3, .recompute = Recompute::kFull, .micro_batch = 1};
  const auto step = [&](Framework framework, const ParallelConfig& c, const char* attention) {
    JobSpec job = spec;
    job.framework = framework;
    job.training.attention = attention;
    return Evaluate(job, gpu, c).time.step_s;
  };
  EXPECT_DOUBLE_EQ(step(Framework::kMegatron, dp, "flash"),
                   step(Framework::kMegatron, dp, "cudnn"));
  EXPECT_GT(step(Framework::kMegatron, dp, "flash2"), step(Framework::kMegatron, dp, "cudnn"));
  EXPECT_DOUBLE_EQ(step(Framework::kFsdp, shard, "flash"), step(Framework::kFsdp, shard, "flash2"));
  // DeepSpeed's model code calls flash-attn or SDPA too (no Transformer Engine).
  EXPECT_DOUBLE_EQ(step(Framework::kDeepSpeed, dp, "flash"),
                   step(Framework::kDeepSpeed, dp, "flash2"));
  JobSpec pcie = spec;
  pcie.hardware.intra_node = "pcie";
  const ParallelConfig tp{.tensor = 8, .micro_batch = 4};
  EXPECT_GT(Evaluate(pcie, gpu, tp).time.tp_comm_s, Evaluate(spec, gpu, tp).time.tp_comm_s);
}

}  // namespace
}  // namespace seedance::plan

namespace seedance::plan {
namespace {

// A job that names its framework is searched over that framework's layouts only.
TEST(Search, TheFrameworkBoundsTheLayouts) {
  JobSpec spec = Parse(std::string(DefaultJobYaml()));
  const cost::GpuSpec& gpu = Gpu(spec);
  for (Framework f :
       {Framework::kFsdp, Framework::kMegatron, Framework::kTorchtitan, Framework::kDeepSpeed}) {
    spec.framework = f;
    const SearchResult r = Search(spec, gpu);
    ASSERT_FALSE(r.fitting.empty()) << FrameworkName(f);
    for (const Evaluation& e : r.fitting) {
      EXPECT_EQ(Inexpressible(f, spec, e.config), "") << FrameworkName(f);
    }
  }
  spec.framework = Framework::kFsdp;
  for (const Evaluation& e : Search(spec, gpu).fitting) {
    EXPECT_EQ(e.config.tensor * e.config.pipeline * e.config.context_parallel, 1);
  }
}

// Long sequences bring context parallelism into the search, each GPU keeping at least
// kMinContextChunk tokens of a sequence.
TEST(Search, LongSequencesWeighContextParallelism) {
  const JobSpec spec = Parse(
      "name: long\n"
      "framework: megatron\n"
      "model: {family: llama, layers: 32, hidden_size: 4096, attention_heads: 32, kv_heads: 8,\n"
      "        ffn_size: 14336, vocab_size: 128256, sequence_length: 32768}\n"
      "training: {global_batch: 16, micro_batch: 1, precision: bf16}\n"
      "hardware: {gpu: H100-SXM, gpus_per_node: 8, nodes: 2}\n");
  const SearchResult r = Search(spec, Gpu(spec));
  ASSERT_FALSE(r.fitting.empty());
  bool any = false;
  for (const Evaluation& e : r.fitting) {
    any = any || e.config.context_parallel > 1;
    EXPECT_GE(spec.model.sequence_length / e.config.context_parallel, kMinContextChunk);
  }
  EXPECT_TRUE(any);
}

// The headroom is a bound on every recommendation's memory: more headroom, fewer layouts.
TEST(Search, TheHeadroomBoundsMemory) {
  JobSpec spec = Parse(std::string(DefaultJobYaml()));
  spec.framework = std::nullopt;
  const cost::GpuSpec& gpu = Gpu(spec);
  size_t previous = SIZE_MAX;
  for (double headroom : {0.0, 0.1, 0.3}) {
    spec.planning.headroom = headroom;
    const SearchResult r = Search(spec, gpu);
    for (const Evaluation& e : r.fitting) {
      EXPECT_LE(static_cast<double>(e.memory.total_bytes),
                static_cast<double>(gpu.MemoryBytes()) * (1 - headroom));
    }
    EXPECT_LT(r.fitting.size(), previous);
    previous = r.fitting.size();
  }
}

}  // namespace
}  // namespace seedance::plan
