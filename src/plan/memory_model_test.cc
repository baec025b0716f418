#include "seedance/plan/memory_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "seedance/base/env.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/framework.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/model_figures.h"

namespace seedance::plan {
namespace {

// The ZeRO paper (Rajbhandari et al. 2020, figure 1): a 7.5B-parameter model on 64 GPUs in
// mixed-precision Adam holds 120, 31.4, 16.6 and 1.9 GB per GPU at stages 0-3.
TEST(MemoryModel, ZeroPaperModelStates) {
  TrainingSpec t;
  t.precision = base::NumericFormat::kBf16;
  t.optimizer = "adamw";
  const StateBytes b = StateBytesFor(t);
  EXPECT_EQ(b.total(), 16);
  const double expected_gb[] = {120, 31.4, 16.6, 1.9};
  for (int stage = 0; stage <= 3; ++stage) {
    const double gb = static_cast<double>(ModelStateBytes(7'500'000'000, b, stage, 64)) / 1e9;
    EXPECT_NEAR(gb, expected_gb[stage], 0.05) << "stage " << stage;
  }
}

TEST(MemoryModel, StateBytesPerPrecisionAndOptimizer) {
  TrainingSpec t;
  t.precision = base::NumericFormat::kFp32;
  t.optimizer = "sgd";
  EXPECT_EQ(StateBytesFor(t).total(), 8);   // fp32 weights and gradients, no master, no state
  t.precision = base::NumericFormat::kFp8;  // 16-bit weights, fp32 master
  t.optimizer = "lion";
  const StateBytes b = StateBytesFor(t);
  EXPECT_EQ(b.weight, 2);
  EXPECT_EQ(b.total(), 2 + 2 + 4 + 4);
}

// DeepSpeed's optimizers, bytes per parameter written out from its source (v0.6.2 to v0.16): in
// bf16 at ZeRO 0 BF16_Optimizer (bf16 weights and gradients, an fp32 accumulator of every
// gradient; the fp32 master partition and Adam's moments sharded over the d ranks); elsewhere
// in 16 bits its ZeRO optimizer or FP16_Optimizer (16-bit weights and gradients, fp32 master,
// moments and a copy of the gradient partition, sharded from ZeRO 1; OffloadTest moves them to
// the host). 1e9 parameters, d = 8.
TEST(MemoryModel, DeepSpeedOptimizersAsItsEngineBuildsThem) {
  TrainingSpec t;
  t.optimizer = "adamw";
  const int64_t params = 1'000'000'000;
  const int64_t d = 8;
  struct Case {
    base::NumericFormat precision;
    int zero;
    double bytes_per_param;
  };
  const Case cases[] = {
      {base::NumericFormat::kBf16, 0, 2 + (2 + 4) + (4 + 8) / 8.0},  // BF16_Optimizer
      {base::NumericFormat::kBf16, 1, 2 + 2 + (4 + 8 + 4) / 8.0},
      {base::NumericFormat::kBf16, 2, 2 + (2 + 4 + 8 + 4) / 8.0},
      {base::NumericFormat::kBf16, 3, (2 + 2 + 4 + 8 + 4) / 8.0},
      {base::NumericFormat::kFp16, 0, 2 + 2 + 4 + 8 + 4},  // FP16_Optimizer
      {base::NumericFormat::kFp16, 1, 2 + 2 + (4 + 8 + 4) / 8.0},
  };
  for (const Case& k : cases) {
    t.precision = k.precision;
    const ParallelConfig c{.zero_stage = k.zero};
    const StateBytes b = StateBytesFor(t, Framework::kDeepSpeed, &c);
    const int zero = ShardingStage(t, Framework::kDeepSpeed, c);
    EXPECT_EQ(zero, k.precision == base::NumericFormat::kBf16 && k.zero == 0 ? 1 : k.zero);
    EXPECT_NEAR(static_cast<double>(ModelStateBytes(params, b, zero, d)),
                k.bytes_per_param * static_cast<double>(params), 1)
        << base::NumericFormatName(k.precision) << " ZeRO " << k.zero;
  }
  // The other frameworks' ZeRO 0 in bf16 shards nothing.
  t.precision = base::NumericFormat::kBf16;
  EXPECT_EQ(ShardingStage(t, Framework::kMegatron, ParallelConfig{}), 0);
  EXPECT_EQ(ShardingStage(t, std::nullopt, ParallelConfig{}), 0);
}

// Korthikanti et al. 2022, equations 2-5 for a GPT layer with eager attention and dropout
// (16-bit activations): 34 sbh + 5 a s^2 b without parallelism; 10 sbh + 24 sbh/t + 5 a s^2 b/t
// with TP; (34 sbh + 5 a s^2 b)/t with TP and SP; 34 sbh/t with SP and selective recompute;
// 2 sbh (/t with SP) with full recompute.
TEST(MemoryModel, KorthikantiActivationsPerLayer) {
  ModelSpec m;
  m.family = "gpt";
  m.layers = 96;
  m.hidden_size = 12288;
  m.attention_heads = 96;
  m.kv_heads = 96;
  m.ffn_size = 4 * 12288;
  m.vocab_size = 51200;
  m.sequence_length = 2048;
  TrainingSpec t;
  t.precision = base::NumericFormat::kBf16;
  t.attention = "eager";
  const double s = 2048, h = 12288, a = 96;
  for (int64_t b : {1, 4}) {
    for (int64_t tp : {1, 8}) {
      const double sbh = s * static_cast<double>(b) * h;
      const double scores = 5 * a * s * s * static_cast<double>(b);
      const double tt = static_cast<double>(tp);
      ParallelConfig c{.tensor = tp, .micro_batch = b};
      EXPECT_EQ(LayerActivationBytes(m, t, c),
                std::llround(10 * sbh + 24 * sbh / tt + scores / tt));
      if (tp > 1) {
        c.sequence_parallel = true;
        EXPECT_EQ(LayerActivationBytes(m, t, c), std::llround((34 * sbh + scores) / tt));
        c.recompute = Recompute::kSelective;
        EXPECT_EQ(LayerActivationBytes(m, t, c), std::llround(34 * sbh / tt));
        c.recompute = Recompute::kFull;
        EXPECT_EQ(LayerActivationBytes(m, t, c), std::llround(2 * sbh / tt));
      }
    }
  }
}

// A Llama of `layers` layers of width 64 (4 heads, MLP 128) on sequences of 32 tokens.
ModelSpec TinyLlama(int64_t layers, int64_t vocab) {
  ModelSpec m;
  m.family = "llama";
  m.layers = layers;
  m.hidden_size = 64;
  m.attention_heads = 4;
  m.kv_heads = 4;
  m.ffn_size = 128;
  m.vocab_size = vocab;
  m.sequence_length = 32;
  return m;
}

// A Llama layer (no dropout, SwiGLU, GQA) with fused attention: norms 4 e sbh, Q e sbh,
// K and V 2 e sb kv, attention output e sbh, SwiGLU 3 e sbf, log-sum-exp 4 a s b.
TEST(MemoryModel, LlamaLayerWithGqaAndFlashAttention) {
  ModelSpec m;
  m.family = "llama";
  m.layers = 32;
  m.hidden_size = 4096;
  m.attention_heads = 32;
  m.kv_heads = 8;
  m.ffn_size = 14336;
  m.vocab_size = 128256;
  m.sequence_length = 8192;
  TrainingSpec t;
  t.precision = base::NumericFormat::kBf16;
  const double s = 8192, b = 2, h = 4096, kv = 8 * 128, f = 14336, a = 32;
  const double expected = 2 * s * b * (4 * h + h + 2 * kv + h + 3 * f) + 4 * a * s * b;
  EXPECT_EQ(LayerActivationBytes(m, t, {.micro_batch = 2}), std::llround(expected));
}

// TinyLlama(4, 1000) training with AdamW in `precision` on one node of 4 GPUs, 8 sequences a step.
JobSpec TinyFourGpuJob(base::NumericFormat precision) {
  JobSpec spec;
  spec.model = TinyLlama(4, 1000);
  spec.training.global_batch = 8;
  spec.training.precision = precision;
  spec.training.optimizer = "adamw";
  spec.hardware.gpus_per_node = 4;
  spec.hardware.nodes = 1;
  return spec;
}

// At ZeRO 3 the temporaries are FSDP's working set: the current and the prefetched layer's
// gathered weights and the current layer's gradients, plus the root unit (embeddings, and the
// head on the stage that holds it) gathered from forward to backward with its gradients.
// torchtitan reshards the embedding after its forward pass: only the head's unit stays.
TEST(MemoryModel, ZeroThreeTemporariesHoldTheRootUnit) {
  // fp32: 4-byte weights and gradients.
  JobSpec spec = TinyFourGpuJob(base::NumericFormat::kFp32);
  const ModelFigures f = ComputeModelFigures(spec.model);
  // A llama layer: 2 norms (2 x 64) + q, k, v, o (4 x 64^2) + gate, up, down (3 x 64 x 128)
  // = 128 + 16,384 + 24,576 = 41,088; embeddings 1000 x 64 = 64,000 = the untied head.
  ASSERT_EQ(f.layer_parameters, 41'088);
  ASSERT_EQ(f.embedding_parameters, 64'000);
  ParallelConfig c{.zero_stage = 3, .micro_batch = 1};
  // 41,088 x (2 x 4 + 4) + (64,000 + 64,000) x (4 + 4) = 493,056 + 1,024,000
  spec.framework = Framework::kFsdp;
  EXPECT_EQ(EstimateMemory(spec, f, c, int64_t{1} << 40).temporary_bytes, 1'517'056);
  // torchtitan: 493,056 + 64,000 x 8 = 1,005,056.
  spec.framework = Framework::kTorchtitan;
  EXPECT_EQ(EstimateMemory(spec, f, c, int64_t{1} << 40).temporary_bytes, 1'005'056);
  // Two pipeline stages with no framework named (none runs ZeRO 3 in a pipeline as FSDP's
  // units): the first holds the embeddings, the last the head; each root unit is 64,000
  // parameters: 493,056 + 64,000 x 8 = 1,005,056.
  spec.framework = Framework::kMegatron;
  c.pipeline = 2;
  EXPECT_EQ(EstimateMemory(spec, f, c, int64_t{1} << 40).temporary_bytes, 1'005'056);
  // Below ZeRO 3: Megatron's and DDP's buckets are the gradients (bucket views): nothing;
  // FSDP's SHARD_GRAD_OP reduce-scatters each unit's unsharded gradients (fp32 here): one layer
  // and the root, 41,088 x 4 + 128,000 x 4 = 676,352; DeepSpeed's ZeRO 2 holds two contiguous
  // reduce buckets of 5e8 elements (overlap_comm, as the time model overlaps its reduction and
  // --emit writes it), its ZeRO 1 none during the backward pass.
  c.pipeline = 1;
  c.zero_stage = 1;
  spec.framework = Framework::kMegatron;
  EXPECT_EQ(EstimateMemory(spec, f, c, int64_t{1} << 40).temporary_bytes, 0);
  c.zero_stage = 2;
  spec.framework = Framework::kFsdp;
  EXPECT_EQ(EstimateMemory(spec, f, c, int64_t{1} << 40).temporary_bytes, 676'352);
  spec.framework = Framework::kDeepSpeed;
  EXPECT_EQ(EstimateMemory(spec, f, c, int64_t{1} << 40).temporary_bytes,
            2 * int64_t{500'000'000} * 4);
  c.zero_stage = 1;
  EXPECT_EQ(EstimateMemory(spec, f, c, int64_t{1} << 40).temporary_bytes, 0);
}

// FSDP2 keeps every parameter sharded in fp32 with its gradients and Adam's moments (16 / d
// bytes a parameter) whatever the stage; ZeRO 2 holds the bf16 weights it gathered from the
// forward pass to the backward pass (2 bytes a parameter), never an unsharded fp32 copy.
// torchtitan under a pipeline keeps them the whole step, at ZeRO 2 and 3 alike, with the
// unsharded fp32 gradients it accumulates (4 more); its temporaries are one unit's fresh bf16
// gradients, the head's (64,000 parameters) on the last stage, a layer's (41,088) on the first.
TEST(MemoryModel, Fsdp2KeepsItsShardsAndWhatItGathers) {
  JobSpec spec = TinyFourGpuJob(base::NumericFormat::kBf16);
  const ModelFigures f = ComputeModelFigures(spec.model);
  spec.framework = Framework::kFsdp;
  auto at = [&](ParallelConfig c) { return EstimateMemory(spec, f, c, int64_t{1} << 40); };
  const int64_t p = f.parameters;
  EXPECT_EQ(at({.zero_stage = 3, .micro_batch = 1}).model_state_bytes, p * 16 / 4);
  EXPECT_EQ(at({.zero_stage = 2, .micro_batch = 1}).model_state_bytes, p * 16 / 4 + p * 2);
  spec.framework = Framework::kTorchtitan;
  for (int zero : {2, 3}) {
    const MemoryEstimate e = at({.pipeline = 2, .zero_stage = zero, .micro_batch = 1});
    const int64_t stage = e.parameters_on_gpu;  // two data-parallel ranks
    EXPECT_EQ(e.model_state_bytes, stage * 16 / 2 + stage * (2 + 4)) << zero;
    EXPECT_EQ(e.temporary_bytes, (std::string_view(e.peak_stage) == "last" ? 64'000 : 41'088) * 2)
        << zero;
  }
  EXPECT_EQ(at({.pipeline = 2, .zero_stage = 2, .micro_batch = 1}).total_bytes,
            at({.pipeline = 2, .zero_stage = 3, .micro_batch = 1}).total_bytes);
}

// DDP under autocast (ZeRO 0 under FSDP's plan) keeps fp32 weights and holds each matmul's bf16
// cast of its weight until the forward pass is over (autocast's cache, recomputed layers' too)
// and saves it for the backward pass: 2 bytes a parameter of the layers and the LM head.
// torchtitan's DDP keeps its buckets beside the gradients: 4 bytes more. Megatron's bf16 weights
// are what its GEMMs read: no cast.
TEST(MemoryModel, DdpUnderAutocastKeepsTheWeightsCasts) {
  JobSpec spec = TinyFourGpuJob(base::NumericFormat::kBf16);
  spec.framework = Framework::kFsdp;
  const ModelFigures f = ComputeModelFigures(spec.model);
  auto states = [&](Recompute recompute) {
    const ParallelConfig c{.zero_stage = 0, .recompute = recompute, .micro_batch = 1};
    return EstimateMemory(spec, f, c, int64_t{1} << 40).model_state_bytes;
  };
  // fp32 weights and gradients and Adam's two moments (16 bytes a parameter), and the casts of
  // the 4 layers' 41,088 and the head's 1000 x 64 (TinyLlama, above).
  const int64_t casts = (4 * 41'088 + 64'000) * 2;
  EXPECT_EQ(states(Recompute::kNone), f.parameters * 16 + casts);
  EXPECT_EQ(states(Recompute::kFull), states(Recompute::kNone));
  spec.framework = Framework::kTorchtitan;
  EXPECT_EQ(states(Recompute::kFull), f.parameters * (16 + 4) + casts);
  // Accelerate's DDP keeps DDP's default buckets, fp32 beside the fp32 gradients
  // (tests/python/test_accelerate_ddp_buckets.py reads them in PyTorch).
  spec.framework = Framework::kAccelerate;
  EXPECT_EQ(states(Recompute::kNone), f.parameters * (16 + 4) + casts);
  spec.framework = Framework::kMegatron;
  EXPECT_EQ(states(Recompute::kNone), states(Recompute::kFull));
}

// A framework's measured overhead scales its whole estimate and no other framework's.
TEST(MemoryModel, MeasuredOverheadAppliesToItsFrameworkOnly) {
  JobSpec spec;
  spec.model = TinyLlama(4, 1000);
  spec.training.global_batch = 8;
  spec.hardware.gpus_per_node = 4;
  spec.hardware.nodes = 1;
  const ModelFigures f = ComputeModelFigures(spec.model);
  const ParallelConfig c{.zero_stage = 1, .micro_batch = 1};
  MemorySettings settings;
  settings.measured_overhead_fraction[static_cast<size_t>(Framework::kDeepSpeed)] = 0.25;
  for (Framework fw : {Framework::kDeepSpeed, Framework::kMegatron}) {
    spec.framework = fw;
    const MemoryEstimate plain = EstimateMemory(spec, f, c, int64_t{1} << 40);
    const MemoryEstimate with = EstimateMemory(spec, f, c, int64_t{1} << 40, settings);
    const int64_t expected = fw == Framework::kDeepSpeed ? (plain.total_bytes + 3) / 4 : 0;
    EXPECT_EQ(with.measured_overhead_bytes, expected) << FrameworkName(fw);
    EXPECT_EQ(with.total_bytes, plain.total_bytes + expected) << FrameworkName(fw);
  }
}

// DeepSpeed's pipeline engine: the stage outputs of the micro-batches in flight (partitioned
// under tensor parallelism), the output and gradient rebuilt for a backward pass, the receive
// buffers; counted by hand from its engine for the first stage, which holds the peak here (the
// step replay's agreement covers the other stages: step_replay_test.cc).
TEST(MemoryModel, DeepSpeedPipelineBuffersFollowItsEngine) {
  const ModelSpec m = TinyLlama(8, 16);  // small logits: the first stage holds the peak
  JobSpec spec;
  spec.model = m;
  spec.training.global_batch = 64;  // 16 micro-batches of 2 per pipeline at d = 2
  spec.training.precision = base::NumericFormat::kBf16;
  spec.training.optimizer = "adamw";
  spec.hardware.gpus_per_node = 8;
  spec.hardware.nodes = 1;
  const ModelFigures f = ComputeModelFigures(m);
  const double a = 2.0 * 32 * 2 * 64;  // e s b h: one micro-batch's hidden states, 8,192 bytes
  for (int64_t t : {int64_t{1}, int64_t{2}}) {
    ParallelConfig c{.tensor = t, .pipeline = 4 / t, .zero_stage = 1, .micro_batch = 2};
    c.recompute = Recompute::kFull;
    const auto with = [&](Framework fw) {
      spec.framework = fw;
      return EstimateMemory(spec, f, c, int64_t{1} << 40);
    };
    const MemoryEstimate ds = with(Framework::kDeepSpeed);
    const MemoryEstimate mg = with(Framework::kMegatron);
    ASSERT_STREQ(ds.peak_stage, mg.peak_stage);
    ASSERT_STREQ(ds.peak_stage, "first");
    // The first stage: p micro-batches in flight, no input clone, one gradient receive buffer.
    const double p = static_cast<double>(c.pipeline);
    const double expected =
        t > 1 ? p * a / 2 + 3 * a + a / 2  // partitions, rebuilt output + gradient + copy
              : p * a + a + a;             // whole outputs, the incoming gradient
    EXPECT_EQ(ds.activation_bytes - mg.activation_bytes, static_cast<int64_t>(expected)) << t;
    EXPECT_EQ(ds.temporary_bytes, 0);  // ZeRO 1: nothing at the backward peak
  }
}

// Megatron-LM's interleaved schedule at commit d98e8a6 (megatron/core/pipeline_parallel/
// schedules.py), run pass by pass: its micro-batch group N is the least that
// forward_backward_pipelining_with_interleaving accepts (p <= N <= m, and the last group empty
// or holding p or more), the warm-up get_pp_rank_microbatches's 2 (p - rank - 1) + (v - 1) N
// chunk passes, at most all m v of them; then one forward and one backward pass until no
// forward pass is left. The most chunk passes alive at once, each 1/v of the stage, is what the
// rank holds. 1F1B (v = 1) warms up with min(p - rank - 1, m). Korthikanti et al. 2022
// (section 4.2.3) give the first stage's closed form for interleaving with N = p,
// p (1 + (p - 1)/(p v)) micro-batches, while m is large enough. Returns -1 where Megatron
// refuses m.
double MostAliveInMegatronSchedule(int64_t p, int64_t v, int64_t m, int64_t rank) {
  const int64_t total = m * v;
  int64_t warmup = 0;
  if (v == 1) {
    warmup = std::min(p - rank - 1, m);
  } else {
    int64_t group = p;
    while (group <= m && m % group != 0 && m % group < p) ++group;
    if (group > m) return -1;
    warmup = std::min(2 * (p - rank - 1) + (v - 1) * group, total);
  }
  int64_t alive = 0, most = 0, forwards = 0;
  for (; forwards < warmup; ++forwards) most = std::max(most, ++alive);
  while (forwards < total) {
    ++forwards;
    most = std::max(most, ++alive);
    --alive;  // its backward pass
  }
  return static_cast<double>(most) / static_cast<double>(v);
}

TEST(MemoryModel, InFlightMicroBatchesFollowMegatronsSchedules) {
  for (int64_t p : {2, 3, 4, 8, 16}) {
    for (int64_t v : {1, 2, 3, 4, 8}) {
      for (int64_t m = 1; m <= 3 * p + 1; ++m) {
        const ParallelConfig c{.pipeline = p, .virtual_stages = v};
        if (v > 1 && m < p) {
          // Megatron refuses it; a layout no framework runs is counted as PyTorch's schedule.
          EXPECT_EQ(InterleavedGroup(p, m, Framework::kMegatron), 0);
          EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, m, 0),
                           InFlightMicroBatches(c, m, 0, Framework::kTorchtitan));
          continue;
        }
        for (int64_t rank = 0; rank < p; ++rank) {
          EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, m, rank, Framework::kMegatron),
                           MostAliveInMegatronSchedule(p, v, m, rank))
              << "p " << p << " v " << v << " m " << m << " rank " << rank;
          // No framework named: counted as Megatron-Core runs it.
          EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, m, rank),
                           InFlightMicroBatches(c, m, rank, Framework::kMegatron));
        }
      }
      const ParallelConfig c{.pipeline = p, .virtual_stages = v};
      const double korthikanti =
          static_cast<double>(p) * (1 + static_cast<double>(p - 1) / static_cast<double>(p * v));
      if (v > 1) {
        EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 8 * p), korthikanti);
      }
    }
  }
  // Since Megatron-Core's tunable schedule (4295be1, November 2024) m = p is no all-forward
  // case: the last stage holds ((v - 1) p + 1)/v micro-batches, the first all of them.
  const ParallelConfig c{.pipeline = 16, .virtual_stages = 2};
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 16, 0), 16);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 16, 15), 8.5);
  // m = 18 on 16 stages: one group of 18 (a group of 16 would leave a last group of 2).
  EXPECT_EQ(InterleavedGroup(16, 18), 18);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 18, 15), 9.5);
}

