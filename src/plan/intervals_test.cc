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
  // DeepSpeed's ZeRO 3: a framework with published runs.
  const Evaluation plain =
      Evaluate(Parse(Job("H100-SXM", "framework: deepspeed\n")), Gpu("H100-SXM"), c);
  const EvaluationIntervals& i = plain.intervals;
  EXPECT_TRUE(i.step_s.contains(plain.time.step_s));
  EXPECT_TRUE(i.mfu.contains(plain.mfu));
  EXPECT_TRUE(i.tokens_per_s_per_gpu.contains(plain.tokens_per_s_per_gpu));
  // (DeepSpeed's memory interval carries BLOOM's bias: MemoryErrorIsTheMeasuredFrameworks.)
  EXPECT_NEAR(i.tokens_per_s_per_gpu.low * i.step_s.high,
              plain.tokens_per_s_per_gpu * plain.time.step_s, 1e-6 * plain.tokens_per_s_per_gpu);
  EXPECT_DOUBLE_EQ(i.widen, 1);
  EXPECT_EQ(i.regime, Regime::kMultiNodeData);
  // Inside the calibrated region: the regime's quantiles, widened for a source outside the set.
  const PublicFit& fit = BuiltInFit();
  const ResidualQuantiles& q = RegimeQuantiles(fit.step_time, fit.step_time_all, i.regime);
  EXPECT_NEAR(LogWidth(i.step_s), fit.step_time_widening * (q.q95 - q.q05), 1e-9);
  EXPECT_NEAR(std::log(i.step_s.low * i.step_s.high / (plain.time.step_s * plain.time.step_s)),
              q.q05 + q.q95, 1e-9);  // about the quantiles' middle
  // No kernel rows for an L40S: the roofline, twice as wide.
  const Evaluation l40s = Evaluate(Parse(Job("L40S", "framework: deepspeed\n")), Gpu("L40S"), c);
  EXPECT_DOUBLE_EQ(l40s.intervals.widen, 2);
  EXPECT_NEAR(LogWidth(l40s.intervals.step_s), 2 * LogWidth(i.step_s), 1e-9);
  ASSERT_FALSE(l40s.intervals.notes.empty());
  EXPECT_NE(l40s.intervals.notes[0].find("roofline"), std::string::npos);
  // A framework with no published run, and a sequence beyond every run: 1.5 each.
  const Evaluation titan = Evaluate(Parse(Job("H100-SXM", "framework: torchtitan\n", 2 << 20)),
                                    Gpu("H100-SXM"), {.zero_stage = 3, .micro_batch = 1});
  EXPECT_DOUBLE_EQ(titan.intervals.widen, 1.5 * 1.5);
  ASSERT_EQ(titan.intervals.notes.size(), 3u);  // the two, and no memory row of torchtitan
  EXPECT_NE(titan.intervals.notes[2].find("memory interval is centred"), std::string::npos);
  EXPECT_TRUE(
      titan.intervals.memory_bytes_per_gpu.contains(static_cast<double>(titan.memory.total_bytes)));
}

// The memory rows' error (their bias included) is their framework's; another framework's memory
// interval is centred on the estimate, 1.5 times as wide.
TEST(IntervalsTest, MemoryErrorIsTheMeasuredFrameworks) {
  const PublicFit& fit = BuiltInFit();
  ASSERT_NE(fit.memory_frameworks_with_rows & (1u << static_cast<unsigned>(Framework::kDeepSpeed)),
            0u);
  const ParallelConfig c{.zero_stage = 1, .micro_batch = 1};
  const Evaluation ds =
      Evaluate(Parse(Job("H100-SXM", "framework: deepspeed\n")), Gpu("H100-SXM"), c);
  const double m = static_cast<double>(ds.memory.total_bytes);
  EXPECT_NEAR(ds.intervals.memory_bytes_per_gpu.low, m * std::exp(fit.memory.q05), 1e-6 * m);
  EXPECT_NEAR(ds.intervals.memory_bytes_per_gpu.high, m * std::exp(fit.memory.q95), 1e-6 * m);
  const Evaluation mg =
      Evaluate(Parse(Job("H100-SXM", "framework: megatron\n")), Gpu("H100-SXM"), c);
  const double n = static_cast<double>(mg.memory.total_bytes);
  const Interval& i = mg.intervals.memory_bytes_per_gpu;
  EXPECT_NEAR(i.low * i.high, n * n, 1e-9 * n * n);  // centred on the log scale
  EXPECT_NEAR(std::log(i.high / i.low), 1.5 * (fit.memory.q95 - fit.memory.q05), 1e-9);
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

// The verdict of a stated layout from its memory interval against the GPU: every position of
// the capacity against the interval.
TEST(IntervalsTest, MemoryFitFollowsTheInterval) {
  EvaluationIntervals i;
  i.memory_bytes_per_gpu = {90, 110};
  EXPECT_EQ(MemoryFitOf(i, 120), MemoryFit::kFits);
  EXPECT_EQ(MemoryFitOf(i, 110), MemoryFit::kFits);
  EXPECT_EQ(MemoryFitOf(i, 100), MemoryFit::kAtRisk);
  EXPECT_EQ(MemoryFitOf(i, 90), MemoryFit::kAtRisk);
  EXPECT_EQ(MemoryFitOf(i, 89), MemoryFit::kDoesNotFit);
  EXPECT_EQ(MemoryFitName(MemoryFit::kAtRisk), "at risk");
  EXPECT_EQ(MemoryFitName(MemoryFit::kDoesNotFit), "does not fit");
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
