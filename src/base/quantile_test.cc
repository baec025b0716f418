#include "seedance/base/quantile.h"

#include <gtest/gtest.h>

#include <vector>

namespace seedance::base {
namespace {

struct Case {
  std::vector<double> values;  // in any order
  double q;
  double numpy;  // np.quantile(values, q) with NumPy's default method, "linear"
};

// Figures from NumPy 2 (`.venv/bin/python -c "import numpy as np; print(np.quantile(x, q))"`).
TEST(QuantileTest, MatchesNumPysDefault) {
  const std::vector<Case> cases = {
      {{1.0}, 0, 1.0},
      {{1.0}, 0.5, 1.0},
      {{1.0}, 1, 1.0},
      {{3, 1, 2, 4}, 0, 1.0},
      {{3, 1, 2, 4}, 0.25, 1.75},
      {{3, 1, 2, 4}, 0.5, 2.5},
      {{3, 1, 2, 4}, 0.9, 3.7},
      {{3, 1, 2, 4}, 0.99, 3.9699999999999998},
      {{3, 1, 2, 4}, 1, 4.0},
      {{10, 7, 4, 3, 2, 1}, 0.5, 3.5},
      {{10, 7, 4, 3, 2, 1}, 0.95, 9.25},
      {{10, 7, 4, 3, 2, 1}, 0.05, 1.25},
      {{-2.5, 0, 0, 7.25, 100}, 0.1, -1.5},
      {{-2.5, 0, 0, 7.25, 100}, 0.5, 0.0},
      {{-2.5, 0, 0, 7.25, 100}, 0.75, 7.25},
      {{-2.5, 0, 0, 7.25, 100}, 0.99, 96.28999999999999},
  };
  for (const Case& c : cases) {
    EXPECT_NEAR(Quantile(c.values, c.q), c.numpy, 1e-12) << "q=" << c.q;
  }
}

TEST(QuantileTest, EndsAreTheExtremesAndItNeverDecreases) {
  const std::vector<double> sorted = {-4, -1, 0, 0, 2, 9, 9, 30};
  EXPECT_EQ(QuantileOfSorted(sorted, 0), -4);
  EXPECT_EQ(QuantileOfSorted(sorted, 1), 30);
  double last = -1e300;
  for (int i = 0; i <= 1000; ++i) {
    const double v = QuantileOfSorted(sorted, i / 1000.0);
    EXPECT_GE(v, last);
    last = v;
  }
}

TEST(QuantileDeathTest, EmptyOrOutOfRangeIsACallersBug) {
  EXPECT_DEATH(Quantile({}, 0.5), "empty sample");
  EXPECT_DEATH(Quantile({1.0}, 1.5), "outside");
}

}  // namespace
}  // namespace seedance::base
