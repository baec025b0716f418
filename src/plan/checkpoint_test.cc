#include "seedance/plan/checkpoint.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seedance/control/checkpoint_interval.h"
#include "seedance/plan/optimize.h"

namespace seedance::plan {
namespace {

// The interval that minimises Daly's wall-time model, found by a dense scan and then a golden-
// section search (an independent solver of the same model).
double ArgminWallTime(double write_s, double restart_s, double mtbf_s) {
  double best = 1, best_t = INFINITY;
  for (double t = mtbf_s * 1e-4; t < 3 * mtbf_s; t *= 1.01) {
    const double w = DalyWallTimeFactor(t, write_s, restart_s, mtbf_s);
    if (w < best_t) {
      best_t = w;
      best = t;
    }
  }
  double lo = best / 1.01, hi = best * 1.01;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 200; ++i) {
    const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    if (DalyWallTimeFactor(a, write_s, restart_s, mtbf_s) <
        DalyWallTimeFactor(b, write_s, restart_s, mtbf_s)) {
      hi = b;
    } else {
      lo = a;
    }
  }
  return (lo + hi) / 2;
}

TEST(CheckpointTest, YoungIsTheFirstOrderOptimum) {
  EXPECT_DOUBLE_EQ(control::YoungOptimumSeconds(60, 3600), std::sqrt(2 * 60 * 3600.0));
}

// Daly's estimate against the numerical optimum of his own model, over write times from 0.01%
// to 10% of the MTBF: the interval within 1% and the wall time within 1e-5 of the optimum's.
// Young's first-order interval drifts as δ/M grows (over 1% off by δ/M = 1%).
TEST(CheckpointTest, DalyMatchesTheNumericalOptimum) {
  const double mtbf = 10'000;
  for (double ratio : {1e-4, 1e-3, 1e-2, 3e-2, 1e-1}) {
    const double write = ratio * mtbf;
    const double opt = ArgminWallTime(write, 0, mtbf);
    const double daly = DalyInterval(write, mtbf);
    EXPECT_NEAR(daly / opt, 1, 0.01) << ratio;
    EXPECT_NEAR(DalyWallTimeFactor(daly, write, 0, mtbf) / DalyWallTimeFactor(opt, write, 0, mtbf),
                1, 1e-5)
        << ratio;
    if (ratio >= 1e-2) {
      EXPECT_GT(std::fabs(control::YoungOptimumSeconds(write, mtbf) / opt - 1), 0.01) << ratio;
    }
  }
  // The restart time scales the wall time, not the optimum.
  EXPECT_NEAR(ArgminWallTime(100, 500, mtbf) / ArgminWallTime(100, 0, mtbf), 1, 1e-6);
  // A write as long as two MTBFs: checkpoint once per MTBF.
  EXPECT_DOUBLE_EQ(DalyInterval(2 * mtbf, mtbf), mtbf);
}

TEST(CheckpointTest, PlanInWholeSteps) {
  ReliabilitySpec r;
  r.given = true;
  r.gpu_mtbf_hours = 50'000;
  r.checkpoint_write_gbytes_per_s = 10;
  // 100 GB at 10 GB/s: 10 s per checkpoint; 1,000 GPUs: M = 50,000 h / 1,000 = 180,000 s.
  const CheckpointPlan p = PlanCheckpoints(r, 100'000'000'000, 1'000, 7.0);
  EXPECT_DOUBLE_EQ(p.write_s, 10);
  EXPECT_DOUBLE_EQ(p.job_mtbf_s, 180'000);
  EXPECT_DOUBLE_EQ(p.young_interval_s, 1'897.366596101028);  // sqrt(2 x 10 x 180,000)
  EXPECT_EQ(p.interval_steps, std::llround(p.daly_interval_s / 7.0));
  EXPECT_DOUBLE_EQ(p.interval_s, 7.0 * static_cast<double>(p.interval_steps));
  // About δ/τ + τ/2M, each near 0.5%.
  EXPECT_GT(p.expected_overhead_fraction, 0.009);
  EXPECT_LT(p.expected_overhead_fraction, 0.012);
  // A step longer than the interval: checkpoint every step.
  EXPECT_EQ(PlanCheckpoints(r, 100'000'000'000, 1'000, 10'000.0).interval_steps, 1);
}

TEST(CheckpointTest, OptimizeReportsTheIntervalWhenReliabilityIsGiven) {
  std::string yaml(DefaultJobYaml());
  auto plain = OptimizeYaml(yaml, "default", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->contains("checkpoint"));
  yaml += "reliability:\n  gpu_mtbf_hours: 50000\n  checkpoint_write_gbytes_per_s: 5\n";
  auto r = OptimizeYaml(yaml, "default", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const base::Report& c = (*r)["checkpoint"];
  // Llama-2-7B's 6,738,415,616 parameters x (4 fp32 weights, FSDP's own master copy, + 8 Adam)
  // bytes: the default job runs on FSDP.
  EXPECT_EQ(c["checkpoint_bytes"], int64_t{6'738'415'616} * 12);
  EXPECT_DOUBLE_EQ(c["job_mtbf_s"].get<double>(), 50'000.0 * 3600 / 16);
  EXPECT_GE(c["interval_steps"].get<int64_t>(), 1);
  EXPECT_EQ((*r)["reliability"]["restart_s"], 0.0);

  auto bad = OptimizeYaml(std::string(DefaultJobYaml()) + "reliability:\n  gpu_mtbf_hours: 5\n",
                          "job.yaml", cost::GpuCatalog::BuiltIn(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("checkpoint_write_gbytes_per_s"), std::string::npos)
      << bad.status().ToString();
}

}  // namespace
}  // namespace seedance::plan
