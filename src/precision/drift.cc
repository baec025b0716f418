#include "seedance/precision/drift.h"

#include <cmath>
#include <numeric>
#include <string>

#include "seedance/base/enum_names.h"

namespace seedance::precision {
namespace {

std::vector<double> Normalize(std::span<const double> h) {
  const double total = std::accumulate(h.begin(), h.end(), 0.0);
  std::vector<double> out(h.begin(), h.end());
  if (total > 0) {
    for (double& v : out) v /= total;
  }
  return out;
}

// Excess kurtosis of the distribution putting mass p[i] at x[i].
double Kurtosis(const std::vector<double>& p, std::span<const double> x) {
  double mean = 0;
  for (size_t i = 0; i < p.size(); ++i) mean += p[i] * x[i];
  double m2 = 0, m4 = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double d = x[i] - mean;
    m2 += p[i] * d * d;
    m4 += p[i] * d * d * d * d;
  }
  return m2 > 0 ? m4 / (m2 * m2) - 3.0 : 0.0;
}

}  // namespace

inline constexpr base::EnumTable<DriftAction, 3> kDriftActionNames = {{
    {DriftAction::kKeep, "keep"},
    {DriftAction::kAdjustScale, "adjust_scale"},
    {DriftAction::kRecalibrate, "recalibrate"},
}};

std::string_view DriftActionName(DriftAction a) { return base::EnumName(kDriftActionNames, a); }

base::StatusOr<Histogram> Histogram::Create(double lo, double hi, int bins) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi)) {
    return base::InvalidArgumentError("histogram range must be finite with lo < hi");
  }
  if (bins < 2) return base::InvalidArgumentError("histogram needs at least 2 bins");
  return Histogram(lo, hi, bins);
}

void Histogram::Add(std::span<const float> values) {
  const double n = static_cast<double>(counts_.size());
  const double inv_width = n / (hi_ - lo_);
  for (float v : values) {
    if (std::isnan(v)) continue;
    double b = std::floor((v - lo_) * inv_width);
    b = std::min(std::max(b, 0.0), n - 1);
    counts_[static_cast<size_t>(b)] += 1;
  }
}

std::vector<double> Histogram::Normalized() const { return Normalize(counts_); }

std::vector<double> Histogram::Centers() const {
  std::vector<double> c(counts_.size());
  const double w = (hi_ - lo_) / static_cast<double>(counts_.size());
  for (size_t i = 0; i < c.size(); ++i) c[i] = lo_ + (static_cast<double>(i) + 0.5) * w;
  return c;
}

base::StatusOr<DriftResult> MeasureDrift(std::span<const double> reference,
                                         std::span<const double> current,
                                         std::span<const double> centers,
                                         const DriftConfig& config) {
  if (reference.size() != current.size() || reference.size() != centers.size() ||
      reference.empty()) {
    return base::InvalidArgumentError(
        "histograms must have the same, non-zero number of bins (reference " +
        std::to_string(reference.size()) + ", current " + std::to_string(current.size()) +
        ", centers " + std::to_string(centers.size()) + ")");
  }
  for (size_t i = 0; i < reference.size(); ++i) {
    if (!(reference[i] >= 0 && current[i] >= 0)) {
      return base::InvalidArgumentError("histogram counts must be >= 0",
                                        "bin " + std::to_string(i));
    }
  }
  const auto p = Normalize(current);
  const auto q = Normalize(reference);
  DriftResult r;
  for (size_t i = 0; i < p.size(); ++i) {
    r.kl += p[i] * std::log((p[i] + config.eps) / (q[i] + config.eps));
  }
  r.kurtosis_reference = Kurtosis(q, centers);
  r.kurtosis_current = Kurtosis(p, centers);
  r.score = config.kl_weight * r.kl +
            config.kurtosis_weight * std::fabs(r.kurtosis_current - r.kurtosis_reference);
  if (r.score < config.keep_below) {
    r.action = DriftAction::kKeep;
  } else if (r.score < config.recalibrate_at) {
    r.action = DriftAction::kAdjustScale;
  } else {
    r.action = DriftAction::kRecalibrate;
  }
  return r;
}

base::StatusOr<DriftResult> MeasureDrift(const Histogram& reference, const Histogram& current,
                                         const DriftConfig& config) {
  if (reference.lo() != current.lo() || reference.hi() != current.hi()) {
    return base::InvalidArgumentError("histograms must cover the same range");
  }
  const auto centers = reference.Centers();
  return MeasureDrift(reference.counts(), current.counts(), centers, config);
}

base::Report DriftToReport(const DriftResult& r) {
  return {{"kl", r.kl},
          {"kurtosis_reference", r.kurtosis_reference},
          {"kurtosis_current", r.kurtosis_current},
          {"score", r.score},
          {"action", std::string(DriftActionName(r.action))}};
}

}  // namespace seedance::precision
