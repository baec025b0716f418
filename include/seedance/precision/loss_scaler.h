// Loss scaling (feature PREC-2): the scale a loss is multiplied by before the
// backward pass so that small FP16 gradients do not flush to zero, and the
// rule that changes it. Three modes:
//
//  static     the scale never changes; a step with a non-finite gradient is skipped.
//  dynamic    torch.cuda.amp.GradScaler's rule: start at init_scale (2^16);
//             after growth_interval (2000) clean steps in a row multiply by
//             growth_factor (2); on a non-finite gradient skip the step,
//             multiply by backoff_factor (0.5) and restart the count. With
//             DeepSpeed's hysteresis H > 1, the first H-1 overflows (since the
//             last growth, or in a row with consecutive_hysteresis) skip the
//             step without backing off. min_scale / max_scale bound the scale.
//             As in torch, the scale is a float32 value (each change is computed
//             in double, then rounded to float) and never grows past float32's
//             range: a growth that would overflow leaves it unchanged.
//  grad-norm  every eval_interval (50) clean steps compare
//             the unscaled global gradient norm with the one at the previous
//             evaluation: above rise_ratio (0.1) times it, scale x2 (at most
//             65536); below collapse_ratio (0.05) times it, scale x decay (at
//             least 1). init_scale and decay by sequence length: < 512: 8192,
//             0.92; 512..2048: 4096, 0.85; > 2048: 2048, 0.80. A non-finite
//             gradient still skips the step and backs off (x0.5): without
//             that, one overflow would repeat for up to 50 steps.
//
// Every rank of a data-parallel job must call Update with the same
// found_non_finite (reduce it with MAX first) so that all skip the same step.
//
// Thread safety: a LossScaler is a value; use one per training loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::precision {

enum class ScalerMode { kStatic, kDynamic, kGradNorm };

std::string_view ScalerModeName(ScalerMode mode);  // "static", "dynamic", "grad-norm"
base::StatusOr<ScalerMode> ParseScalerMode(std::string_view name, std::string_view where = "mode");

struct LossScalerConfig {
  ScalerMode mode = ScalerMode::kDynamic;
  double init_scale = 65536.0;
  // dynamic
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  int64_t hysteresis = 1;  // 1: torch's behaviour
  bool consecutive_hysteresis = false;
  double min_scale = 0.0;           // 0: no lower bound (torch)
  double max_scale = 3.4028235e38;  // the largest float: torch keeps its scale finite
  // grad-norm
  int64_t eval_interval = 50;
  double rise_ratio = 0.1;
  double collapse_ratio = 0.05;
  double decay_factor = 0.85;
  double grad_norm_max_scale = 65536.0;
  double grad_norm_min_scale = 1.0;

  base::Status Validate() const;
};

// A config from JSON: the fields of ToJson()["config"], each optional (the
// defaults above), plus "sequence_length" which, in grad-norm mode, picks the
// table's init_scale and decay first (without it: 4096 and 0.85, the
// general advice). Unknown fields are errors.
base::StatusOr<LossScalerConfig> LossScalerConfigFromJson(const base::Report& json);

// The grad-norm mode's defaults for a sequence length (table above).
LossScalerConfig GradNormConfigForSequenceLength(int64_t sequence_length);

struct ScalerState {
  double scale = 0;
  int64_t steps = 0;          // Update calls
  int64_t skipped_steps = 0;  // of which skipped
  int64_t growth_tracker =
      0;  // clean steps since the last change (dynamic) or evaluation (grad-norm)
  int64_t hysteresis_left = 1;
  double last_eval_norm = -1;  // grad-norm: the norm at the previous evaluation; < 0: none yet
};

class LossScaler {
 public:
  static base::StatusOr<LossScaler> Create(const LossScalerConfig& config);

  double scale() const { return state_.scale; }
  const ScalerState& state() const { return state_; }
  const LossScalerConfig& config() const { return config_; }

  // Records one step. `found_non_finite`: some gradient is inf/NaN (agreed
  // across ranks). `grad_norm`: the unscaled global L2 norm (grad-norm mode
  // only). Returns true when the optimizer step should be applied.
  bool Update(bool found_non_finite, double grad_norm = 0.0);

  // Config and state as JSON, and back; FromJson names the bad field.
  base::Report ToJson() const;
  static base::StatusOr<LossScaler> FromJson(const base::Report& json);

 private:
  explicit LossScaler(const LossScalerConfig& config);
  void BackOff();

  LossScalerConfig config_;
  ScalerState state_;
};

}  // namespace seedance::precision
