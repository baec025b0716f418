#include "seedance/precision/loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "seedance/base/enum_names.h"

namespace seedance::precision {
namespace {

base::Status Positive(double v, const char* field) {
  if (std::isfinite(v) && v > 0) return base::OkStatus();
  return base::InvalidArgumentError("must be a finite number > 0", field);
}

}  // namespace

namespace {

constexpr base::EnumTable<ScalerMode, 3> kModeNames = {{{ScalerMode::kStatic, "static"},
                                                        {ScalerMode::kDynamic, "dynamic"},
                                                        {ScalerMode::kGradNorm, "grad-norm"}}};

}  // namespace

std::string_view ScalerModeName(ScalerMode mode) { return base::EnumName(kModeNames, mode); }

base::StatusOr<ScalerMode> ParseScalerMode(std::string_view name, std::string_view where) {
  return base::ParseEnum(kModeNames, name, where);
}

base::Status LossScalerConfig::Validate() const {
  SEEDANCE_RETURN_IF_ERROR(Positive(init_scale, "init_scale"));
  SEEDANCE_RETURN_IF_ERROR(Positive(growth_factor, "growth_factor"));
  SEEDANCE_RETURN_IF_ERROR(Positive(backoff_factor, "backoff_factor"));
  SEEDANCE_RETURN_IF_ERROR(Positive(max_scale, "max_scale"));
  SEEDANCE_RETURN_IF_ERROR(Positive(decay_factor, "decay_factor"));
  SEEDANCE_RETURN_IF_ERROR(Positive(grad_norm_max_scale, "grad_norm_max_scale"));
  SEEDANCE_RETURN_IF_ERROR(Positive(grad_norm_min_scale, "grad_norm_min_scale"));
  if (growth_factor < 1) return base::InvalidArgumentError("must be >= 1", "growth_factor");
  if (backoff_factor >= 1) return base::InvalidArgumentError("must be < 1", "backoff_factor");
  if (decay_factor >= 1) return base::InvalidArgumentError("must be < 1", "decay_factor");
  if (!(min_scale >= 0 && min_scale <= max_scale)) {
    return base::InvalidArgumentError("must be in [0, max_scale]", "min_scale");
  }
  if (growth_interval < 1) return base::InvalidArgumentError("must be >= 1", "growth_interval");
  if (hysteresis < 1) return base::InvalidArgumentError("must be >= 1", "hysteresis");
  if (eval_interval < 1) return base::InvalidArgumentError("must be >= 1", "eval_interval");
  if (!(rise_ratio >= 0 && collapse_ratio >= 0 && collapse_ratio <= rise_ratio)) {
    return base::InvalidArgumentError("need 0 <= collapse_ratio <= rise_ratio", "collapse_ratio");
  }
  return base::OkStatus();
}

LossScalerConfig GradNormConfigForSequenceLength(int64_t sequence_length) {
  LossScalerConfig c;
  c.mode = ScalerMode::kGradNorm;
  if (sequence_length < 512) {
    c.init_scale = 8192;
    c.decay_factor = 0.92;
  } else if (sequence_length <= 2048) {
    c.init_scale = 4096;
    c.decay_factor = 0.85;
  } else {
    c.init_scale = 2048;
    c.decay_factor = 0.80;
  }
  return c;
}

namespace {

// The dynamic scale lives in float32, as torch's GradScaler keeps it in a float32 tensor: each
// change is computed in double and rounded to float (torch's _amp_update_scale_).
double AsFloat(double v) { return static_cast<double>(static_cast<float>(v)); }

}  // namespace

LossScaler::LossScaler(const LossScalerConfig& config) : config_(config) {
  state_.scale =
      config.mode == ScalerMode::kDynamic ? AsFloat(config.init_scale) : config.init_scale;
  state_.hysteresis_left = config.hysteresis;
}

base::StatusOr<LossScaler> LossScaler::Create(const LossScalerConfig& config) {
  SEEDANCE_RETURN_IF_ERROR(config.Validate());
  return LossScaler(config);
}

void LossScaler::BackOff() {
  state_.scale = AsFloat(std::max(state_.scale * config_.backoff_factor, config_.min_scale));
}

bool LossScaler::Update(bool found_non_finite, double grad_norm) {
  ++state_.steps;
  if (found_non_finite) ++state_.skipped_steps;
  switch (config_.mode) {
    case ScalerMode::kStatic:
      return !found_non_finite;

    case ScalerMode::kDynamic:
      if (found_non_finite) {
        if (state_.hysteresis_left <= 1) {
          BackOff();
        } else {
          --state_.hysteresis_left;
        }
        state_.growth_tracker = 0;
        return false;
      }
      if (config_.consecutive_hysteresis) state_.hysteresis_left = config_.hysteresis;
      if (++state_.growth_tracker == config_.growth_interval) {
        if (!config_.consecutive_hysteresis) state_.hysteresis_left = config_.hysteresis;
        // torch does not grow past float32's range: the scale stays where it is.
        const double grown = AsFloat(state_.scale * config_.growth_factor);
        if (std::isfinite(grown)) {
          if (grown <= config_.max_scale) {
            state_.scale = grown;
          } else if (state_.scale < config_.max_scale) {
            state_.scale = AsFloat(config_.max_scale);
          }
        }
        state_.growth_tracker = 0;
      }
      return true;

    case ScalerMode::kGradNorm:
      if (found_non_finite) {
        state_.scale = std::max(state_.scale * config_.backoff_factor, config_.grad_norm_min_scale);
        return false;
      }
      if (++state_.growth_tracker >= config_.eval_interval) {
        state_.growth_tracker = 0;
        const double prev = state_.last_eval_norm;
        if (prev >= 0) {
          if (grad_norm > config_.rise_ratio * prev) {
            state_.scale = std::min(state_.scale * 2.0, config_.grad_norm_max_scale);
          } else if (grad_norm < config_.collapse_ratio * prev) {
            state_.scale =
                std::max(state_.scale * config_.decay_factor, config_.grad_norm_min_scale);
          }
        }
        state_.last_eval_norm = grad_norm;
      }
      return true;
  }
  return !found_non_finite;
}

namespace {

// The serialised fields: one table drives ToJson and both readers.
template <typename Owner>
struct Fields {
  std::vector<std::pair<const char*, double Owner::*>> numbers;
  std::vector<std::pair<const char*, int64_t Owner::*>> integers;
  std::vector<std::pair<const char*, bool Owner::*>> flags;
};

const Fields<LossScalerConfig>& ConfigFields() {
  using C = LossScalerConfig;
  static const Fields<C> f{{{"init_scale", &C::init_scale},
                            {"growth_factor", &C::growth_factor},
                            {"backoff_factor", &C::backoff_factor},
                            {"min_scale", &C::min_scale},
                            {"max_scale", &C::max_scale},
                            {"rise_ratio", &C::rise_ratio},
                            {"collapse_ratio", &C::collapse_ratio},
                            {"decay_factor", &C::decay_factor},
                            {"grad_norm_max_scale", &C::grad_norm_max_scale},
                            {"grad_norm_min_scale", &C::grad_norm_min_scale}},
                           {{"growth_interval", &C::growth_interval},
                            {"hysteresis", &C::hysteresis},
                            {"eval_interval", &C::eval_interval}},
                           {{"consecutive_hysteresis", &C::consecutive_hysteresis}}};
  return f;
}

const Fields<ScalerState>& StateFields() {
  using S = ScalerState;
  static const Fields<S> f{{{"scale", &S::scale}, {"last_eval_norm", &S::last_eval_norm}},
                           {{"steps", &S::steps},
                            {"skipped_steps", &S::skipped_steps},
                            {"growth_tracker", &S::growth_tracker},
                            {"hysteresis_left", &S::hysteresis_left}},
                           {}};
  return f;
}

template <typename Owner>
void WriteFields(const Fields<Owner>& fields, const Owner& from, base::Report& to) {
  for (const auto& [name, member] : fields.numbers) to[name] = from.*member;
  for (const auto& [name, member] : fields.integers) to[name] = from.*member;
  for (const auto& [name, member] : fields.flags) to[name] = from.*member;
}

// Reads json[section][key] into `out`, with the field's path in any error.
template <typename T>
base::Status Read(const base::Report& json, const char* section, const char* key, T& out) {
  const std::string where = std::string(section) + "." + key;
  if (!json.contains(section) || !json[section].is_object() || !json[section].contains(key)) {
    return base::InvalidArgumentError("missing field", where);
  }
  const base::Report& v = json[section][key];
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return base::InvalidArgumentError("expected true or false", where);
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) return base::InvalidArgumentError("expected an integer", where);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) return base::InvalidArgumentError("expected a number", where);
  } else {
    if (!v.is_string()) return base::InvalidArgumentError("expected a string", where);
  }
  out = v.get<T>();
  return base::OkStatus();
}