// PyTorch's ScheduleInterleaved1F1B (torchtitan's), as tests/python/test_pipeline_schedules.py
// reads it from PyTorch into tests/fixtures/pytorch_interleaved_in_flight.csv: the chunk passes
// each rank holds at its peak, and the micro-batch counts the schedule refuses, for p 2-8,
// v 2-4 and every m from 1 to 3p + 1.
TEST(MemoryModel, InFlightMicroBatchesMatchPyTorchsInterleavedSchedule) {
  const char* root = std::getenv("SEEDANCE_SOURCE_DIR");
  ASSERT_NE(root, nullptr) << "SEEDANCE_SOURCE_DIR names the source tree";
  auto text = base::Env::Default()->ReadFile(std::string(root) +
                                             "/tests/fixtures/pytorch_interleaved_in_flight.csv");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto spec = ParseJobSpec(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  spec->framework = Framework::kTorchtitan;
  spec->model.layers = 288;  // even stages for every p x v of the table
  std::istringstream lines(*text);
  std::string line;
  std::getline(lines, line);
  ASSERT_EQ(line, "pipeline,virtual_stages,micro_batches,rank,chunk_passes_in_flight");
  int rows = 0, refused = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string p, v, m, rank, held;
    std::getline(fields, p, ',');
    std::getline(fields, v, ',');
    std::getline(fields, m, ',');
    std::getline(fields, rank, ',');
    std::getline(fields, held, ',');
    ParallelConfig c{.pipeline = std::stoll(p),
                     .virtual_stages = std::stoll(v),
                     .sequence_parallel = false,
                     .zero_stage = 3,
                     .micro_batch = 1};
    spec->hardware.gpus_per_node = c.pipeline;
    spec->hardware.nodes = 1;
    spec->training.global_batch = std::stoll(m);
    const std::string blocker = Inexpressible(Framework::kTorchtitan, *spec, c);
    if (held == "refused") {
      EXPECT_NE(blocker.find("equal rounds"), std::string::npos) << line << ": " << blocker;
      ++refused;
      continue;
    }
    EXPECT_EQ(blocker, "") << line;
    EXPECT_DOUBLE_EQ(
        InFlightMicroBatches(c, std::stoll(m), std::stoll(rank), Framework::kTorchtitan) *
            static_cast<double>(c.virtual_stages),
        std::stod(held))
        << line;
    ++rows;
  }
  EXPECT_GT(rows, 500);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace seedance::plan
