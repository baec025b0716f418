// The exact search's AVX2 kernel against a plain loop, on every length and
// offset up to a few vectors, with values around the threshold and at the
// ends of the 64-bit range.
#include "seedance/port/simd_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "seedance/port/simd_convert.h"

namespace seedance::port {
namespace {

TEST(SimdSearch, LowerToMatchesAPlainLoop) {
  if (!CpuHasAvx2F16c()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937_64 rng(3);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (int n = 0; n <= 19; ++n) {
    for (int start = 0; start < 4; ++start) {
      for (int64_t y : {int64_t{0}, int64_t{-5}, int64_t{1000}, kMax, kMin}) {
        std::vector<int64_t> a(static_cast<size_t>(n + start + 3));
        for (auto& v : a) {
          const int pick = static_cast<int>(rng() % 5);
          v = pick == 0   ? kMax
              : pick == 1 ? kMin
              : pick == 2 ? y
                          : static_cast<int64_t>(rng() % 2001) - 1000;
        }
        auto want = a;
        for (int i = 0; i < n; ++i) want[start + i] = std::min(want[start + i], y);
        Avx2LowerTo(a.data() + start, n, y);
        EXPECT_EQ(a, want) << "n " << n << " start " << start << " y " << y;
      }
    }
  }
}

}  // namespace
}  // namespace seedance::port
