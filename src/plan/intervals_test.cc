#include "seedance/plan/intervals.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seedance/plan/optimize.h"
#include "seedance/plan/search.h"

namespace seedance::plan {
namespace {

JobSpec Parse(const std::string& yaml) {
  auto spec = ParseJobSpec(yaml, "t.yaml", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

const cost::GpuSpec& Gpu(const std::string& id) { return **cost::GpuCatalog::BuiltIn().Get(id); }

std::string Job(const std::string& gpu, const std::string& extra = "", int64_t sequence = 4096) {
  return "name: j\n" + extra +
         "model: {family: llama, layers: 32, hidden_size: 4096, attention_heads: 32,\n"
         "        ffn_size: 11008, vocab_size: 32000, sequence_length: " +
         std::to_string(sequence) +
         "}\n"
         "training: {global_batch: 64, micro_batch: 1, precision: bf16}\n"
         "hardware: {gpu: " +
         gpu + ", gpus_per_node: 8, nodes: 2}\n";
}

double LogWidth(const Interval& i) { return std::log(i.high / i.low); }

// Every figure sits inside its interval, rates invert the step time's, and a layout outside the
// calibrated region says why its interval is wider, and is.
TEST(IntervalsTest, FiguresSitInsideAndTheRegionWidens) {
  const ParallelConfig c{.zero_stage = 3, .micro_batch = 1};
  const Evaluation plain = Evaluate(Parse(Job("H100-SXM")), Gpu("H100-SXM"), c);
  const EvaluationIntervals& i = plain.intervals;
  EXPECT_TRUE(i.step_s.contains(plain.time.step_s));
  EXPECT_TRUE(i.mfu.contains(plain.mfu));
  EXPECT_TRUE(i.tokens_per_s_per_gpu.contains(plain.tokens_per_s_per_gpu));
  EXPECT_TRUE(i.memory_bytes_per_gpu.contains(static_cast<double>(plain.memory.total_bytes)));
  EXPECT_NEAR(i.tokens_per_s_per_gpu.low * i.step_s.high,
              plain.tokens_per_s_per_gpu * plain.time.step_s, 1e-6 * plain.tokens_per_s_per_gpu);
  EXPECT_DOUBLE_EQ(i.widen, 1);
  EXPECT_EQ(i.regime, Regime::kMultiNodeData);
  // No kernel rows for an L40S: the roofline, twice as wide.
  const Evaluation l40s = Evaluate(Parse(Job("L40S")), Gpu("L40S"), c);
  EXPECT_DOUBLE_EQ(l40s.intervals.widen, 2);
  EXPECT_NEAR(LogWidth(l40s.intervals.step_s), 2 * LogWidth(i.step_s), 1e-9);
  ASSERT_FALSE(l40s.intervals.notes.empty());
  EXPECT_NE(l40s.intervals.notes[0].find("roofline"), std::string::npos);
  // A framework with no published run, and a sequence beyond every run: 1.5 each.
  const Evaluation titan = Evaluate(Parse(Job("H100-SXM", "framework: torchtitan\n", 2 << 20)),
                                    Gpu("H100-SXM"), {.zero_stage = 3, .micro_batch = 1});
  EXPECT_DOUBLE_EQ(titan.intervals.widen, 1.5 * 1.5);
  EXPECT_EQ(titan.intervals.notes.size(), 2u);
}

// A saving's interval comes from the paired residuals and is narrower than either layout's.
TEST(IntervalsTest, ARatioIsSurerThanEitherFigure) {
  const JobSpec spec = Parse(Job("H100-SXM"));
  const Evaluation a = Evaluate(spec, Gpu("H100-SXM"), {.zero_stage = 3, .micro_batch = 1});
  const Evaluation b = Evaluate(spec, Gpu("H100-SXM"),
                                {.zero_stage = 3, .recompute = Recompute::kFull, .micro_batch = 1});
  const Interval ratio =
      RatioInterval(a.time.step_s, b.time.step_s, a.intervals, b.intervals, BuiltInFit());
  EXPECT_TRUE(ratio.contains(b.time.step_s / a.time.step_s));
  EXPECT_LT(LogWidth(ratio), LogWidth(a.intervals.step_s));
}

// The report puts each interval under its figure's key.
TEST(IntervalsTest, ReportKeysNameTheFigures) {
  const Evaluation e =
      Evaluate(Parse(Job("H100-SXM")), Gpu("H100-SXM"), {.zero_stage = 3, .micro_batch = 1});
  const base::Report r = IntervalsToReport(e.intervals);
  for (const char* key :
       {"step_time_s", "tokens_per_s_per_gpu", "mfu", "hfu", "model_tflops_per_gpu",
        "hardware_tflops_per_gpu", "memory_bytes_per_gpu"}) {
    ASSERT_TRUE(r.contains(key)) << key;
    EXPECT_LE(r[key][0].get<double>(), r[key][1].get<double>()) << key;
  }
  EXPECT_EQ(r["level"], 0.9);
}

}  // namespace
}  // namespace seedance::plan
