#include "seedance/plan/recompute.h"

#include <gtest/gtest.h>

#include <random>

namespace seedance::plan {
namespace {

// Every choice of every layer: the least seconds within the budget (or none fits).
RecomputePlan BruteForce(const std::vector<LayerActivations>& layers, int64_t budget) {
  RecomputePlan best;
  best.recompute_s = 1e300;
  std::vector<uint32_t> bits(layers.size(), 0);
  while (true) {
    std::vector<std::vector<std::string>> dropped(layers.size());
    for (size_t i = 0; i < layers.size(); ++i) {
      for (size_t p = 0; p < layers[i].parts.size(); ++p) {
        if (bits[i] & (1u << p)) dropped[i].push_back(layers[i].parts[p].name);
      }
    }
    RecomputePlan plan = CostOfChoice(layers, dropped);
    if (plan.bytes <= budget && plan.recompute_s < best.recompute_s) {
      best = plan;
      best.fits = true;
    }
    size_t i = 0;
    while (i < layers.size() && ++bits[i] == (1u << layers[i].parts.size())) bits[i++] = 0;
    if (i == layers.size()) break;
  }
  return best;
}

std::vector<LayerActivations> RandomChain(std::mt19937& rng) {
  std::uniform_int_distribution<int> n_layers(1, 5), n_parts(0, 3), bytes(0, 40), tenths(0, 30);
  std::vector<LayerActivations> layers(n_layers(rng));
  for (auto& layer : layers) {
    layer.kept_bytes = bytes(rng) / 4;
    const int parts = n_parts(rng);
    for (int p = 0; p < parts; ++p) {
      layer.parts.push_back({"part" + std::to_string(p), bytes(rng), tenths(rng) / 10.0});
    }
  }
  return layers;
}

TEST(Recompute, MatchesBruteForceOnSmallChains) {
  std::mt19937 rng(20261202);
  for (int trial = 0; trial < 600; ++trial) {
    const auto layers = RandomChain(rng);
    const RecomputePlan none = CostOfChoice(layers, {});
    for (int64_t budget : {int64_t{0}, none.bytes / 3, none.bytes / 2, none.bytes}) {
      auto plan = PlanRecompute(layers, budget);
      ASSERT_TRUE(plan.ok());
      const RecomputePlan brute = BruteForce(layers, budget);
      ASSERT_EQ(plan->fits, brute.fits) << "trial " << trial << " budget " << budget;
      if (!brute.fits) continue;
      EXPECT_NEAR(plan->recompute_s, brute.recompute_s, 1e-9) << "trial " << trial;
      EXPECT_LE(plan->bytes, budget);
      // The plan's own figures are those of its choice.
      const RecomputePlan check = CostOfChoice(layers, plan->dropped);
      EXPECT_EQ(check.bytes, plan->bytes);
      EXPECT_DOUBLE_EQ(check.recompute_s, plan->recompute_s);
    }
  }
}

// 128 identical transformer layers: nothing dropped when everything fits, everything when only
// that fits, and a mixture in between that beats dropping the same parts in every layer.
TEST(Recompute, IdenticalLayersMixChoices) {
  const LayerActivations layer{
      .kept_bytes = 10, .parts = {{"attention", 40, 0.4}, {"mlp", 60, 0.5}, {"norms", 20, 0.05}}};
  const std::vector<LayerActivations> layers(128, layer);
  const int64_t all_kept = 128 * 130;
  auto full = PlanRecompute(layers, all_kept);
  ASSERT_TRUE(full.ok());
  EXPECT_TRUE(full->fits);
  EXPECT_EQ(full->recompute_s, 0);
  auto tight = PlanRecompute(layers, 128 * 10 + 120);
  ASSERT_TRUE(tight.ok() && tight->fits);
  EXPECT_NEAR(tight->recompute_s, 128 * 0.95, 1e-9);
  auto none = PlanRecompute(layers, 128 * 10);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->fits);
  // Half way: some layers keep their MLP, some do not.
  auto mid = PlanRecompute(layers, all_kept / 2);
  ASSERT_TRUE(mid.ok() && mid->fits);
  EXPECT_LE(mid->bytes, all_kept / 2);
  EXPECT_LT(mid->recompute_s, 128 * 0.5);
}

TEST(Recompute, RejectsNegativeParts) {
  std::vector<LayerActivations> layers = {{.kept_bytes = 1, .parts = {{"mlp", -1, 0.1}}}};
  EXPECT_EQ(PlanRecompute(layers, 10).status().where(), "layers[0].mlp");
}

}  // namespace
}  // namespace seedance::plan
