#include "seedance/control/hpa.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace seedance::control {

HpaRules HpaSpec::DefaultScaleUp() {
  return HpaRules{
      .stabilization_window_s = 0,
      .select = HpaRules::Select::kMax,
      .policies = {{HpaPolicy::Type::kPercent, 100, 15}, {HpaPolicy::Type::kPods, 4, 15}}};
}

HpaRules HpaSpec::DefaultScaleDown() {
  return HpaRules{.stabilization_window_s = 300,
                  .select = HpaRules::Select::kMax,
                  .policies = {{HpaPolicy::Type::kPercent, 100, 15}}};
}

int32_t Hpa::ChangeWithin(const std::vector<ScaleEvent>& events, double now_s,
                          int32_t period_s) const {
  int32_t total = 0;
  for (const ScaleEvent& e : events) {
    if (e.at_s > now_s - period_s) total += e.change;  // strictly inside the period
  }
  return total;
}

int32_t Hpa::PeriodStart(double now_s, int32_t current, int32_t period_s) const {
  return current - ChangeWithin(up_events_, now_s, period_s) +
         ChangeWithin(down_events_, now_s, period_s);
}

int32_t Hpa::ScaleUpLimit(double now_s, int32_t current) const {
  const HpaRules& rules = spec_.scale_up;
  if (rules.select == HpaRules::Select::kDisabled) return current;
  const bool min_change = rules.select == HpaRules::Select::kMin;
  int32_t result =
      min_change ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min();
  for (const HpaPolicy& p : rules.policies) {
    const int32_t start = PeriodStart(now_s, current, p.period_s);
    const int32_t proposed =
        p.type == HpaPolicy::Type::kPods
            ? start + p.value
            : static_cast<int32_t>(std::ceil(static_cast<double>(start) * (1 + p.value / 100.0)));
    result = min_change ? std::min(result, proposed) : std::max(result, proposed);
  }
  return result;
}

int32_t Hpa::ScaleDownLimit(double now_s, int32_t current) const {
  const HpaRules& rules = spec_.scale_down;
  if (rules.select == HpaRules::Select::kDisabled) return current;
  const bool min_change = rules.select == HpaRules::Select::kMin;
  int32_t result =
      min_change ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
  for (const HpaPolicy& p : rules.policies) {
    const int32_t start = PeriodStart(now_s, current, p.period_s);
    // Truncated toward zero, as Go's int32(float64) conversion does.
    const int32_t proposed =
        p.type == HpaPolicy::Type::kPods
            ? start - p.value
            : static_cast<int32_t>(static_cast<double>(start) * (1 - p.value / 100.0));
    result = min_change ? std::max(result, proposed) : std::min(result, proposed);
  }
  return result;
}

HpaDecision Hpa::Reconcile(double now_s, int32_t current, double metric) {
  HpaDecision d;
  if (current == 0 && spec_.min_replicas != 0) {
    d.reason = "ScalingDisabled";
    return d;
  }
  if (current > spec_.max_replicas || current < spec_.min_replicas) {
    d.desired = std::clamp(current, spec_.min_replicas, spec_.max_replicas);
    d.metric = d.stabilized = d.desired;
    d.reason = current > spec_.max_replicas ? "TooManyReplicas" : "TooFewReplicas";
  } else {
    // Step 2: the metric's recommendation.
    const double ratio = metric / spec_.target;
    d.metric = std::abs(1 - ratio) <= spec_.tolerance
                   ? current
                   : static_cast<int32_t>(std::ceil(ratio * static_cast<double>(current)));
    // Step 3: stabilization over the recorded recommendations, then record this one.
    int32_t up = d.metric, down = d.metric;
    for (const Recommendation& r : recommendations_) {
      if (r.at_s > now_s - spec_.scale_up.stabilization_window_s) up = std::min(up, r.replicas);
      if (r.at_s > now_s - spec_.scale_down.stabilization_window_s) {
        down = std::max(down, r.replicas);
      }
    }
    const double keep =
        std::max(spec_.scale_up.stabilization_window_s, spec_.scale_down.stabilization_window_s);
    std::erase_if(recommendations_,
                  [&](const Recommendation& r) { return r.at_s <= now_s - keep; });
    recommendations_.push_back({d.metric, now_s});
    d.stabilized = std::min(std::max(current, up), down);
    // Step 4: the rate limits and the bounds.
    d.desired = d.stabilized;
    d.reason = "DesiredWithinRange";
    if (d.stabilized > current) {
      const int32_t limit = std::max(ScaleUpLimit(now_s, current), current);
      const int32_t allowed = std::min(spec_.max_replicas, limit);
      if (d.stabilized > allowed) {
        d.desired = allowed;
        d.reason = limit < spec_.max_replicas ? "ScaleUpLimit" : "TooManyReplicas";
      }
    } else if (d.stabilized < current) {
      const int32_t limit = std::min(ScaleDownLimit(now_s, current), current);
      const int32_t allowed = std::max(spec_.min_replicas, limit);
      if (d.stabilized < allowed) {
        d.desired = allowed;
        d.reason = limit > spec_.min_replicas ? "ScaleDownLimit" : "TooFewReplicas";
      }
    }
  }
  // Events older than every policy's period no longer count.
  int32_t longest = 0;
  for (const HpaRules* rules : {&spec_.scale_up, &spec_.scale_down}) {
    for (const HpaPolicy& p : rules->policies) longest = std::max(longest, p.period_s);
  }
  for (std::vector<ScaleEvent>* events : {&up_events_, &down_events_}) {
    std::erase_if(*events, [&](const ScaleEvent& e) { return e.at_s <= now_s - longest; });
  }
  if (d.desired > current) up_events_.push_back({d.desired - current, now_s});
  if (d.desired < current) down_events_.push_back({current - d.desired, now_s});
  return d;
}

}  // namespace seedance::control
