#include "seedance/control/hpa.h"

#include <gtest/gtest.h>

namespace seedance::control {
namespace {

// A target of 0.5 and a metric of `ratio` x 0.5.
HpaSpec Spec(int32_t min, int32_t max) {
  HpaSpec s;
  s.min_replicas = min;
  s.max_replicas = max;
  s.target = 0.5;
  return s;
}

// desired = ceil(current x metric / target), unless within the 0.1 tolerance.
TEST(HpaTest, TheMetricRuleAndItsTolerance) {
  struct Case {
    int32_t current;
    double ratio;
    int32_t want;
  };
  const Case cases[] = {
      {10, 1.09, 10},                                // inside the tolerance: no change
      {10, 0.91, 10}, {10, 1.11, 12},                // ceil(11.1)
      {10, 1.5, 15},  {4, 2.0, 8},    {3, 1.34, 5},  // ceil(4.02)
  };
  for (const Case& c : cases) {
    HpaSpec spec = Spec(1, 100);
    Hpa hpa(spec);
    const HpaDecision d = hpa.Reconcile(0, c.current, c.ratio * spec.target);
    EXPECT_EQ(d.metric, c.want) << c.current << " x " << c.ratio;
    EXPECT_EQ(d.desired, c.want) << c.current << " x " << c.ratio;
  }
}

// The default scale-up policy: the larger of doubling and four more pods per 15 s.
TEST(HpaTest, DefaultScaleUpDoublesOrAddsFourPer15Seconds) {
  Hpa hpa(Spec(1, 100));
  HpaDecision d = hpa.Reconcile(0, 1, 50 * 0.5);  // wants 50
  EXPECT_EQ(d.metric, 50);
  EXPECT_EQ(d.desired, 5);  // max(2 x 1, 1 + 4)
  EXPECT_EQ(d.reason, "ScaleUpLimit");
  d = hpa.Reconcile(15, 5, 10 * 0.5);  // wants 50 again
  EXPECT_EQ(d.desired, 10);            // max(2 x 5, 5 + 4): the first event left the period
  d = hpa.Reconcile(20, 10, 5 * 0.5);  // 5 s later: the period started at 5 replicas
  EXPECT_EQ(d.desired, 10);            // max(2 x 5, 9) = 10: no room left
  d = hpa.Reconcile(30, 10, 5 * 0.5);
  EXPECT_EQ(d.desired, 20);
  d = hpa.Reconcile(45, 20, 5 * 0.5);
  EXPECT_EQ(d.desired, 40);
  d = hpa.Reconcile(60, 40, 5 * 0.5);
  EXPECT_EQ(d.desired, 80);
  d = hpa.Reconcile(75, 80, 5 * 0.5);
  EXPECT_EQ(d.desired, 100);  // the maximum
  EXPECT_EQ(d.reason, "TooManyReplicas");
}

// The Kubernetes documentation's example of scale-down policies ("Scaling policies"): Pods 4 and
// Percent 10 per 60 s, the larger change selected. From 80 replicas towards 10: 8 removed first,
// then 8 again (10% of 72 is 7.2, "rounded up to 8"), and once below 40 replicas the Pods policy
// applies and 4 are removed at a time.
TEST(HpaTest, DocumentationScaleDownExample) {
  HpaSpec spec = Spec(1, 100);
  spec.scale_down = {
      .stabilization_window_s = 0,
      .select = HpaRules::Select::kMax,
      .policies = {{HpaPolicy::Type::kPods, 4, 60}, {HpaPolicy::Type::kPercent, 10, 60}}};
  Hpa hpa(spec);
  int32_t current = 80;
  std::vector<int32_t> removed;
  for (int step = 0; current > 10 && step < 40; ++step) {
    const double wants_ten = 10.0 / current * spec.target;
    const HpaDecision d = hpa.Reconcile(61.0 * step, current, wants_ten);
    removed.push_back(current - d.desired);
    if (current > 40) {
      EXPECT_EQ(d.reason, "ScaleDownLimit");
    }
    if (current < 40 && d.desired > 10) {
      EXPECT_EQ(current - d.desired, 4) << current;
    }
    current = d.desired;
  }
  ASSERT_GE(removed.size(), 2u);
  EXPECT_EQ(removed[0], 8);
  EXPECT_EQ(removed[1], 8);
  EXPECT_EQ(current, 10);
  // Within one period the second step may not remove more: the period started at 80.
  Hpa again(spec);
  EXPECT_EQ(again.Reconcile(0, 80, 10.0 / 80 * spec.target).desired, 72);
  EXPECT_EQ(again.Reconcile(30, 72, 10.0 / 72 * spec.target).desired, 72);
}

// The default 300 s scale-down window: the highest recommendation of the last 300 s holds, so a
// dip does not remove replicas until the spike's recommendation has aged out.
TEST(HpaTest, ScaleDownWaitsForTheStabilizationWindow) {
  HpaSpec spec = Spec(1, 100);
  Hpa hpa(spec);
  EXPECT_EQ(hpa.Reconcile(0, 10, 0.5).desired, 10);  // at target: recommends 10
  for (double t = 15; t < 300; t += 15) {
    const HpaDecision d = hpa.Reconcile(t, 10, 0.1);  // wants 2
    EXPECT_EQ(d.metric, 2);
    EXPECT_EQ(d.desired, 10) << t;
  }
  // At 300 s the first recommendation is exactly 300 s old: no longer inside the window.
  EXPECT_EQ(hpa.Reconcile(300, 10, 0.1).desired, 2);
}

TEST(HpaTest, BoundsAndDisabledScaling) {
  Hpa hpa(Spec(2, 6));
  EXPECT_EQ(hpa.Reconcile(0, 9, 0.5).desired, 6);
  EXPECT_EQ(hpa.Reconcile(0, 9, 0.5).reason, "TooManyReplicas");
  EXPECT_EQ(hpa.Reconcile(0, 1, 0.5).desired, 2);
  EXPECT_EQ(hpa.Reconcile(0, 0, 5.0).desired, 0);  // scaled to zero by hand: left alone
  Hpa low(Spec(2, 6));
  EXPECT_EQ(low.Reconcile(0, 4, 0.01).desired, 2);  // wants 1, clamped to the minimum
  EXPECT_EQ(low.Reconcile(0, 4, 0.01).reason, "TooFewReplicas");
}

TEST(HpaTest, DisabledAndMinSelectPolicies) {
  HpaSpec spec = Spec(1, 100);
  spec.scale_up.select = HpaRules::Select::kDisabled;
  Hpa off(spec);
  EXPECT_EQ(off.Reconcile(0, 3, 5.0).desired, 3);
  spec = Spec(1, 100);
  spec.scale_up.select = HpaRules::Select::kMin;  // the smaller of doubling and +4
  Hpa careful(spec);
  EXPECT_EQ(careful.Reconcile(0, 10, 5.0).desired, 14);
  EXPECT_EQ(careful.Reconcile(15, 14, 5.0).desired, 18);
}

}  // namespace
}  // namespace seedance::control
