#include "seedance/plan/step_replay.h"

#include <gtest/gtest.h>

#include <map>

#include "seedance/plan/memory_model.h"
#include "seedance/plan/optimize.h"
#include "seedance/plan/search.h"

namespace seedance::plan {
namespace {

// The default job with no framework named: every layout is weighed.
JobSpec ReplayDefaultJob() {
  JobSpec spec = *ParseJobSpec(DefaultJobYaml(), "d", cost::GpuCatalog::BuiltIn());
  spec.framework = std::nullopt;
  return spec;
}

const cost::GpuSpec& ReplayGpuOf(const JobSpec& spec) {
  return **cost::GpuCatalog::BuiltIn().Get(spec.hardware.gpu);
}

// The most bytes live at once, by brute force over the buffers' event times.
int64_t ReplayPeakLive(const std::vector<mem::Buffer>& buffers) {
  std::map<int64_t, int64_t> delta;
  for (const mem::Buffer& b : buffers) {
    delta[b.lower] += b.size;
    delta[b.upper] -= b.size;
  }
  int64_t live = 0, peak = 0;
  for (const auto& [time, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return peak;
}

// The step's timeline is a second derivation of the memory model: its peak matches the closed
// form within 5% where the form's terms coincide in time (no recomputation transient, no
// interleaving; ZeRO-3 with small micro-batches is the widest gap, up to 4.3%: the closed form
// holds the prefetched layer, the backward gather and the root's gradients at once, which the
// timeline never does), and never exceeds it by more than 3% (the closed form adds full
// recomputation's transient to the logits, which the timeline never holds together). The replay's
// requested peak is the brute-force peak, and the model states are the estimate's to the byte per
// buffer.
TEST(StepReplayTest, TimelineAgreesWithTheMemoryModel) {
  const JobSpec spec = ReplayDefaultJob();
  const cost::GpuSpec& gpu = ReplayGpuOf(spec);
  const ModelFigures f = ComputeModelFigures(spec.model);
  const SearchResult found = Search(spec, gpu);
  ASSERT_GT(found.fitting.size(), 50u);
  int checked = 0;
  for (size_t i = 0; i < found.fitting.size(); i += 7) {
    const ParallelConfig& c = found.fitting[i].config;
    const MemoryEstimate m = EstimateMemory(spec, f, c, gpu.MemoryBytes());
    const auto tensors =
        static_cast<double>(m.total_bytes - m.fragmentation_bytes - m.reserve_bytes);
    auto buffers = PlannedStepBuffers(spec, f, c);
    ASSERT_TRUE(buffers.ok()) << buffers.status().ToString();
    const auto peak = static_cast<double>(ReplayPeakLive(*buffers));
    if (c.virtual_stages == 1) {
      EXPECT_LE(peak, tensors * 1.03)
          << i << " " << ParallelismToReport(c, spec.hardware.total_gpus(), 512).dump();
    }
    if (c.recompute != Recompute::kFull && c.recompute != Recompute::kOpSelective &&
        c.virtual_stages == 1) {
      EXPECT_NEAR(peak, tensors, tensors * 0.05)
          << i << " " << ParallelismToReport(c, spec.hardware.total_gpus(), 512).dump() << " "
          << m.peak_stage;
      ++checked;
    }
    int64_t states = 0;
    for (const mem::Buffer& b : *buffers) {
      if (b.lower == 0 && (b.id.ends_with(".weights") || b.id.ends_with(".gradients") ||
                           b.id.ends_with(".optimizer"))) {
        states += b.size;
      }
    }
    EXPECT_NEAR(static_cast<double>(states), static_cast<double>(m.model_state_bytes),
                3.0 * static_cast<double>(spec.model.layers + 1))
        << i;
    auto replay = ReplayPlannedStep(spec, f, c);
    ASSERT_TRUE(replay.ok());
    EXPECT_EQ(replay->requested_peak_bytes, ReplayPeakLive(*buffers));
    EXPECT_GE(replay->reserved_peak_bytes, replay->requested_peak_bytes);
    EXPECT_NEAR(replay->margin_fraction,
                static_cast<double>(replay->reserved_peak_bytes) /
                        static_cast<double>(replay->requested_peak_bytes) -
                    1,
                1e-12);
  }
  EXPECT_GT(checked, 5);
}

// The frameworks' own buffers are in the timeline as in the closed form: DeepSpeed's pipeline
// engine's stage outputs, rebuilt outputs and gradients and receive buffers (with and without
// tensor parallelism), its ZeRO 2 bucket; FSDP's SHARD_GRAD_OP
// holds a unit's unsharded gradients until their reduce-scatter and its gathered 16-bit weights;
// torchtitan keeps only its head's unit gathered, and under a pipeline the stage's weights and
// accumulated gradients the whole step.
TEST(StepReplayTest, FrameworkBuffersAgreeWithTheMemoryModel) {
  JobSpec spec = ReplayDefaultJob();
  const cost::GpuSpec& gpu = ReplayGpuOf(spec);
  const ModelFigures f = ComputeModelFigures(spec.model);
  struct Case {
    Framework framework;
    ParallelConfig c;
    const char* buffer;  // a buffer only this framework's timeline has
  };
  const Case cases[] = {
      {Framework::kDeepSpeed, {.pipeline = 2, .zero_stage = 1, .micro_batch = 1}, "stage_output"},
      {Framework::kDeepSpeed,
       {.tensor = 2, .pipeline = 4, .zero_stage = 1, .micro_batch = 1},
       "rebuilt_output_and_grad"},
      {Framework::kDeepSpeed, {.zero_stage = 2, .micro_batch = 1}, "bucket"},
      {Framework::kFsdp, {.zero_stage = 2, .micro_batch = 1}, "unsharded_grads"},
      {Framework::kTorchtitan, {.zero_stage = 3, .micro_batch = 1}, "root_gathered"},
      {Framework::kTorchtitan,
       {.pipeline = 2, .zero_stage = 3, .micro_batch = 1},
       "accumulated.gradients"},
  };
  for (const Case& k : cases) {
    spec.framework = k.framework;
    const MemoryEstimate m = EstimateMemory(spec, f, k.c, gpu.MemoryBytes());
    const auto tensors = static_cast<double>(m.total_bytes - m.fragmentation_bytes -
                                             m.reserve_bytes - m.measured_overhead_bytes);
    auto buffers = PlannedStepBuffers(spec, f, k.c);
    ASSERT_TRUE(buffers.ok()) << buffers.status().ToString();
    EXPECT_NEAR(static_cast<double>(ReplayPeakLive(*buffers)), tensors, tensors * 0.05)
        << FrameworkName(k.framework) << " " << k.buffer;
    bool found = false;
    for (const mem::Buffer& b : *buffers) found = found || b.id.find(k.buffer) != std::string::npos;
    EXPECT_TRUE(found) << k.buffer;
  }
}

// Full recomputation keeps each layer's input from its forward to its backward pass, and the
// other parts only while that layer's backward pass runs.
TEST(StepReplayTest, FullRecomputationKeepsOnlyInputsAcrossTheStep) {
  const JobSpec spec = ReplayDefaultJob();
  const ModelFigures f = ComputeModelFigures(spec.model);
  ParallelConfig c = spec.parallelism;
  ASSERT_EQ(c.recompute, Recompute::kFull);
  auto buffers = PlannedStepBuffers(spec, f, c);
  ASSERT_TRUE(buffers.ok());
  int inputs = 0;
  for (const mem::Buffer& b : *buffers) {
    if (b.id.ends_with(".mlp") || b.id.ends_with(".attention") || b.id.ends_with(".norms")) {
      EXPECT_EQ(b.upper - b.lower, 1) << b.id;
    }
    if (b.id.ends_with(".input")) {
      ++inputs;
      EXPECT_GT(b.upper - b.lower, 1) << b.id;
    }
  }
  // Pure data parallelism: micro-batches run one after another; three of them are simulated.
  EXPECT_EQ(inputs, 3 * spec.model.layers);
}

// The report's margin is the replay's: at least the stated and the recommended layouts' own,
// and every memory figure of the report uses it.
TEST(StepReplayTest, ReportUsesTheReplayedMargin) {
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const base::Report& frag = (*r)["fragmentation"];
  const double margin = frag["margin_fraction"].get<double>();
  EXPECT_GE(margin, frag["before"]["margin_fraction"].get<double>());
  EXPECT_GE(margin, frag["after"]["margin_fraction"].get<double>());
  for (const char* side : {"before", "after"}) {
    const base::Report& m = (*r)[side]["memory"];
    const auto managed = m["total_bytes"].get<int64_t>() - m["fragmentation_bytes"].get<int64_t>() -
                         m["reserve_bytes"].get<int64_t>();
    EXPECT_NEAR(m["fragmentation_bytes"].get<double>(), static_cast<double>(managed) * margin, 1.0)
        << side;
  }
}

}  // namespace
}  // namespace seedance::plan
