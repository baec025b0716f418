// Scale trajectories for scripted overflow patterns, step by step, with the
// expected arithmetic in the comments; and the JSON round trip.
#include "seedance/precision/loss_scaler.h"

#include <gtest/gtest.h>

#include <vector>

namespace seedance::precision {
namespace {

struct Step {
  bool overflow;
  double norm;
  bool applied;  // expected
  double scale;  // expected after the step
};

void ExpectTrajectory(const LossScalerConfig& config, const std::vector<Step>& steps) {
  auto scaler = LossScaler::Create(config);
  ASSERT_TRUE(scaler.ok()) << scaler.status().ToString();
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(scaler->Update(steps[i].overflow, steps[i].norm), steps[i].applied) << "step " << i;
    EXPECT_DOUBLE_EQ(scaler->scale(), steps[i].scale) << "step " << i;
  }
}

constexpr bool C = false;  // clean
constexpr bool O = true;   // overflow

TEST(LossScaler, DynamicFollowsGradScaler) {
  LossScalerConfig c;
  c.init_scale = 8;
  c.growth_interval = 3;
  ExpectTrajectory(c, {{C, 0, true, 8},
                       {C, 0, true, 8},
                       {C, 0, true, 16},  // 3 clean steps: x2
                       {O, 0, false, 8},  // overflow: x0.5, skipped, count restarts
                       {C, 0, true, 8},
                       {C, 0, true, 8},
                       {O, 0, false, 4},  // 2 clean steps were not enough
                       {C, 0, true, 4},
                       {C, 0, true, 4},
                       {C, 0, true, 8}});  // 3 clean again
}

// torch keeps the scale in float32: each change is computed in double and rounded to float
// (values below from torch.amp.GradScaler("cpu", init_scale=3, growth_factor=1.7,
// backoff_factor=0.3, growth_interval=1), printed by get_scale()).
TEST(LossScaler, DynamicScaleIsAFloat32AsTorchs) {
  LossScalerConfig c;
  c.init_scale = 3;
  c.growth_factor = 1.7;
  c.backoff_factor = 0.3;
  c.growth_interval = 1;
  auto s = LossScaler::Create(c);
  ASSERT_TRUE(s.ok());
  s->Update(false);  // float(3 * 1.7) = 5.099999904632568, not 5.1
  EXPECT_EQ(s->scale(), static_cast<double>(5.1f));
  EXPECT_NE(s->scale(), 5.1);
  s->Update(true);  // float(5.0999999046325684 * 0.3)
  EXPECT_EQ(s->scale(), static_cast<double>(static_cast<float>(static_cast<double>(5.1f) * 0.3)));
}

// torch does not grow the scale past float32's range; it stays where it is.
TEST(LossScaler, GrowthThatWouldOverflowFloat32KeepsTheScale) {
  LossScalerConfig c;
  c.init_scale = 0x1p126;
  c.growth_interval = 1;
  auto s = LossScaler::Create(c);
  ASSERT_TRUE(s.ok());
  s->Update(false);
  EXPECT_EQ(s->scale(), 0x1p127);
  s->Update(false);  // 2^128 is inf in float32
  EXPECT_EQ(s->scale(), 0x1p127);
}

TEST(LossScaler, DefaultsAreGradScalers) {
  LossScalerConfig c;
  EXPECT_EQ(c.init_scale, 65536.0);
  EXPECT_EQ(c.growth_interval, 2000);
  auto s = LossScaler::Create(c);
  ASSERT_TRUE(s.ok());
  for (int i = 0; i < 1999; ++i) s->Update(false);
  EXPECT_EQ(s->scale(), 65536.0);
  s->Update(false);
  EXPECT_EQ(s->scale(), 131072.0);
}

TEST(LossScaler, DeepSpeedHysteresis) {
  LossScalerConfig c;
  c.init_scale = 8;
  c.growth_interval = 3;
  c.hysteresis = 2;
  ExpectTrajectory(c, {{O, 0, false, 8},  // first overflow: hysteresis 2 -> 1, no back-off
                       {O, 0, false, 4},  // second: back off
                       {O, 0, false, 2},  // hysteresis stays spent until a growth
                       {C, 0, true, 2},
                       {C, 0, true, 2},
                       {C, 0, true, 4},   // growth refills the hysteresis
                       {O, 0, false, 4},  // tolerated again
                       {C, 0, true, 4},
                       {O, 0, false, 2}});  // not consecutive, but no growth in between: back off
  c.consecutive_hysteresis = true;
  ExpectTrajectory(c, {{O, 0, false, 8},
                       {C, 0, true, 8},  // a clean step refills it
                       {O, 0, false, 8},
                       {O, 0, false, 4}});
}

TEST(LossScaler, Bounds) {
  LossScalerConfig c;
  c.init_scale = 4;
  c.growth_interval = 1;
  c.min_scale = 2;
  c.max_scale = 16;
  ExpectTrajectory(c, {{O, 0, false, 2},
                       {O, 0, false, 2},  // floor
                       {C, 0, true, 4},
                       {C, 0, true, 8},
                       {C, 0, true, 16},
                       {C, 0, true, 16}});  // ceiling
}

TEST(LossScaler, StaticNeverChanges) {
  LossScalerConfig c;
  c.mode = ScalerMode::kStatic;
  c.init_scale = 128;
  ExpectTrajectory(c, {{C, 0, true, 128}, {O, 0, false, 128}, {C, 0, true, 128}});
}

TEST(LossScaler, GradNormRuleOfNote000) {
  LossScalerConfig c = GradNormConfigForSequenceLength(1024);
  EXPECT_EQ(c.init_scale, 4096);
  EXPECT_EQ(c.decay_factor, 0.85);
  EXPECT_EQ(GradNormConfigForSequenceLength(128).init_scale, 8192);
  EXPECT_EQ(GradNormConfigForSequenceLength(128).decay_factor, 0.92);
  EXPECT_EQ(GradNormConfigForSequenceLength(4096).init_scale, 2048);
  EXPECT_EQ(GradNormConfigForSequenceLength(4096).decay_factor, 0.80);
  EXPECT_EQ(c.eval_interval, 50);
  c.eval_interval = 2;
  ExpectTrajectory(c,
                   {{C, 1.0, true, 4096},
                    {C, 1.0, true, 4096},  // first evaluation: records 1.0
                    {C, 9.0, true, 4096},
                    {C, 0.5, true, 8192},  // 0.5 > 0.1 * 1.0: x2
                    {C, 0.5, true, 8192},
                    {C, 0.04, true, 8192},  // 0.04 is between 0.05*0.5=0.025 and 0.1*0.5=0.05: keep
                    {C, 0.04, true, 8192},
                    {C, 0.001, true, 6963.2},  // 0.001 < 0.05 * 0.04: x0.85
                    {O, 0.0, false, 3481.6},   // overflow: skipped, x0.5
                    {C, 0.001, true, 3481.6},
                    {C, 0.001, true, 6963.2}});  // 0.001 > 0.1 * 0.001: x2
  c.init_scale = 40000;
  c.eval_interval = 1;
  ExpectTrajectory(
      c, {{C, 1, true, 40000}, {C, 1, true, 65536}, {C, 1, true, 65536}});  // ceiling 65536
  c.init_scale = 1.1;
  ExpectTrajectory(c,
                   {{C, 1, true, 1.1}, {C, 0.01, true, 1.0}, {C, 0.0001, true, 1.0}});  // floor 1
}

TEST(LossScaler, JsonRoundTripKeepsTheTrajectory) {
  LossScalerConfig c;
  c.init_scale = 8;
  c.growth_interval = 3;
  c.hysteresis = 2;
  auto a = LossScaler::Create(c);
  ASSERT_TRUE(a.ok());
  a->Update(true);
  a->Update(false);
  auto b = LossScaler::FromJson(base::Report::parse(a->ToJson().dump()));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  for (bool o : {false, false, true, true, false}) {
    EXPECT_EQ(a->Update(o), b->Update(o));
    EXPECT_EQ(a->scale(), b->scale());
  }
  EXPECT_EQ(a->ToJson(), b->ToJson());
}

TEST(LossScaler, BadJsonNamesTheField) {
  auto good = LossScaler::Create(LossScalerConfig{});
  ASSERT_TRUE(good.ok());
  base::Report j = good->ToJson();
  j["state"]["scale"] = -1.0;
  EXPECT_EQ(LossScaler::FromJson(j).status().where(), "state.scale");
  j = good->ToJson();
  j["state"].erase("growth_tracker");
  EXPECT_EQ(LossScaler::FromJson(j).status().where(), "state.growth_tracker");
  j = good->ToJson();
  j["config"]["colour"] = "red";
  EXPECT_EQ(LossScaler::FromJson(j).status().where(), "config.colour");
  j = good->ToJson();
  j["config"]["mode"] = "magic";
  EXPECT_EQ(LossScaler::FromJson(j).status().where(), "config.mode");
  j = good->ToJson();
  j["config"]["hysteresis"] = 1.5;
  EXPECT_EQ(LossScaler::FromJson(j).status().where(), "config.hysteresis");
  auto seq = LossScalerConfigFromJson({{"mode", "grad-norm"}, {"sequence_length", 4096}});
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(seq->init_scale, 2048);
  EXPECT_EQ(seq->decay_factor, 0.80);
  LossScalerConfig bad;
  bad.backoff_factor = 2;
  EXPECT_EQ(LossScaler::Create(bad).status().where(), "backoff_factor");
}

}  // namespace
}  // namespace seedance::precision
