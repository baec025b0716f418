// Prediction intervals (feature CLI-1): every figure the planner predicts for a layout comes
// with a 90% interval from the leave-one-source-out residuals of the public fit (coefficients.h)
// for the regime the layout is in, widened where the layout is outside what the calibration set
// covers (docs/design/plan.md, "How far to trust a figure").
//
//   step time      predicted x exp([q05, q95]) of log(published / predicted) in the regime, each
//                  source one share (calibration.h, StepTimeSpreadOf; all regimes pooled when
//                  the regime has fewer than kMinRegimeRows rows), widened about their middle by
//                  PublicFit::step_time_widening so that a source outside the set is covered
//   tokens/s, MFU, HFU, model and hardware TFLOP/s: the step time's interval, inverted
//   memory         predicted x exp([q05, q95]) of the memory rows' log residuals
//   a saving       the ratio after / before x exp(paired quantiles): two layouts of one job are
//                  predicted with correlated errors, so their ratio is surer than either
//
// Outside the calibrated region the interval's log width grows by a factor, and a note says why:
// a GPU or precision without kernel rows (the datasheet roofline: x2), a framework without
// published runs (x1.5), a sequence longer or a job larger than any row (x1.5 each), an
// interconnect without rows (x1.5).
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/coefficients.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/parallelism.h"

namespace seedance::plan {

inline constexpr int kMinRegimeRows = 10;

// The step-time quantiles a layout in `regime` takes: its regime's, or every regime's pooled
// (`all`) when its regime has fewer than kMinRegimeRows rows.
const ResidualQuantiles& RegimeQuantiles(
    const std::array<ResidualQuantiles, kRegimeCount>& by_regime, const ResidualQuantiles& all,
    Regime regime);

// The regime of a layout (coefficients.h): one node or several, model parallelism or not.
Regime RegimeOf(const JobSpec& spec, const ParallelConfig& c);

struct Interval {
  double low = 0, high = 0;
  bool contains(double v) const { return v >= low && v <= high; }
};

struct EvaluationIntervals {
  Regime regime = Regime::kSingleNodeData;
  double widen = 1;  // factor on the log width (1: inside the calibrated region)
  Interval step_s, tokens_per_s_per_gpu, mfu, hfu, model_tflops_per_gpu, hardware_tflops_per_gpu;
  Interval memory_bytes_per_gpu;
  std::vector<std::string> notes;  // why the interval is wider, where it is
};

// The figures an interval is put around.
struct PredictedFigures {
  double step_s = 0, tokens_per_s_per_gpu = 0, mfu = 0, hfu = 0, model_tflops_per_gpu = 0,
         hardware_tflops_per_gpu = 0, memory_bytes_per_gpu = 0;
};

EvaluationIntervals IntervalsFor(const JobSpec& spec, const cost::GpuSpec& gpu,
                                 const ParallelConfig& c, const PredictedFigures& figures,
                                 const PublicFit& fit);

// The interval of after's step time over before's (both of one job): the predicted ratio times
// the paired residuals' quantiles, widened only by what one layout's notes add beyond the
// other's (what both share, such as the framework, moves both predictions alike).
Interval RatioInterval(double before_s, double after_s, const EvaluationIntervals& before,
                       const EvaluationIntervals& after, const PublicFit& fit);

// Whether a layout fits, as surely as its memory interval says: kFits when even the interval's
// high end is inside the GPU, kDoesNotFit when even its low end is over, kAtRisk between (the
// estimate may be either side: the model's memory error is the difference). The verdict of a
// stated layout; the search keeps the estimate plus the headroom as its test.
enum class MemoryFit { kFits, kAtRisk, kDoesNotFit };
std::string_view MemoryFitName(MemoryFit fit);  // "fits", "at risk", "does not fit"
MemoryFit MemoryFitOf(const EvaluationIntervals& i, double capacity_bytes);

// The keys of `figures` with their intervals: {"step_time_s": [low, high], ...}.
base::Report IntervalsToReport(const EvaluationIntervals& i);

// The fit's quantiles, per regime, as the fit prints them.
base::Report PublicFitSpreadToReport(const PublicFit& fit);

}  // namespace seedance::plan