// Reads every field of the table; with `optional`, a missing key keeps the current value.
template <typename Owner>
base::Status ReadFields(const Fields<Owner>& fields, const base::Report& json, const char* section,
                        bool optional, Owner& to) {
  auto one = [&](const char* name, auto& out) {
    if (optional && !json[section].contains(name)) return base::OkStatus();
    return Read(json, section, name, out);
  };
  for (const auto& [name, member] : fields.numbers) SEEDANCE_RETURN_IF_ERROR(one(name, to.*member));
  for (const auto& [name, member] : fields.integers)
    SEEDANCE_RETURN_IF_ERROR(one(name, to.*member));
  for (const auto& [name, member] : fields.flags) SEEDANCE_RETURN_IF_ERROR(one(name, to.*member));
  return base::OkStatus();
}

}  // namespace

base::Report LossScaler::ToJson() const {
  base::Report r;
  r["config"]["mode"] = std::string(ScalerModeName(config_.mode));
  WriteFields(ConfigFields(), config_, r["config"]);
  WriteFields(StateFields(), state_, r["state"]);
  return r;
}

base::StatusOr<LossScalerConfig> LossScalerConfigFromJson(const base::Report& json) {
  if (!json.is_object()) return base::InvalidArgumentError("expected an object", "config");
  const base::Report wrapped = {{"config", json}};
  LossScalerConfig c;
  std::string mode(ScalerModeName(c.mode));
  if (json.contains("mode")) SEEDANCE_RETURN_IF_ERROR(Read(wrapped, "config", "mode", mode));
  SEEDANCE_ASSIGN_OR_RETURN(const ScalerMode parsed, ParseScalerMode(mode, "config.mode"));
  if (parsed == ScalerMode::kGradNorm) {
    // Without a sequence length: the general default, 2^12 (the 512..2048 row).
    int64_t seq = 512;
    if (json.contains("sequence_length")) {
      SEEDANCE_RETURN_IF_ERROR(Read(wrapped, "config", "sequence_length", seq));
    }
    c = GradNormConfigForSequenceLength(seq);
  }
  c.mode = parsed;
  const Fields<LossScalerConfig>& fields = ConfigFields();
  for (const auto& [key, value] : json.items()) {
    bool known = key == "mode" || key == "sequence_length";
    for (const auto& f : fields.numbers) known = known || key == f.first;
    for (const auto& f : fields.integers) known = known || key == f.first;
    for (const auto& f : fields.flags) known = known || key == f.first;
    if (!known) return base::InvalidArgumentError("unknown field", "config." + key);
  }
  SEEDANCE_RETURN_IF_ERROR(ReadFields(fields, wrapped, "config", /*optional=*/true, c));
  if (base::Status st = c.Validate(); !st.ok()) {
    return st.WithWhere("config." + std::string(st.where()));
  }
  return c;
}

base::StatusOr<LossScaler> LossScaler::FromJson(const base::Report& json) {
  if (!json.is_object() || !json.contains("config")) {
    return base::InvalidArgumentError("missing field", "config");
  }
  SEEDANCE_ASSIGN_OR_RETURN(LossScalerConfig c, LossScalerConfigFromJson(json["config"]));
  SEEDANCE_ASSIGN_OR_RETURN(LossScaler scaler, Create(c));
  ScalerState& s = scaler.state_;
  SEEDANCE_RETURN_IF_ERROR(ReadFields(StateFields(), json, "state", /*optional=*/false, s));
  if (!(std::isfinite(s.scale) && s.scale > 0)) {
    return base::InvalidArgumentError("must be a finite number > 0", "state.scale");
  }
  if (s.steps < 0 || s.skipped_steps < 0 || s.skipped_steps > s.steps || s.growth_tracker < 0 ||
      s.hysteresis_left < 1 || s.hysteresis_left > c.hysteresis) {
    return base::InvalidArgumentError("counters out of range", "state");
  }
  return scaler;
}

}  // namespace seedance::precision
