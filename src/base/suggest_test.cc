// EditDistance against the recursive definition on every pair of short strings over a small
// alphabet; ClosestName on the cases the CLI meets.
#include "seedance/base/suggest.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace seedance::base {
namespace {

// The textbook recursion, exponential but obviously right: the reference.
size_t Reference(std::string_view a, std::string_view b) {
  if (a.empty()) return b.size();
  if (b.empty()) return a.size();
  const size_t substitute = Reference(a.substr(1), b.substr(1)) + (a.front() == b.front() ? 0 : 1);
  return std::min({Reference(a.substr(1), b) + 1, Reference(a, b.substr(1)) + 1, substitute});
}

std::vector<std::string> AllStrings(size_t max_len) {
  std::vector<std::string> out = {""};
  for (size_t begin = 0, len = 1; len <= max_len; ++len) {
    const size_t end = out.size();
    for (size_t i = begin; i < end; ++i) {
      for (char c : {'a', 'b', 'c'}) out.push_back(out[i] + c);
    }
    begin = end;
  }
  return out;
}

TEST(Suggest, EditDistanceMatchesTheRecursionOnAllShortStrings) {
  const auto all = AllStrings(4);  // 121 strings, 14,641 pairs
  for (const auto& a : all) {
    for (const auto& b : all) ASSERT_EQ(EditDistance(a, b), Reference(a, b)) << a << " " << b;
  }
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(Suggest, ClosestName) {
  const std::vector<std::string> verbs = {"eval", "estimate", "serve-bench"};
  EXPECT_EQ(ClosestName("evl", verbs), "eval");               // one deletion
  EXPECT_EQ(ClosestName("estimat", verbs), "estimate");       // within |word| / 3
  EXPECT_EQ(ClosestName("serve", verbs), "serve-bench");      // the one name it starts
  EXPECT_EQ(ClosestName("nosuchverb", verbs), std::nullopt);  // nothing close
  EXPECT_EQ(ClosestName("e", verbs), std::nullopt);           // a prefix of two: ambiguous
  EXPECT_EQ(ClosestName("", verbs), std::nullopt);
  EXPECT_EQ(ClosestName("simulat", {"optimize", "simulate", "topo"}), "simulate");
  // Ties at the smallest distance: the first name given.
  EXPECT_EQ(ClosestName("ab", {"ax", "ay"}), "ax");
}

}  // namespace
}  // namespace seedance::base
