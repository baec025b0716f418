#include "seedance/precision/grad_pass.h"

#include <cmath>

namespace seedance::precision {
namespace {

// Four independent accumulators let the compiler keep several multiply-adds
// in flight; the order of the final sum is fixed, so results are repeatable.
double UnscaleOne(float* x, size_t n, float inv_scale) {
  double acc[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int k = 0; k < 4; ++k) {
      const float y = x[i + k] * inv_scale;
      x[i + k] = y;
      acc[k] += static_cast<double>(y) * y;
    }
  }
  for (; i < n; ++i) {
    const float y = x[i] * inv_scale;
    x[i] = y;
    acc[0] += static_cast<double>(y) * y;
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

}  // namespace

GradPassResult UnscaleAndMeasure(std::span<const GradView> grads, float inv_scale) {
  GradPassResult r;
  r.norms.reserve(grads.size());
  double total = 0;
  for (size_t t = 0; t < grads.size(); ++t) {
    const double sumsq = UnscaleOne(grads[t].data, grads[t].size, inv_scale);
    if (!std::isfinite(sumsq)) {
      r.found_non_finite = true;
      r.non_finite.push_back(t);
    }
    r.norms.push_back(std::sqrt(sumsq));
    total += sumsq;
  }
  r.global_norm = std::sqrt(total);
  return r;
}

}  // namespace seedance::precision
