#include "seedance/plan/emit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "seedance/plan/memory_model.h"
#include "seedance/plan/optimize.h"
#include "seedance/plan/search.h"

namespace seedance::plan {
namespace {

// The default job with no framework named: the search weighs every layout, and each test picks
// the framework it writes.
JobSpec DefaultJob() {
  auto spec = ParseJobSpec(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  spec->framework = std::nullopt;
  return *spec;
}

ParallelConfig Layout(int64_t tp, int64_t pp, int zero, Recompute rc, int64_t v = 1,
                      bool sp = false) {
  ParallelConfig c;
  c.tensor = tp;
  c.pipeline = pp;
  c.zero_stage = zero;
  c.recompute = rc;
  c.virtual_stages = v;
  c.sequence_parallel = sp;
  c.micro_batch = 2;
  return c;
}

// Which framework runs which layout, case by case from the frameworks' documentation (the
// table in emit.h): true = expressible.
TEST(EmitTest, ExpressibleLayoutsTable) {
  const JobSpec spec = DefaultJob();
  using R = Recompute;
  struct Case {
    ParallelConfig c;
    bool deepspeed, fsdp, megatron;
  };
  const std::vector<Case> cases = {
      {Layout(1, 1, 0, R::kNone), true, true, true},
      {Layout(1, 1, 1, R::kNone), true, false, true},  // FSDP: no ZeRO-1
      {Layout(1, 1, 2, R::kFull), true, true, false},  // Megatron: no ZeRO-2
      {Layout(1, 1, 3, R::kFull), true, true, false},  // Megatron: no ZeRO-3
      {Layout(1, 1, 3, R::kSelective), false, false, false},
      {Layout(2, 1, 1, R::kNone), true, false, true},                 // DeepSpeed: AutoTP
      {Layout(2, 1, 2, R::kNone), true, false, false},                // AutoTP with ZeRO-2
      {Layout(2, 1, 3, R::kNone), false, false, false},               // AutoTP stops at ZeRO-2
      {Layout(2, 1, 1, R::kSelective, 1, true), false, false, true},  // SP: Megatron only
      {Layout(1, 2, 1, R::kNone), true, false, true},      // DeepSpeed pipeline with ZeRO-1
      {Layout(1, 2, 2, R::kNone), false, false, false},    // DeepSpeed pipeline: ZeRO <= 1
      {Layout(2, 2, 0, R::kFull), false, false, true},     // DeepSpeed: PP x TP needs Megatron
      {Layout(1, 4, 0, R::kNone, 2), false, false, true},  // interleaving: Megatron only
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    EXPECT_EQ(Inexpressible(Framework::kDeepSpeed, spec, k.c).empty(), k.deepspeed) << i;
    EXPECT_EQ(Inexpressible(Framework::kFsdp, spec, k.c).empty(), k.fsdp) << i;
    EXPECT_EQ(Inexpressible(Framework::kMegatron, spec, k.c).empty(), k.megatron) << i;
  }
  JobSpec fp8 = spec;
  fp8.training.precision = base::NumericFormat::kFp8;
  EXPECT_FALSE(Inexpressible(Framework::kDeepSpeed, fp8, Layout(1, 1, 0, R::kNone)).empty());
  EXPECT_FALSE(Inexpressible(Framework::kFsdp, fp8, Layout(1, 1, 0, R::kNone)).empty());
  EXPECT_TRUE(Inexpressible(Framework::kMegatron, fp8, Layout(1, 1, 0, R::kNone)).empty());
  JobSpec lion = spec;
  lion.training.optimizer = "lion";
  EXPECT_FALSE(Inexpressible(Framework::kMegatron, lion, Layout(1, 1, 0, R::kNone)).empty());
}

TEST(EmitTest, FrameworkNamesRoundTrip) {
  for (Framework f : {Framework::kDeepSpeed, Framework::kFsdp, Framework::kMegatron,
                      Framework::kTorchtitan, Framework::kAccelerate}) {
    EXPECT_EQ(*ParseFramework(FrameworkName(f), "--emit"), f);
  }
  const auto bad = ParseFramework("horovod", "--emit");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("torchtitan"), std::string::npos)
      << bad.status().ToString();
  // A job spec names what runs it; accelerate is a launcher for FSDP or DeepSpeed.
  EXPECT_FALSE(ParseJobFramework("accelerate", "framework").ok());
  EXPECT_EQ(*ParseJobFramework("torchtitan", "framework"), Framework::kTorchtitan);
  EXPECT_EQ(*ParseJobFramework("nemo", "framework"), Framework::kMegatron);
  EXPECT_EQ(*ParseJobFramework("fsdp2", "framework"), Framework::kFsdp);
}

// DeepSpeed asserts train_batch_size == micro-batch x accumulation x data-parallel size; every
// fitting layout of the default job that DeepSpeed runs keeps it.
TEST(EmitTest, DeepSpeedBatchIdentityHoldsForEveryExpressibleLayout) {
  const JobSpec spec = DefaultJob();
  const auto gpu = cost::GpuCatalog::BuiltIn().Get(spec.hardware.gpu);
  ASSERT_TRUE(gpu.ok());
  int written = 0;
  for (const Evaluation& e : Search(spec, **gpu).fitting) {
    if (!Inexpressible(Framework::kDeepSpeed, spec, e.config).empty()) continue;
    const base::Report ds = EmitContent(Framework::kDeepSpeed, spec, e.config);
    const int64_t d = DataParallel(e.config, spec.hardware.total_gpus());
    EXPECT_EQ(ds["train_batch_size"].get<int64_t>(),
              ds["train_micro_batch_size_per_gpu"].get<int64_t>() *
                  ds["gradient_accumulation_steps"].get<int64_t>() * d);
    EXPECT_EQ(ds["zero_optimization"]["stage"], e.config.zero_stage);
    EXPECT_EQ(ds.contains("activation_checkpointing"), e.config.recompute == Recompute::kFull);
    EXPECT_EQ(ds["bf16"]["enabled"], true);  // the default job trains in bf16
    ++written;
  }
  EXPECT_GT(written, 0);
}

// DeepSpeed's contiguous reduce buckets are on in the written config exactly where the memory
// model counts them (DeepSpeedContiguousBucket, and always at ZeRO 3): ZeRO 1 turns them off, so
// that DeepSpeed from v0.13 on, which keeps them on by default, all-reduces after the backward
// passes with no bucket held, as v0.6-v0.12 did (tests/python/test_deepspeed_reduce_buckets.py
// runs both settings in DeepSpeed).
TEST(EmitTest, DeepSpeedContiguousBucketsAreWhatTheMemoryModelCounts) {
  const JobSpec spec = DefaultJob();
  for (int zero = 0; zero <= 3; ++zero) {
    for (bool offload : {false, true}) {
      ParallelConfig c = Layout(1, 1, zero, Recompute::kFull);
      c.offload_optimizer = offload && zero > 0;
      const base::Report ds = EmitContent(Framework::kDeepSpeed, spec, c);
      const bool contiguous = ds["zero_optimization"]["contiguous_gradients"].get<bool>();
      if (zero == 1 || zero == 2) {
        EXPECT_EQ(contiguous, DeepSpeedContiguousBucket(c)) << zero << " " << offload;
      }
      EXPECT_EQ(ds["zero_optimization"]["overlap_comm"].get<bool>(), zero >= 2) << zero;
    }
  }
  EXPECT_FALSE(
      EmitContent(Framework::kDeepSpeed, spec,
                  Layout(1, 1, 1, Recompute::kFull))["zero_optimization"]["contiguous_gradients"]
          .get<bool>());
}

TEST(EmitTest, MegatronFlagsForAnInterleavedLayout) {
  const JobSpec spec = DefaultJob();  // llama, 32 layers, MHA, untied, flash attention
  ParallelConfig c = Layout(2, 4, 1, Recompute::kSelective, 2, true);
  c.micro_batch = 1;
  const base::Report args = EmitContent(Framework::kMegatron, spec, c);
  const std::vector<std::string> expected = {
      "--tensor-model-parallel-size", "2", "--pipeline-model-parallel-size", "4",
      // 32 layers / (4 stages x 2 chunks) = 4 layers per virtual stage
      "--num-layers-per-virtual-pipeline-stage", "4", "--sequence-parallel",
      "--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather",
      "--tp-comm-overlap", "--recompute-activations", "--micro-batch-size", "1",
      "--global-batch-size", "512", "--bf16", "--optimizer", "adam", "--num-layers", "32",
      "--hidden-size", "4096", "--ffn-hidden-size", "11008", "--num-attention-heads", "32",
      "--seq-length", "4096", "--max-position-embeddings", "4096", "--swiglu", "--normalization",
      "RMSNorm", "--disable-bias-linear", "--position-embedding-type", "rope",
      "--untie-embeddings-and-output-weights", "--use-flash-attn"};
  EXPECT_EQ(args.get<std::vector<std::string>>(), expected);
  const std::string text = EmitText(Framework::kMegatron, args);
  EXPECT_TRUE(
      text.starts_with("--tensor-model-parallel-size 2\n--pipeline-model-parallel-size 4\n"))
      << text;
  EXPECT_NE(text.find("\n--sequence-parallel\n"), std::string::npos);
  EXPECT_NE(text.find("\n--normalization RMSNorm\n"), std::string::npos);
  EXPECT_TRUE(text.ends_with("--use-flash-attn\n"));
}

// End-stage layer counts and partial recomputation as Megatron-LM's flags; a split only
// DeepSpeed's uniform partition makes (34 layers on 4 stages, no end-stage counts) is not a
// Megatron layout, nor end stages a virtual stage does not divide, nor partial recomputation
// with interleaving (Megatron counts it per model chunk).
TEST(EmitTest, MegatronFlagsForUnequalStagesAndPartialRecomputation) {
  JobSpec spec = DefaultJob();  // 32 layers
  ParallelConfig c = Layout(1, 4, 1, Recompute::kFull, 2);
  c.first_stage_layers = 6;  // 6 + 10 + 10 + 6, every count even
  c.last_stage_layers = 6;
  EXPECT_EQ(Inexpressible(Framework::kMegatron, spec, c), "");
  auto args = EmitContent(Framework::kMegatron, spec, c).get<std::vector<std::string>>();
  auto after = [&args](const std::string& flag) {
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == flag) return args[i + 1];
    }
    return std::string("(absent)");
  };
  EXPECT_EQ(after("--decoder-first-pipeline-num-layers"), "6");
  EXPECT_EQ(after("--decoder-last-pipeline-num-layers"), "6");
  EXPECT_EQ(after("--num-virtual-stages-per-pipeline-rank"), "2");
  EXPECT_EQ(after("--recompute-method"), "uniform");
  EXPECT_EQ(after("--num-layers-per-virtual-pipeline-stage"), "(absent)");
  ParallelConfig odd = c;  // 7 + 9 + 9 + 7: not divisible by 2 virtual stages
  odd.first_stage_layers = odd.last_stage_layers = 7;
  EXPECT_NE(Inexpressible(Framework::kMegatron, spec, odd).find("divisible"), std::string::npos);
  ParallelConfig partial = c;
  partial.recompute_layers = 3;
  EXPECT_NE(Inexpressible(Framework::kMegatron, spec, partial).find("per model chunk"),
            std::string::npos);
  partial.virtual_stages = 1;
  EXPECT_EQ(Inexpressible(Framework::kMegatron, spec, partial), "");
  args = EmitContent(Framework::kMegatron, spec, partial).get<std::vector<std::string>>();
  EXPECT_EQ(after("--recompute-method"), "block");
  EXPECT_EQ(after("--recompute-num-layers"), "3");

