#include "seedance/plan/job_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "seedance/base/testing/text_mutator.h"

namespace seedance::plan {
namespace {

const cost::GpuCatalog& Catalog() { return cost::GpuCatalog::BuiltIn(); }

TEST(JobSpecTest, DefaultJobParses) {
  auto spec = ParseJobSpec(DefaultJobYaml(), "default.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->name, "llama-7b-pretrain");
  EXPECT_EQ(spec->kind, JobKind::kTraining);
  EXPECT_EQ(spec->hardware.gpu, "H100-SXM");
  EXPECT_EQ(spec->hardware.total_gpus(), 16);
  EXPECT_EQ(spec->training.precision, base::NumericFormat::kBf16);
  EXPECT_FALSE(spec->model.tie_embeddings);
  EXPECT_DOUBLE_EQ(spec->price_per_gpu_hour_usd, 6.88);
  EXPECT_EQ(spec->price_origin.rfind("catalog: ", 0), 0u);
}

constexpr const char* kServing =
    "name: chat\n"
    "model: {family: gpt, layers: 2, hidden_size: 64, attention_heads: 4, ffn_size: 256,\n"
    "        vocab_size: 100, sequence_length: 4096}\n"
    "serving: {context_length: 4096, concurrent_requests: 8}\n"
    "hardware: {gpu: l4, gpus_per_node: 1}\n"
    "price_per_gpu_hour_usd: 0.5\n";

TEST(JobSpecTest, ServingDefaultsAreFilledIn) {
  auto spec = ParseJobSpec(kServing, "s.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->kind, JobKind::kServing);
  EXPECT_EQ(spec->hardware.gpu, "L4");  // catalog spelling
  EXPECT_EQ(spec->hardware.nodes, 1);
  EXPECT_EQ(spec->hardware.intra_node, "pcie");
  EXPECT_EQ(spec->hardware.inter_node, "none");
  EXPECT_EQ(spec->model.kv_heads, 4);
  EXPECT_TRUE(spec->model.tie_embeddings);  // gpt default
  EXPECT_EQ(spec->serving.precision, base::NumericFormat::kBf16);
  EXPECT_EQ(spec->serving.engine, ServingEngine::kVllm);
  EXPECT_EQ(spec->serving.prompt_length, 2048);  // half the context
  EXPECT_EQ(spec->price_origin, "job spec");
  base::Report r = JobSpecToReport(*spec);
  EXPECT_EQ(r["serving"]["precision"], "bf16");
  EXPECT_EQ(r["serving"]["engine"], "vllm");
  EXPECT_EQ(r["hardware"]["gpus_total"], 1);
  EXPECT_FALSE(r.contains("training"));
}

// Each broken spec, and the `where` its error must carry.
struct BadSpec {
  const char* name;
  std::string from;  // text in the default job to replace ...
  std::string to;    // ... with this
  const char* where;
  const char* message_part;
};

void PrintTo(const BadSpec& spec, std::ostream* os) { *os << spec.name; }

class BadJobSpecTest : public testing::TestWithParam<BadSpec> {};

TEST_P(BadJobSpecTest, ErrorNamesFileLineAndKey) {
  const BadSpec& tc = GetParam();
  std::string yaml(DefaultJobYaml());
  const size_t pos = yaml.find(tc.from);
  ASSERT_NE(pos, std::string::npos) << tc.from;
  yaml.replace(pos, tc.from.size(), tc.to);
  auto spec = ParseJobSpec(yaml, "bad.yaml", Catalog());
  ASSERT_FALSE(spec.ok()) << tc.name;
  EXPECT_EQ(spec.status().where(), tc.where) << spec.status().ToString();
  EXPECT_NE(spec.status().message().find(tc.message_part), std::string_view::npos)
      << spec.status().ToString();
}

// Line numbers refer to examples/default-job.yaml (name is on line 5).
INSTANTIATE_TEST_SUITE_P(
    Cases, BadJobSpecTest,
    testing::Values(
        BadSpec{"unknown key", "  layers: 32", "  layerz: 32", "bad.yaml:9: model.layerz",
                "unknown key 'model.layerz'"},
        BadSpec{"unknown top key", "name:", "nmae:", "bad.yaml:5: nmae", "unknown key 'nmae'"},
        BadSpec{"wrong type", "layers: 32", "layers: many", "bad.yaml:9: model.layers",
                "must be an integer"},
        BadSpec{"quoted number", "layers: 32", "layers: \"32\"", "bad.yaml:9: model.layers",
                "must be an integer"},
        BadSpec{"negative count", "nodes: 2", "nodes: -2", "bad.yaml:24: hardware.nodes",
                "must be between 1 and"},
        BadSpec{"zero count", "micro_batch: 4", "micro_batch: 0",
                "bad.yaml:18: training.micro_batch", "must be between 1 and"},
        BadSpec{"unknown gpu", "gpu: H100-SXM", "gpu: H900", "bad.yaml:22: hardware.gpu",
                "unknown GPU model 'H900'"},
        BadSpec{"precision gpu lacks", "gpu: H100-SXM", "gpu: V100",
                "bad.yaml:19: training.precision", "does not run"},
        BadSpec{"bad precision name", "precision: bf16", "precision: fp4",
                "bad.yaml:19: training.precision", "must be one of"},
        BadSpec{"bad attention kernel", "precision: bf16", "precision: bf16\n  attention: fa3",
                "bad.yaml:20: training.attention", "flash, flash2, cudnn, eager"},
        BadSpec{"heads do not divide", "attention_heads: 32", "attention_heads: 30",
                "bad.yaml:11: model.attention_heads", "multiple of"},
        BadSpec{"kv heads do not divide", "kv_heads: 32", "kv_heads: 5",
                "bad.yaml:12: model.kv_heads", "must divide"},
        BadSpec{"batch not divisible", "global_batch: 512", "global_batch: 500",
                "bad.yaml:17: training.global_batch",
                "multiple of micro_batch x data-parallel size"},
        BadSpec{"both sections",
                "hardware:", "serving: {context_length: 1, concurrent_requests: 1}\nhardware:",
                "bad.yaml:21: serving", "not both"},
        BadSpec{"nvlink on pcie card", "gpu: H100-SXM", "gpu: L40S",
                "bad.yaml:26: hardware.interconnect.intra_node", "has pcie at most"},
        BadSpec{"multi-node without network", "inter_node: infiniband", "inter_node: none",
                "bad.yaml:27: hardware.interconnect.inter_node", "nodes' is 2"},
        BadSpec{"missing section", "hardware:", "hardwar:", "bad.yaml:21: hardwar", "unknown key"},
        BadSpec{"tensor does not divide the heads", "tensor: 1", "tensor: 3",
                "bad.yaml:29: parallelism.tensor", "must divide the attention heads"},
        BadSpec{"unknown parallelism key", "pipeline: 1", "pipelines: 1",
                "bad.yaml:30: parallelism.pipelines", "unknown key"},
        BadSpec{"sequence parallelism without tensor", "pipeline: 1",
                "pipeline: 1\n  sequence_parallel: true",
                "bad.yaml:31: parallelism.sequence_parallel", "needs tensor > 1"},
        BadSpec{"bad recompute", "recompute: full", "recompute: some",
                "bad.yaml:32: parallelism.recompute", "some"},
        BadSpec{"zero stage out of range", "zero_stage: 3", "zero_stage: 4",
                "bad.yaml:31: parallelism.zero_stage", "between 0 and 3"},
        BadSpec{"syntax error", "  family: llama", "  family: [llama", "bad.yaml:9:9",
                "YAML syntax"},
        BadSpec{"unknown framework", "framework: fsdp", "framework: horovod",
                "bad.yaml:6: framework", "torchtitan"},
        BadSpec{"a precision the framework does not train in", "precision: bf16", "precision: fp8",
                "bad.yaml:19: training.precision", "does not train in"},
        BadSpec{"context that does not divide the GPUs", "pipeline: 1",
                "pipeline: 1\n  context_parallel: 3", "bad.yaml:31: parallelism.context_parallel",
                "must divide the 16 GPUs"},
        BadSpec{"uneven stages on one stage", "pipeline: 1",
                "pipeline: 1\n  first_stage_layers: 5\n  last_stage_layers: 5",
                "bad.yaml:31: parallelism.first_stage_layers", "pipeline >= 2"},
        BadSpec{"uneven stages that do not add up", "pipeline: 1",
                "pipeline: 4\n  first_stage_layers: 5\n  last_stage_layers: 6",
                "bad.yaml:31: parallelism.first_stage_layers", "equal share"},
        BadSpec{"more model chunks than layers", "pipeline: 1", "pipeline: 16\n  virtual_stages: 4",
                "bad.yaml:31: parallelism.virtual_stages", "exceeds the 32 layers"},
        BadSpec{"recompute layers without full recomputation", "recompute: full",
                "recompute: selective\n  recompute_layers: 2",
                "bad.yaml:33: parallelism.recompute_layers", "needs recompute: full"},
        BadSpec{"headroom out of range", "framework: fsdp",
                "framework: fsdp\nplanning: {headroom: 2}", "bad.yaml:7: planning.headroom",
                "between"}));

// The keys issue 39 added: a framework, unequal end stages, partial recomputation, context
// parallelism and the planning section read as written.
TEST(JobSpecTest, FrameworkStagesAndPlanningKeys) {
  std::string yaml(DefaultJobYaml());
  yaml.replace(yaml.find("framework: fsdp"), 15,
               "framework: megatron\nplanning: {headroom: 0.2, min_gain: 0.05}");
  yaml.replace(yaml.find("  pipeline: 1"), 13,
               "  pipeline: 4\n  first_stage_layers: 7\n  last_stage_layers: 7\n"
               "  context_parallel: 2");
  yaml.replace(yaml.find("zero_stage: 3"), 13, "zero_stage: 1\n  recompute_layers: 3");
  auto spec = ParseJobSpec(yaml, "ok.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->framework, Framework::kMegatron);
  EXPECT_DOUBLE_EQ(spec->planning.headroom, 0.2);
  EXPECT_DOUBLE_EQ(spec->planning.min_gain, 0.05);
  const ParallelConfig& c = spec->parallelism;
  EXPECT_EQ(c.context_parallel, 2);
  EXPECT_EQ(c.recompute_layers, 3);
  // 7 + 9 + 9 + 7: the middle stages share the other 18 layers.
  EXPECT_EQ(StageLayers(c, 32, 0), 7);
  EXPECT_EQ(StageLayers(c, 32, 1), 9);
  EXPECT_EQ(StageLayers(c, 32, 3), 7);
  EXPECT_EQ(MaxStageLayers(c, 32), 9);
  EXPECT_EQ(DataParallel(c, 16), 2);
}

// Names chosen from a list are read without regard to case, and the systems built on the
// frameworks go by their own names.
TEST(JobSpecTest, ListedNamesIgnoreCaseAndFrameworksTheirSystemsNames) {
  for (const auto& [name, framework] :
       {std::pair<const char*, Framework>{"DeepSpeed", Framework::kDeepSpeed},
        {"Megatron-DeepSpeed", Framework::kDeepSpeed},
        {"FSDP1", Framework::kFsdp},
        {"PyTorch-FSDP", Framework::kFsdp},
        {"NeMo", Framework::kMegatron},
        {"TorchTitan", Framework::kTorchtitan}}) {
    std::string yaml(DefaultJobYaml());
    yaml.replace(yaml.find("framework: fsdp"), 15, std::string("framework: ") + name);
    yaml.replace(yaml.find("precision: bf16"), 15, "precision: BF16");
    yaml.replace(yaml.find("family: llama"), 13, "family: Llama");
    yaml.replace(yaml.find("recompute: full"), 15, "recompute: Full");
    auto spec = ParseJobSpec(yaml, "case.yaml", Catalog());
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.status().ToString();
    EXPECT_EQ(spec->framework, framework) << name;
    EXPECT_EQ(spec->training.precision, base::NumericFormat::kBf16);
    EXPECT_EQ(spec->model.family, "llama");
    EXPECT_EQ(spec->parallelism.recompute, Recompute::kFull);
  }
  // A name no casing makes known is quoted as written.
  std::string yaml(DefaultJobYaml());
  yaml.replace(yaml.find("framework: fsdp"), 15, "framework: Horovod");
  auto unknown = ParseJobSpec(yaml, "case.yaml", Catalog());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'Horovod'"), std::string::npos)
      << unknown.status().ToString();
}

// FSDP and torchtitan shard everything by default (FULL_SHARD, fully_shard): left out, with or
// without a parallelism section, zero_stage is 3 under them and 0 elsewhere or beside a DDP
// compression hook; stated, it stays.
TEST(JobSpecTest, ZeroStageDefaultsToTheFrameworksSharding) {
  struct Case {
    const char* framework;
    bool section;
    int zero_stage;
    bool compression = false;
  };
  for (const Case& c : {Case{"fsdp", true, 3}, Case{"fsdp", false, 3}, Case{"torchtitan", true, 3},
                        Case{"torchtitan", false, 3}, Case{"deepspeed", true, 0},
                        Case{"megatron", false, 0}, Case{"fsdp", true, 0, true}}) {
    std::string yaml(DefaultJobYaml());
    yaml.replace(yaml.find("framework: fsdp"), 15, std::string("framework: ") + c.framework);
    const size_t zero = yaml.find("  zero_stage: 3");
    yaml.erase(zero, yaml.find('\n', zero) + 1 - zero);
    if (!c.section) yaml.erase(yaml.find("parallelism:"));
    if (c.compression) {
      yaml.replace(yaml.find("  pipeline: 1"), 13, "  pipeline: 1\n  gradient_compression: int8");
      yaml.replace(yaml.find("    inter_node: infiniband"), 26,
                   "    inter_node: infiniband\n  host: {memory_gbytes: 2048, "
                   "memory_gbytes_per_s: 200, pcie_gbytes_per_s: 25}");
    }
    auto spec = ParseJobSpec(yaml, "zero.yaml", Catalog());
    ASSERT_TRUE(spec.ok()) << c.framework << ": " << spec.status().ToString();
    EXPECT_EQ(spec->parallelism.zero_stage, c.zero_stage)
        << c.framework << " section " << c.section << " compression " << c.compression;
  }
  std::string yaml(DefaultJobYaml());
  yaml.replace(yaml.find("zero_stage: 3"), 13, "zero_stage: 2");
  auto stated = ParseJobSpec(yaml, "zero.yaml", Catalog());
  ASSERT_TRUE(stated.ok()) << stated.status().ToString();
  EXPECT_EQ(stated->parallelism.zero_stage, 2);
}

// torchtitan runs tensor parallelism only with the norms sharded along the sequence: left out,
// sequence_parallel follows it; `false` is an error at its line. Other frameworks keep false.
TEST(JobSpecTest, TorchtitanTensorParallelismIsSequenceParallel) {
  auto with = [](const char* framework, const char* tensor) {
    std::string yaml(DefaultJobYaml());
    yaml.replace(yaml.find("framework: fsdp"), 15, std::string("framework: ") + framework);
    yaml.replace(yaml.find("  tensor: 1"), 11, std::string("  tensor: ") + tensor);
    return ParseJobSpec(yaml, "tt.yaml", Catalog());
  };
  struct Case {
    const char* framework;
    const char* tensor;
    bool sequence_parallel;
  };
  for (const Case& c :
       {Case{"torchtitan", "8", true}, Case{"torchtitan", "8\n  sequence_parallel: true", true},
        Case{"torchtitan", "1", false}, Case{"megatron", "8", false}}) {
    auto spec = with(c.framework, c.tensor);
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    EXPECT_EQ(spec->parallelism.sequence_parallel, c.sequence_parallel)
        << c.framework << " tensor: " << c.tensor;
  }
  auto refused = with("torchtitan", "8\n  sequence_parallel: false");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().where(), "tt.yaml:30: parallelism.sequence_parallel");
  EXPECT_NE(refused.status().message().find("always shards the norms"), std::string::npos);
}

// Layers that pipeline x virtual_stages does not divide (Llama 3 405B's 126 on 16 stages) are
// split as numpy.array_split splits a list: the first layers % chunks chunks one layer longer.
// The reference slices the list of layers; stage s holds chunks s, s + p, ...
TEST(JobSpecTest, LayersThatDoNotDivideSplitAsEvenlyAsTheyGo) {
  for (int64_t layers = 1; layers <= 130; ++layers) {
    for (int64_t p : {1, 2, 3, 4, 6, 8, 12, 16}) {
      for (int64_t v : {1, 2, 3, 4}) {
        if (p * v > layers || (p == 1 && v > 1)) continue;
        ParallelConfig c;
        c.pipeline = p;
        c.virtual_stages = v;
        const int64_t chunks = p * v;
        std::vector<int64_t> held(p, 0);
        int64_t next = 0;  // first layer of the next chunk
        for (int64_t j = 0; j < chunks; ++j) {
          const int64_t length = layers / chunks + (j < layers % chunks ? 1 : 0);
          held[j % p] += length;
          next += length;
        }
        ASSERT_EQ(next, layers);
        int64_t total = 0, most = 0;
        for (int64_t s = 0; s < p; ++s) {
          EXPECT_EQ(StageLayers(c, layers, s), held[s]) << layers << " " << p << " " << v;
          total += StageLayers(c, layers, s);
          most = std::max(most, held[s]);
        }
        EXPECT_EQ(total, layers);
        EXPECT_EQ(MaxStageLayers(c, layers), most);
        EXPECT_EQ(EvenStages(c, layers), layers % chunks == 0);
      }
    }
  }
  // Literal cases: 34 on 4 stages 9, 9, 8, 8; with 2 virtual stages the 8 chunks are 5, 5, 4 x 6,
  // so the stages hold 5 + 4, 5 + 4, 4 + 4, 4 + 4.
  ParallelConfig four{.pipeline = 4};
  EXPECT_EQ((std::vector<int64_t>{StageLayers(four, 34, 0), StageLayers(four, 34, 1),
                                  StageLayers(four, 34, 2), StageLayers(four, 34, 3)}),
            (std::vector<int64_t>{9, 9, 8, 8}));
  four.virtual_stages = 2;
  EXPECT_EQ((std::vector<int64_t>{StageLayers(four, 34, 0), StageLayers(four, 34, 1),
                                  StageLayers(four, 34, 2), StageLayers(four, 34, 3)}),
            (std::vector<int64_t>{9, 9, 8, 8}));
  EXPECT_EQ(StageLayers(ParallelConfig{.pipeline = 3, .virtual_stages = 2}, 8, 0), 3);  // 2 + 1
  // Llama 3 405B's layout stated without end-stage counts: accepted, 8 layers on the first 14
  // stages and 7 on the last two.
  std::string yaml(DefaultJobYaml());
  yaml.replace(yaml.find("layers: 32"), 10, "layers: 126");
  yaml.replace(yaml.find("nodes: 2"), 8, "nodes: 4");
  yaml.replace(yaml.find("  pipeline: 1"), 13, "  pipeline: 16");
  yaml.replace(yaml.find("zero_stage: 3"), 13, "zero_stage: 1");
  auto spec = ParseJobSpec(yaml, "ok.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(StageLayers(spec->parallelism, 126, 0), 8);
  EXPECT_EQ(StageLayers(spec->parallelism, 126, 13), 8);
  EXPECT_EQ(StageLayers(spec->parallelism, 126, 15), 7);
  EXPECT_FALSE(EvenStages(spec->parallelism, 126));
}

TEST(JobSpecTest, SyntaxErrorWhereHasLineAndColumn) {
  auto spec = ParseJobSpec("name: x\nmodel: {layers: 1\n", "y.yaml", Catalog());
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().where().rfind("y.yaml:", 0), 0u);
  EXPECT_NE(spec.status().message().find("YAML syntax error"), std::string_view::npos);
}

// Property test: random edits of the default job either still parse or give
// an InvalidArgument/NotFound naming bad.yaml and a line; never a crash.
TEST(JobSpecTest, MutatedSpecsFailCleanly) {
  std::mt19937 rng(2026);
  const std::string original(DefaultJobYaml());
  int parsed = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    const std::string doc = base::testing::MutateText(original, rng);
    auto spec = ParseJobSpec(doc, "bad.yaml", Catalog());
    if (spec.ok()) {
      ++parsed;
      continue;
    }
    EXPECT_EQ(spec.status().where().rfind("bad.yaml:", 0), 0u) << spec.status().ToString() << "\n"
                                                               << doc;
  }
  EXPECT_GT(parsed, 0);  // edits inside comments keep the document valid
}

}  // namespace
}  // namespace seedance::plan
