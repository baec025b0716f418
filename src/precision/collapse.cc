#include "seedance/precision/collapse.h"

#include <cmath>
#include <limits>

namespace seedance::precision {

base::Status CollapseConfig::Validate() const {
  if (consecutive < 1) return base::InvalidArgumentError("must be >= 1", "consecutive");
  if (window < consecutive + 1) {
    return base::InvalidArgumentError("must be > consecutive (ratios need two norms)", "window");
  }
  if (!(ratio_threshold > 0 && ratio_threshold < 1)) {
    return base::InvalidArgumentError("must be in (0, 1)", "ratio_threshold");
  }
  if (!(variance_threshold >= 0)) {
    return base::InvalidArgumentError("must be >= 0", "variance_threshold");
  }
  return base::OkStatus();
}

base::StatusOr<CollapseDetector> CollapseDetector::Create(const CollapseConfig& config) {
  SEEDANCE_RETURN_IF_ERROR(config.Validate());
  return CollapseDetector(config);
}

bool CollapseDetector::Observe(const std::string& layer, double grad_norm, double grad_variance) {
  std::deque<double>& h = norms_[layer];
  h.push_back(grad_norm);
  while (static_cast<int>(h.size()) > config_.window) h.pop_front();
  if (static_cast<int>(h.size()) < config_.consecutive + 1) return false;
  if (!(grad_variance < config_.variance_threshold)) return false;
  for (int k = 0; k < config_.consecutive; ++k) {
    const double cur = h[h.size() - 1 - k];
    const double prev = h[h.size() - 2 - k];
    double ratio;
    if (prev > 0) {
      ratio = cur / prev;
    } else {
      ratio = cur == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    }
    if (!(ratio < config_.ratio_threshold)) return false;
  }
  return true;
}

void CollapseDetector::Reset(const std::string& layer) { norms_.erase(layer); }

void CollapseDetector::ResetAll() { norms_.clear(); }

}  // namespace seedance::precision
