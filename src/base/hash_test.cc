#include "seedance/base/hash.h"

#include <gtest/gtest.h>

namespace seedance::base {
namespace {

// The published SplitMix64 sequence from seed 0 (Vigna's splitmix64.c, as printed by its
// reference implementation and quoted by the xoshiro test vectors).
TEST(HashTest, SplitMix64FromZeroIsTheReferenceSequence) {
  SplitMix64 g(0);
  EXPECT_EQ(g.Next(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(g.Next(), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(g.Next(), 0x06C45D188009454FULL);
}

TEST(HashTest, MixIsTheGeneratorsOutput) {
  static_assert(Mix64(0) == 0xE220A8397B1DCDAFULL);
  SplitMix64 g(1234567);
  EXPECT_EQ(g.Next(), Mix64(1234567));
  EXPECT_EQ(g.Next(), Mix64(1234567 + kGoldenGamma));
}

}  // namespace
}  // namespace seedance::base
