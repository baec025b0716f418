// Precision choices in the search: training.search_precisions and search_optimizer_states
// (opt-in), the optimizer-state bytes, and what the report and --emit make of them.
#include <gtest/gtest.h>

#include <algorithm>

#include "seedance/plan/emit.h"
#include "seedance/plan/memory_model.h"
#include "seedance/plan/optimize.h"
#include "seedance/plan/search.h"

namespace seedance::plan {
namespace {

using base::NumericFormat;

std::string PrecisionJobWith(const std::string& training_extra,
                             const std::string& gpu = "H100-SXM") {
  return "name: p\n"
         "model: {family: llama, layers: 32, hidden_size: 4096, attention_heads: 32,\n"
         "        ffn_size: 11008, vocab_size: 32000, sequence_length: 4096}\n"
         "training: {global_batch: 512, micro_batch: 1, precision: bf16" +
         training_extra +
         "}\n"
         "hardware: {gpu: " +
         gpu + ", gpus_per_node: 8, nodes: 2}\n";
}

JobSpec ParsePrecisionJob(const std::string& yaml) {
  auto spec = ParseJobSpec(yaml, "p.yaml", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

const cost::GpuSpec& PrecisionGpu(const JobSpec& spec) {
  return **cost::GpuCatalog::BuiltIn().Get(spec.hardware.gpu);
}

TEST(PrecisionSearchTest, SpecKeysAreCheckedAgainstTheGpu) {
  auto a100 = ParseJobSpec(PrecisionJobWith(", search_precisions: [fp8]", "A100-80GB"), "p.yaml",
                           cost::GpuCatalog::BuiltIn());
  ASSERT_FALSE(a100.ok());
  EXPECT_NE(a100.status().message().find("training.search_precisions[0]"), std::string::npos)
      << a100.status().ToString();
  auto unknown = ParseJobSpec(PrecisionJobWith(", search_precisions: [fp4]"), "p.yaml",
                              cost::GpuCatalog::BuiltIn());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().where(), "p.yaml:4: training.search_precisions[0]");
  auto states = ParseJobSpec(PrecisionJobWith(", optimizer_states: fp16"), "p.yaml",
                             cost::GpuCatalog::BuiltIn());
  ASSERT_FALSE(states.ok());
  EXPECT_EQ(states.status().where(), "p.yaml:4: training.optimizer_states");
  const JobSpec ok = ParsePrecisionJob(
      PrecisionJobWith(", search_precisions: [fp8, bf16], search_optimizer_states: [bf16]"));
  EXPECT_EQ(ok.training.search_precisions,
            (std::vector<NumericFormat>{NumericFormat::kFp8, NumericFormat::kBf16}));
  EXPECT_EQ(ok.training.search_optimizer_states, std::vector<NumericFormat>{NumericFormat::kBf16});
}

// bf16 moments halve the optimizer's bytes: the ZeRO paper's 7.5B model at stage 0 holds
// 16 bytes a parameter with fp32 Adam moments and 12 with bf16 ones.
TEST(PrecisionSearchTest, Bf16OptimizerStatesHalveTheMoments) {
  TrainingSpec t;
  t.optimizer = "adamw";
  EXPECT_EQ(StateBytesFor(t).total(), 16);
  t.optimizer_states = NumericFormat::kBf16;
  EXPECT_EQ(StateBytesFor(t).optimizer, 4);
  EXPECT_EQ(ModelStateBytes(7'500'000'000, StateBytesFor(t), 0, 64), int64_t{90'000'000'000});
  t.optimizer = "sgd-momentum";
  EXPECT_EQ(StateBytesFor(t).optimizer, 2);
}

// Without the lists the search is the stated precision's, untouched; with them, the layouts of
// the stated precision are all still there with the same figures, the others are added, and the
// winner is the fastest of all.
TEST(PrecisionSearchTest, SearchAddsTheListedPrecisions) {
  const JobSpec stated = ParsePrecisionJob(PrecisionJobWith(""));
  const SearchResult base = Search(stated, PrecisionGpu(stated));
  ASSERT_FALSE(base.fitting.empty());
  for (const Evaluation& e : base.fitting) {
    EXPECT_FALSE(e.config.precision.has_value());
    EXPECT_FALSE(e.config.optimizer_states.has_value());
  }
  const JobSpec spec = ParsePrecisionJob(
      PrecisionJobWith(", search_precisions: [fp8], search_optimizer_states: [bf16]"));
  const SearchResult wide = Search(spec, PrecisionGpu(spec));
  // Four precision pairs per layout, less the fp8 layouts no framework runs (only Megatron's and
  // torchtitan's take fp8).
  EXPECT_LE(wide.candidates, 4 * base.candidates);
  EXPECT_GT(wide.candidates, 3 * base.candidates);
  std::vector<double> stated_times, base_times;
  for (const Evaluation& e : base.fitting) base_times.push_back(e.time.step_s);
  for (const Evaluation& e : wide.fitting) {
    const TrainingSpec t = TrainingOf(spec.training, e.config);
    if (t.precision == NumericFormat::kBf16 && t.optimizer_states == NumericFormat::kFp32) {
      stated_times.push_back(e.time.step_s);
    }
  }
  std::sort(base_times.begin(), base_times.end());
  std::sort(stated_times.begin(), stated_times.end());
  ASSERT_EQ(stated_times.size(), base_times.size());
  for (size_t i = 0; i < base_times.size(); ++i) EXPECT_DOUBLE_EQ(stated_times[i], base_times[i]);
  // FP8 GEMMs at twice the dense peak: the winner computes in fp8 and is faster.
  const Evaluation& best = wide.fitting.front();
  EXPECT_EQ(best.config.precision, NumericFormat::kFp8);
  EXPECT_LT(best.time.step_s, base.fitting.front().time.step_s);
  // bf16 moments shave a sliver off the optimizer step here, under the 1% a changed precision
  // must buy: the stated fp32 moments stay. Without the threshold the sliver wins.
  EXPECT_EQ(TrainingOf(spec.training, best.config).optimizer_states, NumericFormat::kFp32);
  PlanSettings eager;
  eager.space.precision_change_threshold = 0;
  const SearchResult greedy = Search(spec, PrecisionGpu(spec), eager);
  EXPECT_EQ(greedy.fitting.front().config.optimizer_states, NumericFormat::kBf16);
  EXPECT_LT(greedy.fitting.front().time.step_s, best.time.step_s);
  EXPECT_GT(greedy.fitting.front().time.step_s, best.time.step_s * 0.99);
  // The report names the precisions of both sides, and a reason line for each choice.
  const base::Report r = EvaluationToReport(best, spec);
  EXPECT_EQ(r["precision"], "fp8");
  bool precision_line = false, states_line = false;
  for (const std::string& line : Reasons(best, spec, PrecisionGpu(spec), {})) {
    precision_line = precision_line || line.starts_with("precision fp8");
    states_line = states_line || line.starts_with("optimizer_states ");
  }
  EXPECT_TRUE(precision_line);
  EXPECT_TRUE(states_line);
}

// bf16 moments let a memory-bound layout keep more: on one node of 40 GB GPUs the 7B job fits
// more layouts with them, and the fastest is no slower.
TEST(PrecisionSearchTest, Bf16StatesWidenWhatFits) {
  const std::string one_node = "A100-40GB";
  auto yaml = [&](const std::string& extra) {
    std::string y = PrecisionJobWith(extra, one_node);
    y.replace(y.find("nodes: 2"), 8, "nodes: 1");
    return y;
  };
  const JobSpec stated = ParsePrecisionJob(yaml(""));
  const JobSpec spec = ParsePrecisionJob(yaml(", search_optimizer_states: [bf16]"));
  const SearchResult base = Search(stated, PrecisionGpu(stated));
  const SearchResult wide = Search(spec, PrecisionGpu(spec));
  ASSERT_FALSE(base.fitting.empty());
  size_t bf16_fitting = 0;
  for (const Evaluation& e : wide.fitting) {
    bf16_fitting += e.config.optimizer_states == NumericFormat::kBf16 ? 1 : 0;
  }
  EXPECT_GT(bf16_fitting, base.fitting.size());
  EXPECT_LE(wide.fitting.front().time.step_s, base.fitting.front().time.step_s);
}

// DeepSpeed's config has no fp8 setting: with fp8 winning, --emit deepspeed writes the fastest
// bf16 layout and says why it differs.
TEST(PrecisionSearchTest, EmitFallsBackToAPrecisionTheFrameworkTakes) {
  OptimizeOptions options;
  options.emit = Framework::kDeepSpeed;
  auto r = OptimizeYaml(PrecisionJobWith(", search_precisions: [fp8]"), "p.yaml",
                        cost::GpuCatalog::BuiltIn(), options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["after"]["precision"], "fp8");
  const base::Report& emit = (*r)["emit"];
  EXPECT_EQ(emit["same_as_after"], false);
  EXPECT_NE(emit["differs_from_after_because"].get<std::string>().find("fp8"), std::string::npos);
  EXPECT_EQ(emit["content"]["bf16"]["enabled"], true);
}

}  // namespace
}  // namespace seedance::plan