  spec.model.layers = 34;
  const ParallelConfig split = Layout(1, 4, 1, Recompute::kFull);
  EXPECT_NE(Inexpressible(Framework::kMegatron, spec, split).find("evenly"), std::string::npos);
  EXPECT_TRUE(Inexpressible(Framework::kDeepSpeed, spec, split).empty());
  // torchtitan (ZeRO 3 here, which it runs): the per-stage counts are what it cannot write.
  const ParallelConfig titan = Layout(1, 4, 3, Recompute::kFull);
  EXPECT_NE(Inexpressible(Framework::kTorchtitan, spec, titan).find("per-stage layer counts"),
            std::string::npos);
}

// A named attention kernel: Megatron-Core's --attention-backend, which sets Transformer Engine's
// NVTE_FLASH_ATTN / NVTE_FUSED_ATTN (language_module.py at d98e8a6); cuDNN's kernel is Transformer
// Engine's, which only the Megatron plan runs.
TEST(EmitTest, AttentionKernelIsMegatronsAttentionBackend) {
  JobSpec spec = DefaultJob();
  const ParallelConfig c = Layout(1, 1, 1, Recompute::kNone);
  const struct {
    const char* attention;
    const char* backend;
  } cases[] = {{"flash", "(absent)"}, {"flash2", "flash"}, {"cudnn", "fused"}};
  for (const auto& k : cases) {
    spec.training.attention = k.attention;
    const auto args = EmitContent(Framework::kMegatron, spec, c).get<std::vector<std::string>>();
    std::string backend = "(absent)";
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--attention-backend") backend = args[i + 1];
    }
    EXPECT_EQ(backend, k.backend) << k.attention;
    const bool pinned =
        std::find(args.begin(), args.end(), "--flash-attention-version") != args.end();
    EXPECT_EQ(pinned, std::string(k.attention) == "flash2") << k.attention;
  }
  spec.training.attention = "cudnn";
  EXPECT_EQ(Inexpressible(Framework::kMegatron, spec, c), "");
  for (Framework f : {Framework::kDeepSpeed, Framework::kFsdp, Framework::kTorchtitan}) {
    EXPECT_NE(Inexpressible(f, spec, Layout(1, 1, 3, Recompute::kFull)).find("cuDNN"),
              std::string::npos)
        << FrameworkName(f);
  }
  spec.training.attention = "flash2";
  EXPECT_EQ(Inexpressible(Framework::kFsdp, spec, Layout(1, 1, 3, Recompute::kFull)), "");
  // Materialized scores: Transformer Engine's unfused attention (--attention-backend unfused),
  // without context parallelism; its softmax unfused only through the environment, which the
  // flags cannot set.
  spec.training.attention = "eager";
  const auto args = EmitContent(Framework::kMegatron, spec, c).get<std::vector<std::string>>();
  const auto backend = std::find(args.begin(), args.end(), "--attention-backend");
  ASSERT_NE(backend, args.end());
  EXPECT_EQ(*(backend + 1), "unfused");
  EXPECT_EQ(std::find(args.begin(), args.end(), "--use-flash-attn"), args.end());
  ParallelConfig ring = c;
  ring.context_parallel = 2;
  EXPECT_NE(Inexpressible(Framework::kMegatron, spec, ring).find("context parallelism"),
            std::string::npos);
  spec.training.attention = "eager-unfused";
  EXPECT_NE(Inexpressible(Framework::kMegatron, spec, c).find("NVTE_MASKED_SOFTMAX_FUSION"),
            std::string::npos);
  EXPECT_EQ(Inexpressible(Framework::kDeepSpeed, spec, Layout(1, 1, 3, Recompute::kFull)), "");
}

