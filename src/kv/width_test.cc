#include "seedance/kv/width.h"

#include <gtest/gtest.h>

namespace seedance::kv {
namespace {

TEST(KvWidthTest, NamesRoundTripAndCodeBitsAreTheTable) {
  // The exhaustive table: each width, the name the CLI and Python take, and its code bits.
  const struct {
    KvWidth width;
    const char* name;
    int bits;
  } table[] = {{KvWidth::kFp32, "32", 32}, {KvWidth::kInt8, "8", 8},
               {KvWidth::kFp8, "fp8", 8},  {KvWidth::kInt6, "6", 6},
               {KvWidth::kInt5, "5", 5},   {KvWidth::kInt4, "4", 4},
               {KvWidth::kInt2, "2", 2},   {KvWidth::kAdaptive, "adaptive", 8}};
  ASSERT_EQ(std::size(table), kKvWidthNames.size());
  for (const auto& row : table) {
    EXPECT_EQ(KvWidthName(row.width), row.name);
    EXPECT_EQ(*ParseKvWidth(row.name), row.width);
    EXPECT_EQ(KvCodeBits(row.width), row.bits) << row.name;
  }
}

TEST(KvWidthTest, OtherSpellingsAreErrorsThatListTheNames) {
  for (const char* text : {"int8", "fp32", "3", "", "8 ", "FP8"}) {
    const auto w = ParseKvWidth(text, "--kv-bits");
    ASSERT_FALSE(w.ok()) << text;
    EXPECT_EQ(w.status().where(), "--kv-bits");
    EXPECT_NE(w.status().message().find("32, 8, fp8, 6, 5, 4, 2 or adaptive"), std::string::npos)
        << w.status().message();
  }
}

}  // namespace
}  // namespace seedance::kv
