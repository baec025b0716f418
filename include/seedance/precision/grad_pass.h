// One fused pass over a list of FP32 gradients (feature PREC-3): each value is
// read once, multiplied by 1/scale and written back, and the pass reports
// whether any value is non-finite and the L2 norms (per tensor and global) of
// the unscaled gradients.
//
// Squares are summed in double: the square of any finite float fits, so a
// norm is non-finite exactly when some value is (or becomes) inf or NaN.
//
// Thread safety: the caller owns the buffers; distinct lists may be processed
// concurrently.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace seedance::precision {

struct GradView {
  float* data = nullptr;
  size_t size = 0;
};

struct GradPassResult {
  bool found_non_finite = false;
  double global_norm = 0;          // sqrt of the sum of all squares; inf/NaN when found_non_finite
  std::vector<double> norms;       // one per tensor
  std::vector<size_t> non_finite;  // indices of the tensors holding inf or NaN
};

// inv_scale = 1 only measures (the values are still rewritten, unchanged).
GradPassResult UnscaleAndMeasure(std::span<const GradView> grads, float inv_scale);

}  // namespace seedance::precision