// Micro-batch counts that are not a multiple of the pipeline under interleaving: Megatron-LM
// (schedules.py at d98e8a6) runs them with a micro-batch group per model chunk whose last group is
// empty or holds p or more, and the flags name the group the memory model counts; fewer than p
// micro-batches it refuses.
TEST(EmitTest, MegatronInterleavedMicroBatchGroups) {
  JobSpec spec = DefaultJob();
  const ParallelConfig c = Layout(1, 4, 1, Recompute::kNone, 2);  // d 4, micro-batch 2
  const struct {
    int64_t micro_batches;
    const char* group;
  } cases[] = {{4, "(absent)"}, {8, "(absent)"}, {6, "6"}, {9, "5"}, {10, "5"}, {13, "7"}};
  for (const auto& k : cases) {
    spec.training.global_batch = k.micro_batches * 2 * 4;
    EXPECT_TRUE(CheckParallelism(c, spec).ok()) << CheckParallelism(c, spec).ToString();
    ASSERT_EQ(Inexpressible(Framework::kMegatron, spec, c), "") << k.micro_batches;
    const auto args = EmitContent(Framework::kMegatron, spec, c).get<std::vector<std::string>>();
    std::string group = "(absent)";
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--microbatch-group-size-per-virtual-pipeline-stage") group = args[i + 1];
    }
    EXPECT_EQ(group, k.group) << k.micro_batches;
  }
  spec.training.global_batch = 3 * 2 * 4;
  EXPECT_TRUE(CheckParallelism(c, spec).ok());  // a valid layout (PyTorch's schedule runs it)
  EXPECT_NE(Inexpressible(Framework::kMegatron, spec, c).find("at least pipeline (4)"),
            std::string::npos);
}

