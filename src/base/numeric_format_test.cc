#include "seedance/base/numeric_format.h"

#include <gtest/gtest.h>

namespace seedance::base {
namespace {

TEST(NumericFormatTest, NamesRoundTripAndSizesMatchTheFormats) {
  // Expected sizes: IEEE binary64/32, bfloat16, binary16, OCP FP8, int8.
  const std::pair<const char*, int> table[] = {{"fp64", 8}, {"fp32", 4}, {"tf32", 4}, {"bf16", 2},
                                               {"fp16", 2}, {"fp8", 1},  {"int8", 1}};
  ASSERT_EQ(std::size(table), kAllNumericFormats.size());
  for (size_t i = 0; i < kAllNumericFormats.size(); ++i) {
    NumericFormat f = kAllNumericFormats[i];
    EXPECT_EQ(NumericFormatName(f), table[i].first);
    EXPECT_EQ(*ParseNumericFormat(table[i].first), f);
    EXPECT_EQ(NumericFormatBytes(f), table[i].second);
  }
  EXPECT_FALSE(ParseNumericFormat("FP32").ok());
  const auto fp4 = ParseNumericFormat("fp4", "precision");
  ASSERT_FALSE(fp4.ok());
  EXPECT_EQ(fp4.status().message(),
            "expected fp64, fp32, tf32, bf16, fp16, fp8 or int8, got 'fp4'");
  EXPECT_EQ(fp4.status().where(), "precision");
}

}  // namespace
}  // namespace seedance::base
