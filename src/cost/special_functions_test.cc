#include "src/cost/special_functions.h"

#include <gtest/gtest.h>

#include <cmath>

namespace seedance::cost::internal {
namespace {

// Reference values printed by SciPy 1.17 (scipy.special.ndtr, ndtri, betainc, fdtrc) for these
// arguments, e.g. `python -c "from scipy import special; print(repr(special.ndtr(-10.0)))"`.
struct Pair {
  double x, want;
};
constexpr Pair kNdtr[] = {
    {-10.0, 7.61985302416047e-24}, {-3.5, 0.00023262907903552502},
    {-1.0, 0.15865525393145707},   {0.0, 0.5},
    {0.5, 0.6914624612740131},     {2.0, 0.9772498680518208},
    {8.0, 0.9999999999999993},
};
constexpr Pair kNdtri[] = {
    {1e-300, -37.0470962993612},  {1e-20, -9.262340089798409},          {1e-06, -4.753424308822899},
    {0.025, -1.9599639845400545}, {0.3, -0.5244005127080409},           {0.8, 0.8416212335729143},
    {0.975, 1.959963984540054},   {0.999999999999, 7.0344869100478356},
};
struct Beta {
  double a, b, x, want;
};
constexpr Beta kBeta[] = {
    {0.5, 0.5, 0.3, 0.36901011956554536},   {2, 3, 0.4, 0.5247999999999999},
    {10, 20, 0.1, 0.0003325960345446004},   {50, 40, 0.7, 0.9979524488148462},
    {0.2, 5, 0.01, 0.5846698531754058},     {300, 200, 0.55, 0.011853654379737162},
    {1500, 2000, 0.45, 0.9946717675924296}, {7.5, 0.5, 0.999, 0.9041013827549699},
};
constexpr Beta kFSf[] = {
    // {d1, d2, f, P(F > f)}
    {2, 10, 3.5, 0.07042962777237427},     {1, 5, 0.2, 0.6734284355375537},
    {3, 96, 40.0, 7.371425419303178e-17},  {5, 7.3, 1.1, 0.43490794578338166},
    {10, 1000, 2.5, 0.005755889047227769}, {2, 30, 200.0, 4.516395719298497e-18},
};

double RelativeError(double got, double want) {
  return want == 0 ? std::fabs(got) : std::fabs(got - want) / std::fabs(want);
}

TEST(SpecialFunctionsTest, NormalCdfAndItsInverseMatchScipy) {
  for (const Pair& c : kNdtr) EXPECT_LT(RelativeError(Ndtr(c.x), c.want), 1e-13) << c.x;
  for (const Pair& c : kNdtri) EXPECT_LT(RelativeError(Ndtri(c.x), c.want), 1e-12) << c.x;
  EXPECT_EQ(Ndtri(0.5), 0.0);
  EXPECT_EQ(Ndtri(0.0), -INFINITY);
  EXPECT_EQ(Ndtri(1.0), INFINITY);
  EXPECT_TRUE(std::isnan(Ndtri(1.5)));
  EXPECT_TRUE(std::isnan(Ndtri(-0.1)));
}

TEST(SpecialFunctionsTest, NdtriInvertsNdtrOverTheLowerTailAndIsOdd) {
  // Over the lower tail Ndtr keeps full relative precision, so the round trip is exact to
  // rounding; the upper tail follows from Ndtri(1 - p) = -Ndtri(p) (1 - p exact for p >= 1/4).
  for (double x = -30; x <= 0; x += 0.37) {
    EXPECT_NEAR(Ndtri(Ndtr(x)), x, 1e-12 * std::max(1.0, std::fabs(x))) << x;
  }
  for (double p = 0.25; p < 0.5; p += 0.0123) EXPECT_NEAR(Ndtri(1 - p), -Ndtri(p), 1e-14) << p;
}

TEST(SpecialFunctionsTest, IncompleteBetaMatchesScipyAndClosedForms) {
  for (const Beta& c : kBeta) {
    EXPECT_LT(RelativeError(IncompleteBeta(c.a, c.b, c.x), c.want), 1e-12)
        << c.a << " " << c.b << " " << c.x;
  }
  // Closed forms: I_x(1, 1) = x, I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b, and the
  // reflection I_x(a, b) = 1 - I_{1-x}(b, a).
  for (double x = 0.01; x < 1; x += 0.049) {
    EXPECT_NEAR(IncompleteBeta(1, 1, x), x, 1e-15);
    EXPECT_LT(RelativeError(IncompleteBeta(3.5, 1, x), std::pow(x, 3.5)), 1e-13) << x;
    EXPECT_LT(RelativeError(IncompleteBeta(1, 4.25, x), 1 - std::pow(1 - x, 4.25)), 1e-13) << x;
    EXPECT_NEAR(IncompleteBeta(2.5, 7, x) + IncompleteBeta(7, 2.5, 1 - x), 1.0, 1e-14) << x;
  }
  EXPECT_EQ(IncompleteBeta(2, 3, 0), 0.0);
  EXPECT_EQ(IncompleteBeta(2, 3, 1), 1.0);
  EXPECT_TRUE(std::isnan(IncompleteBeta(0, 3, 0.5)));
  EXPECT_TRUE(std::isnan(IncompleteBeta(2, 3, 1.5)));
}

TEST(SpecialFunctionsTest, FSurvivalMatchesScipyAndTheTwoDegreeClosedForm) {
  for (const Beta& c : kFSf) {
    EXPECT_LT(RelativeError(FDistributionSf(c.a, c.b, c.x), c.want), 1e-11)
        << c.a << " " << c.b << " " << c.x;
  }
  // F(2, d2): P(F > f) = (1 + 2 f / d2)^(-d2/2).
  for (double f : {0.1, 1.0, 4.0, 25.0}) {
    EXPECT_LT(RelativeError(FDistributionSf(2, 9, f), std::pow(1 + 2 * f / 9, -4.5)), 1e-13);
  }
  EXPECT_EQ(FDistributionSf(3, 4, 0), 1.0);
  EXPECT_EQ(FDistributionSf(3, 4, INFINITY), 0.0);
}

}  // namespace
}  // namespace seedance::cost::internal
