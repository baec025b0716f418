#include "seedance/cost/pareto.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace seedance::cost {
namespace {

// Points with few distinct values per objective, so exact ties and duplicates are common.
std::vector<double> TiedPoints(std::mt19937_64& gen, size_t n, size_t d, int levels) {
  std::uniform_int_distribution<int> pick(0, levels - 1);
  std::vector<double> v(n * d);
  for (double& x : v) x = pick(gen);
  return v;
}

TEST(ParetoTest, MatchesTheQuadraticDefinitionOnRandomSetsWithManyTies) {
  std::mt19937_64 gen(1);
  const std::vector<std::vector<Direction>> all_directions = {
      {Direction::kMax},
      {Direction::kMin},
      {Direction::kMax, Direction::kMin},
      {Direction::kMin, Direction::kMin},
      {Direction::kMax, Direction::kMin, Direction::kMin},
      {Direction::kMax, Direction::kMax, Direction::kMax},
      {Direction::kMin, Direction::kMax, Direction::kMin},
  };
  int checked = 0;
  for (const auto& dirs : all_directions) {
    for (int levels : {2, 3, 5, 20, 1000}) {
      for (size_t n : {1, 2, 7, 40, 300}) {
        for (auto dominance : {Dominance::kPareto, Dominance::kStrict}) {
          const auto points = TiedPoints(gen, n, dirs.size(), levels);
          auto front = ParetoFront(points, dirs, dominance);
          ASSERT_TRUE(front.ok()) << front.status().ToString();
          EXPECT_EQ(*front, ParetoFrontQuadratic(points, dirs, dominance))
              << "d=" << dirs.size() << " levels=" << levels << " n=" << n
              << " dominance=" << DominanceName(dominance);
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 7 * 5 * 5 * 2);
}

TEST(ParetoTest, TiesAndDuplicatesAsDocumented) {
  const Direction max2[] = {Direction::kMax, Direction::kMax};
  // (3,3) twice, (3,1) beaten by (3,3) on the second objective, (1,3) likewise, (2,2) beaten.
  const std::vector<double> p = {3, 3, 3, 1, 1, 3, 3, 3, 2, 2};
  EXPECT_EQ(*ParetoFront(p, max2), (std::vector<size_t>{0, 3}));
  EXPECT_EQ(*UniqueFront(p, max2), (std::vector<size_t>{0}));
  // Strict dominance: (3,1) and (1,3) are not beaten in both objectives by anything; (2,2) is.
  EXPECT_EQ(*ParetoFront(p, max2, Dominance::kStrict), (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(ParetoTest, InfinitiesAreValuesAndNaNIsAnError) {
  const Direction dirs[] = {Direction::kMax, Direction::kMin};
  const std::vector<double> p = {INFINITY, 5, 1, -INFINITY, 0, 0};
  EXPECT_EQ(*ParetoFront(p, dirs), (std::vector<size_t>{0, 1}));
  const std::vector<double> bad = {1, 2, NAN, 3};
  EXPECT_EQ(ParetoFront(bad, dirs).status().where(), "points[1][0]");
  const std::vector<double> ragged = {1, 2, 3};
  EXPECT_EQ(ParetoFront(ragged, dirs).status().where(), "points");
  const Direction four[] = {Direction::kMax, Direction::kMax, Direction::kMax, Direction::kMax};
  EXPECT_EQ(ParetoFront(std::vector<double>(8, 1.0), four).status().where(), "directions");
  EXPECT_TRUE(ParetoFront({}, dirs)->empty());
}

}  // namespace
}  // namespace seedance::cost
