#include "seedance/plan/run_table.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "seedance/base/env.h"
#include "seedance/plan/model_figures.h"

namespace seedance::plan {
namespace {

const cost::GpuCatalog& Catalog() { return cost::GpuCatalog::BuiltIn(); }

std::string Header() { return RunTableHeader(); }

std::string RowOf(const char* id,
                  std::initializer_list<std::pair<const char*, std::string>> extra) {
  std::vector<std::pair<const char*, std::string>> v = {{"kind", "run"},
                                                        {"id", id},
                                                        {"group", "g"},
                                                        {"family", "llama"},
                                                        {"layers", "32"},
                                                        {"hidden_size", "4096"},
                                                        {"attention_heads", "32"},
                                                        {"kv_heads", "8"},
                                                        {"ffn_size", "14336"},
                                                        {"vocab_size", "128256"},
                                                        {"sequence_length", "8192"},
                                                        {"gpu", "H100-SXM"},
                                                        {"gpus_per_node", "8"},
                                                        {"nodes", "2"},
                                                        {"global_batch", "64"},
                                                        {"micro_batch", "1"},
                                                        {"tensor", "2"},
                                                        {"pipeline", "1"},
                                                        {"context_parallel", "2"},
                                                        {"sequence_parallel", "true"},
                                                        {"zero_stage", "1"},
                                                        {"recompute", "none"},
                                                        {"precision", "bf16"},
                                                        {"framework", "megatron"},
                                                        {"published_step_s", "9.5"}};
  for (const auto& e : extra) {
    bool replaced = false;
    for (auto& [k, value] : v) {
      if (std::string(k) == e.first) {
        value = e.second;
        replaced = true;
      }
    }
    if (!replaced) v.push_back(e);
  }
  std::string header = Header();
  header.pop_back();
  std::vector<std::string> columns;
  size_t start = 0;
  for (size_t i = 0; i <= header.size(); ++i) {
    if (i == header.size() || header[i] == ',') {
      columns.push_back(header.substr(start, i - start));
      start = i + 1;
    }
  }
  std::string line;
  for (const std::string& c : columns) {
    std::string cell;
    for (const auto& [k, value] : v) {
      if (c == k) cell = value;
    }
    line += (line.empty() ? "" : ",") + cell;
  }
  return line + "\n";
}

TEST(RunTableTest, ReadsARunIntoAJobSpecAndItsMeasurement) {
  auto t = ParseRunTable(Header() + RowOf("a", {}), "runs.csv", Catalog());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 1u);
  const RunRecord& r = (*t)[0];
  EXPECT_EQ(r.id, "a");
  EXPECT_EQ(r.where, "runs.csv:2");
  EXPECT_EQ(r.spec.model.kv_heads, 8);
  EXPECT_EQ(r.spec.parallelism.tensor, 2);
  EXPECT_EQ(r.spec.parallelism.context_parallel, 2);
  EXPECT_EQ(r.spec.framework, Framework::kMegatron);
  EXPECT_EQ(r.spec.hardware.total_gpus(), 16);
  EXPECT_EQ(MeasuredStepSeconds(r, **Catalog().Get("H100-SXM")), 9.5);
  EXPECT_EQ(MeasuredFigure(r), "step_s");
}

// Each figure a source may state gives the step time it implies, by hand: tokens per step over
// tokens/s over GPUs; model FLOPs per step (the row's formula) over MFU x peak x GPUs, or over
// TFLOP/s x GPUs.
TEST(RunTableTest, EveryStatedFigureImpliesAStepTime) {
  const cost::GpuSpec& h100 = **Catalog().Get("H100-SXM");
  const double tokens = 64.0 * 8192;
  auto one = [&](std::initializer_list<std::pair<const char*, std::string>> extra) {
    auto t = ParseRunTable(Header() + RowOf("a", extra), "runs.csv", Catalog());
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return (*t)[0];
  };
  const RunRecord tps = one({{"published_step_s", ""}, {"published_tokens_per_s_per_gpu", "2000"}});
  EXPECT_DOUBLE_EQ(*MeasuredStepSeconds(tps, h100), tokens / (2000.0 * 16));
  const RunRecord mfu = one({{"published_step_s", ""}, {"published_mfu", "0.4"}});
  const double palm = FlopsPerToken(mfu.spec.model, FlopsFormula::kPalm);
  EXPECT_DOUBLE_EQ(
      palm, 6.0 * static_cast<double>(ComputeModelFigures(mfu.spec.model).matmul_parameters) +
                12.0 * 32 * 4096 * 8192);
  EXPECT_DOUBLE_EQ(
      *MeasuredStepSeconds(mfu, h100),
      palm * tokens / (0.4 * *h100.DenseTflops(base::NumericFormat::kBf16) * 1e12 * 16));
  const RunRecord tflops = one({{"published_step_s", ""},
                                {"published_tflops_per_gpu", "400"},
                                {"flops_formula", "palm-causal"}});
  const double causal = FlopsPerToken(tflops.spec.model, FlopsFormula::kPalmCausal);
  EXPECT_DOUBLE_EQ(causal, palm - 6.0 * 32 * 4096 * 8192);
  EXPECT_DOUBLE_EQ(*MeasuredStepSeconds(tflops, h100), causal * tokens / (400e12 * 16));
  EXPECT_EQ(MeasuredFigure(tflops), "tflops_per_gpu");
}

struct Bad {
  const char* name;
  std::string text;
  const char* where;
  const char* message;
};

TEST(RunTableTest, BadRowsNameTheirLineAndColumn) {
  const std::vector<Bad> cases = {
      {"unknown column", "kind,id,colour\nrun,a,red\n", "runs.csv:1", "unknown column 'colour'"},
      {"missing id column", "kind\nrun\n", "runs.csv:1", "missing column 'id'"},
      {"bad kind", Header() + RowOf("a", {{"kind", "sprint"}}), "runs.csv:2: kind",
       "kind must be run"},
      {"repeated id", Header() + RowOf("a", {}) + RowOf("a", {}), "runs.csv:3: id",
       "repeats runs.csv:2"},
      {"negative figure", Header() + RowOf("a", {{"published_step_s", "-3"}}),
       "runs.csv:2: published_step_s", "positive number"},
      {"mfu in percent", Header() + RowOf("a", {{"published_step_s", ""}, {"published_mfu", "43"}}),
       "runs.csv:2: published_mfu", "a fraction"},
      {"no figure", Header() + RowOf("a", {{"published_step_s", ""}}), "runs.csv:2",
       "needs a measurement"},
      {"bad formula", Header() + RowOf("a", {{"flops_formula", "mine"}}),
       "runs.csv:2: flops_formula", "palm"},
      // The job spec's own checks, pointed at the column.
      {"unknown gpu", Header() + RowOf("a", {{"gpu", "H900"}}), "runs.csv:2: gpu", "H900"},
      {"tensor not dividing", Header() + RowOf("a", {{"tensor", "3"}}), "runs.csv:2: tensor",
       "must divide"},
      {"missing layers", Header() + RowOf("a", {{"layers", ""}}), "runs.csv:2: layers",
       "model.layers"},
      {"context not splitting", Header() + RowOf("a", {{"sequence_length", "8190"}}),
       "runs.csv:2: context_parallel", "equal chunks"},
      // A model_states row without a precision column (the fuzzer's find: it was read through
      // an empty column index).
      {"model states without precision",
       "kind,id,parameters,data_parallel,zero_stage,published_gb_per_gpu\n"
       "model_states,z,7500000000,64,1,31.4\n",
       "runs.csv:1", "needs the column precision"},
  };
  for (const Bad& c : cases) {
    auto t = ParseRunTable(c.text, "runs.csv", Catalog());
    ASSERT_FALSE(t.ok()) << c.name;
    EXPECT_EQ(t.status().where(), c.where) << c.name << ": " << t.status().ToString();
    EXPECT_NE(t.status().message().find(c.message), std::string_view::npos)
        << c.name << ": " << t.status().ToString();
  }
}

// What FormatRunRow writes, ParseRunTable reads back as the same job and figures, over random
// layouts of random models (the row record_run appends is a row --calibrate reads).
TEST(RunTableTest, WrittenRowsReadBack) {
  std::mt19937 rng(7);
  int checked = 0;
  for (int i = 0; i < 300; ++i) {
    auto pick = [&](std::initializer_list<int64_t> v) {
      return *(v.begin() + static_cast<int64_t>(rng() % v.size()));
    };
    const int64_t heads = pick({8, 16, 32});
    const int64_t layers = pick({4, 8, 12, 24});
    const std::string text =
        Header() + RowOf("x", {{"layers", std::to_string(layers)},
                               {"attention_heads", std::to_string(heads)},
                               {"kv_heads", std::to_string(pick({1, 2, 8}))},
                               {"hidden_size", std::to_string(heads * 128)},
                               {"sequence_length", std::to_string(pick({1024, 4096}))},
                               {"tensor", std::to_string(pick({1, 2, 4}))},
                               {"sequence_parallel", "false"},
                               {"context_parallel", std::to_string(pick({1, 2}))},
                               {"pipeline", std::to_string(pick({1, 2, 4}))},
                               {"zero_stage", std::to_string(pick({0, 1}))},
                               {"recompute", pick({0, 1}) ? "full" : "selective"},
                               {"precision", pick({0, 1}) ? "bf16" : "fp8"},
                               {"published_step_s", std::to_string(1 + rng() % 100) + ".25"},
                               {"published_gb_per_gpu", "61.5"}});
    auto first = ParseRunTable(text, "a.csv", Catalog());
    if (!first.ok()) continue;  // an invalid random layout: the parser's own business
    ++checked;
    auto again = ParseRunTable(Header() + FormatRunRow((*first)[0]), "b.csv", Catalog());
    ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << FormatRunRow((*first)[0]);
    const RunRecord& a = (*first)[0];
    const RunRecord& b = (*again)[0];
    EXPECT_EQ(a.spec.parallelism, b.spec.parallelism);
    EXPECT_EQ(a.spec.model.layers, b.spec.model.layers);
    EXPECT_EQ(a.spec.model.kv_heads, b.spec.model.kv_heads);
    EXPECT_EQ(a.spec.training.precision, b.spec.training.precision);
    EXPECT_EQ(a.spec.framework, b.spec.framework);
    EXPECT_EQ(a.step_s, b.step_s);
    EXPECT_EQ(a.gb_per_gpu, b.gb_per_gpu);
  }
  EXPECT_GT(checked, 100);
}

// The shipped calibration set parses, every run states a figure, and every id is unique.
TEST(RunTableTest, TheCalibrationSetParses) {
  const char* root = std::getenv("SEEDANCE_SOURCE_DIR");
  ASSERT_NE(root, nullptr);
  auto text = base::Env::Default()->ReadFile(std::string(root) + "/bench/plan/published_runs.csv");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto t = ParseRunTable(*text, "published_runs.csv", Catalog());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_GE(t->size(), 150u);
}

}  // namespace
}  // namespace seedance::plan
