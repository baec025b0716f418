// Kubernetes' Horizontal Pod Autoscaler rule (feature CTRL-4's baseline), reproduced as the
// controller computes it (pkg/controller/podautoscaler: replica_calculator.go, horizontal.go), on
// readings passed in — no clock, no API server — so that a trace replay can compare it with
// Seedance's own scaler.
//
// One reconcile, every sync period (15 s by default), with c current replicas and the metric's
// mean m over them against the target t:
//   1. c = 0: scaling is off (0).  c > max: max.  c < min: min.
//   2. ratio = m / t; |1 - ratio| <= tolerance (0.1): c; else desired = ceil(ratio x c).
//   3. Stabilization: recommendations recorded at earlier reconciles; up = the smallest
//      recommendation of the scale-up window (default 0 s: this one), down = the largest of the
//      scale-down window (default 300 s); the result is c raised to up and lowered to down.
//   4. Rate: scaling up, at most the policies' limit (select Max by default): each policy
//      proposes, from the replicas at its period's start (c - added + removed within the period),
//      Pods: start + value, Percent: ceil(start x (1 + value/100)); scaling down, at least the
//      policies' limit: Pods: start - value, Percent: floor(start x (1 - value/100)). Then
//      clamped to [min, max].
//   Defaults (autoscaling/v2): scale up Percent 100 and Pods 4 per 15 s, select Max, no window;
//   scale down Percent 100 per 15 s, select Max, a 300 s window.
// The ready-pod and missing-metric corrections of replica_calculator.go are not modelled: every
// replica reports the metric.
//
// Thread safety: an Hpa is not synchronised; one per autoscaled target.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace seedance::control {

struct HpaPolicy {
  enum class Type { kPods, kPercent };
  Type type = Type::kPercent;
  int32_t value = 100;
  int32_t period_s = 15;
};

struct HpaRules {
  enum class Select { kMax, kMin, kDisabled };
  double stabilization_window_s = 0;
  Select select = Select::kMax;
  std::vector<HpaPolicy> policies;
};

struct HpaSpec {
  int32_t min_replicas = 1;
  int32_t max_replicas = 10;
  double target = 0.5;  // the metric's target mean (e.g. utilization 0.5)
  double tolerance = 0.1;
  HpaRules scale_up = DefaultScaleUp();
  HpaRules scale_down = DefaultScaleDown();

  static HpaRules DefaultScaleUp();
  static HpaRules DefaultScaleDown();
};

struct HpaDecision {
  int32_t desired = 0;     // what the controller sets
  int32_t metric = 0;      // step 2's recommendation (before stabilization and rate)
  int32_t stabilized = 0;  // after step 3
  std::string reason;      // the condition reason kube-controller-manager reports
};

class Hpa {
 public:
  explicit Hpa(HpaSpec spec) : spec_(std::move(spec)) {}

  // One reconcile at `now_s` (non-decreasing) with `current` replicas whose metric mean is
  // `metric`; records the recommendation and, when the result differs from `current`, the scale
  // event, as the controller does.
  HpaDecision Reconcile(double now_s, int32_t current, double metric);

  const HpaSpec& spec() const { return spec_; }

 private:
  struct Recommendation {
    int32_t replicas;
    double at_s;
  };
  struct ScaleEvent {
    int32_t change;
    double at_s;
  };
  int32_t ChangeWithin(const std::vector<ScaleEvent>& events, double now_s, int32_t period_s) const;
  // The replicas at the start of a policy's period: current - added + removed within it.
  int32_t PeriodStart(double now_s, int32_t current, int32_t period_s) const;
  int32_t ScaleUpLimit(double now_s, int32_t current) const;
  int32_t ScaleDownLimit(double now_s, int32_t current) const;

  HpaSpec spec_;
  std::vector<Recommendation> recommendations_;
  std::vector<ScaleEvent> up_events_, down_events_;
};

}  // namespace seedance::control
