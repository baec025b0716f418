// QAT drift detection (feature PREC-7): how far a layer's current
// activation or weight distribution has moved from its calibration
// histogram, and what to do about it.
//
//   score = kl_weight (0.7) * KL(current || reference)
//         + kurtosis_weight (0.3) * |kurtosis(current) - kurtosis(reference)|
//
//   score < keep_below (0.15)            keep the calibration
//   keep_below <= score < recalibrate_at (0.3)  adjust the scale
//   score >= recalibrate_at              recalibrate (this layer and the next)
//
// Both histograms are normalised to sum 1 over the same bins; KL adds eps
// (1e-6) to every bin as PREC-7 specifies. Kurtosis is the excess kurtosis of the
// distribution the histogram describes (bin centres weighted by mass: 0 for a
// normal, 3 for a Laplace). A naive recipe applies scipy's kurtosis to the
// bin heights instead, which measures how uneven the bars are, not the shape
// of the data; we use the distribution's.
//
// Thread safety: pure functions and values.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::precision {

struct DriftConfig {
  double kl_weight = 0.7;
  double kurtosis_weight = 0.3;
  double keep_below = 0.15;
  double recalibrate_at = 0.3;
  double eps = 1e-6;
};

enum class DriftAction { kKeep, kAdjustScale, kRecalibrate };
std::string_view DriftActionName(DriftAction a);  // "keep", "adjust_scale", "recalibrate"

// A fixed-range histogram (the range comes from calibration; values outside
// it land in the end bins).
class Histogram {
 public:
  static base::StatusOr<Histogram> Create(double lo, double hi, int bins = 256);
  void Add(std::span<const float> values);
  const std::vector<double>& counts() const { return counts_; }
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  // Counts normalised to sum 1 (all zero when empty).
  std::vector<double> Normalized() const;
  std::vector<double> Centers() const;

 private:
  Histogram(double lo, double hi, int bins) : lo_(lo), hi_(hi), counts_(bins, 0.0) {}
  double lo_, hi_;
  std::vector<double> counts_;
};

struct DriftResult {
  double kl = 0;
  double kurtosis_reference = 0;
  double kurtosis_current = 0;
  double score = 0;
  DriftAction action = DriftAction::kKeep;
};

// Histograms over the same bins (same size; `centers` gives the bin centres).
base::StatusOr<DriftResult> MeasureDrift(std::span<const double> reference,
                                         std::span<const double> current,
                                         std::span<const double> centers,
                                         const DriftConfig& config = {});
base::StatusOr<DriftResult> MeasureDrift(const Histogram& reference, const Histogram& current,
                                         const DriftConfig& config = {});

base::Report DriftToReport(const DriftResult& r);

}  // namespace seedance::precision