TEST(EmitTest, FsdpPlanNamesTheShardingStrategy) {
  const JobSpec spec = DefaultJob();
  const struct {
    int zero;
    const char* strategy;
  } rows[] = {{0, "NO_SHARD"}, {2, "SHARD_GRAD_OP"}, {3, "FULL_SHARD"}};
  for (const auto& row : rows) {
    const base::Report p =
        EmitContent(Framework::kFsdp, spec, Layout(1, 1, row.zero, Recompute::kFull));
    EXPECT_EQ(p["sharding_strategy"], row.strategy);
    EXPECT_EQ(p["reshard_after_forward"], row.zero == 3);
    EXPECT_EQ(p["activation_checkpointing"], "full");
    EXPECT_EQ(p["mixed_precision"]["param_dtype"], "bfloat16");
    // DDP (NO_SHARD) all-reduces the fp32 gradients autocast leaves; FSDP reduces in bf16.
    EXPECT_EQ(p["mixed_precision"]["reduce_dtype"], row.zero == 0 ? "float32" : "bfloat16");
    // 512 = 2 (micro-batch) x 16 (accumulation) x 16 (GPUs)
    EXPECT_EQ(p["gradient_accumulation_steps"], 16);
  }
}

// The emitted layout is the fastest fitting one the framework runs: every faster fitting layout
// is inexpressible, and `same_as_after` says whether it is the recommendation itself.
TEST(EmitTest, OptimizeEmitsTheFastestExpressibleLayout) {
  const JobSpec spec = DefaultJob();
  const auto gpu = cost::GpuCatalog::BuiltIn().Get(spec.hardware.gpu);
  ASSERT_TRUE(gpu.ok());
  const SearchResult found = Search(spec, **gpu);
  for (Framework f : {Framework::kDeepSpeed, Framework::kFsdp, Framework::kMegatron,
                      Framework::kTorchtitan, Framework::kAccelerate}) {
    OptimizeOptions options;
    options.emit = f;
    auto r = Optimize(spec, cost::GpuCatalog::BuiltIn(), options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const base::Report& emit = (*r)["emit"];
    EXPECT_EQ(emit["framework"], FrameworkName(f));
    // No layout the framework runs is faster once counted as it runs it (the spec names no
    // framework, so the search counted each as the first framework that runs it) and fits with
    // the headroom.
    const double chosen = emit["step_time_s"].get<double>();
    JobSpec as_written = spec;
    as_written.framework = f == Framework::kAccelerate ? Framework::kFsdp : f;
    const double capacity = static_cast<double>((*gpu)->MemoryBytes()) * 0.9;
    for (const Evaluation& listed : found.fitting) {
      if (!Inexpressible(f, spec, listed.config).empty()) continue;
      const Evaluation e = Evaluate(as_written, **gpu, listed.config);
      if (e.memory.fits && static_cast<double>(e.memory.total_bytes) <= capacity) {
        EXPECT_GE(e.time.step_s, chosen * (1 - 1e-9)) << FrameworkName(f);
      }
    }
    const bool same = emit["parallelism"] == (*r)["after"]["parallelism"];
    EXPECT_EQ(emit["same_as_after"], same);
    EXPECT_EQ(emit.contains("differs_from_after_because"), !same);
  }
}

TEST(EmitTest, EmitNeedsAFullTrainingPlan) {
  OptimizeOptions options;
  options.emit = Framework::kFsdp;
  options.evaluate_only = true;
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().where(), "emit");

  // An fp8 job: FSDP's policy has no fp8, so no fitting layout can be written for it.
  JobSpec fp8 = DefaultJob();
  fp8.training.precision = base::NumericFormat::kFp8;
  options.evaluate_only = false;
  auto none = Optimize(fp8, cost::GpuCatalog::BuiltIn(), options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().ToString().find("no layout that fits can be written for fsdp"),
            std::string::npos)
      << none.status().ToString();
}

}  // namespace
}  // namespace seedance::plan
