// The special functions the statistics need (private to cost): the standard normal's CDF and its
// inverse, and the regularized incomplete beta function behind the F distribution's tail.
//
// Accuracy (tested against SciPy's ndtr, ndtri, betainc and fdtrc in cost_test and
// tests/python/test_cost_stats.py): about 1e-14 relative for Ndtr/Ndtri away from the extreme
// tails, and 1e-12 relative or better for IncompleteBeta while a and b stay below about 1e5.
#pragma once

namespace seedance::cost::internal {

// Phi(x) = P(Z <= x) for a standard normal Z, with full relative precision in the lower tail
// (computed through erfc, never as 1 - something).
double Ndtr(double x);

// The x with Ndtr(x) = p, for p in (0, 1); -inf at 0 and +inf at 1; NaN outside [0, 1].
// A rational first guess (Abramowitz and Stegun 26.2.23) refined by Newton steps on Ndtr.
double Ndtri(double p);

// I_x(a, b), the regularized incomplete beta function, for a, b > 0 and x in [0, 1]:
// the continued fraction of DLMF 8.17.22 evaluated by the modified Lentz method, applied to
// I_x(a, b) directly when x < (a + 1) / (a + b + 2) and to 1 - I_{1-x}(b, a) otherwise, so the
// smaller of the two tails is always computed directly (full relative precision there).
double IncompleteBeta(double a, double b, double x);

// P(F > f) for F ~ F(d1, d2), the survival function (SciPy's fdtrc): I_{d2/(d2+d1 f)}(d2/2, d1/2).
// 1 at f <= 0, 0 at f = +inf.
double FDistributionSf(double d1, double d2, double f);

}  // namespace seedance::cost::internal
