#include "seedance/precision/collapse.h"

#include <gtest/gtest.h>

namespace seedance::precision {
namespace {

struct Obs {
  double norm;
  double variance;
  bool collapsed;  // expected
};

void ExpectSequence(const std::vector<Obs>& seq) {
  auto d = CollapseDetector::Create({});
  ASSERT_TRUE(d.ok());
  for (size_t i = 0; i < seq.size(); ++i) {
    EXPECT_EQ(d->Observe("layer", seq[i].norm, seq[i].variance), seq[i].collapsed) << "step " << i;
  }
}

TEST(Collapse, ThreeSteepDropsInARowWithTinyVariance) {
  // Ratios 0.01, 0.01, 0.01 (all < 0.05) and variance < 1e-8: collapsed at the third.
  ExpectSequence(
      {{1.0, 1e-3, false}, {1e-2, 1e-9, false}, {1e-4, 1e-12, false}, {1e-6, 1e-14, true}});
}

TEST(Collapse, OneGentleStepIsNotACollapse) {
  // Ratios 0.01, 0.5, 0.01: the second breaks the run.
  ExpectSequence({{1.0, 0, false}, {1e-2, 0, false}, {5e-3, 0, false}, {5e-5, 0, false}});
}

TEST(Collapse, LargeVarianceVetoes) {
  ExpectSequence({{1.0, 1, false}, {1e-2, 1, false}, {1e-4, 1, false}, {1e-6, 1e-7, false}});
}

TEST(Collapse, GradientStuckAtZeroStaysCollapsed) {
  // 0/0 counts as ratio 0: a gradient that dies and stays dead is caught.
  ExpectSequence({{1.0, 0, false}, {0, 0, false}, {0, 0, false}, {0, 0, true}, {0, 0, true}});
  // 0 then a positive value: ratio infinite, not a collapse.
  ExpectSequence({{0, 0, false}, {0, 0, false}, {0, 0, false}, {1, 0, false}});
}

TEST(Collapse, LayersAreIndependentAndResettable) {
  auto d = CollapseDetector::Create({});
  ASSERT_TRUE(d.ok());
  for (double n : {1.0, 1e-2, 1e-4}) {
    EXPECT_FALSE(d->Observe("a", n, 0));
    EXPECT_FALSE(d->Observe("b", 1.0, 0));
  }
  EXPECT_TRUE(d->Observe("a", 1e-6, 0));
  EXPECT_FALSE(d->Observe("b", 1.0, 0));
  d->Reset("a");
  EXPECT_FALSE(d->Observe("a", 1e-8, 0));  // history gone
}

TEST(Collapse, ConfigIsValidated) {
  CollapseConfig c;
  c.window = 3;  // needs > consecutive
  EXPECT_EQ(CollapseDetector::Create(c).status().where(), "window");
  c = {};
  c.ratio_threshold = 1.5;
  EXPECT_EQ(CollapseDetector::Create(c).status().where(), "ratio_threshold");
}

}  // namespace
}  // namespace seedance::precision
