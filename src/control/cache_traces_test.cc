#include "seedance/control/cache_traces.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace seedance::control {
namespace {

std::vector<CacheKey> RandomKeys(size_t n, CacheKey below, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<CacheKey> keys(n);
  for (auto& k : keys) k = rng() % below;
  return keys;
}

TEST(CacheTracesTest, LirsTextRoundTripsWithMarkersBlanksAndCrlf) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const auto keys = RandomKeys(1 + seed * 13, seed % 2 == 0 ? 1000 : UINT64_MAX, seed);
    EXPECT_EQ(ParseLirsTrace(RenderLirsTrace(keys), "t").value(), keys);
    // The same numbers with the LIRS simulator's "*" markers, blank lines, CRLF and padding.
    std::string messy = "*\n\n";
    for (CacheKey k : keys)
      messy += "  " + std::to_string(k) + "\t\r\n" + (k % 3 == 0 ? "*\n" : "");
    EXPECT_EQ(ParseLirsTrace(messy, "t").value(), keys);
  }
  EXPECT_TRUE(ParseLirsTrace("", "t").value().empty());
}

TEST(CacheTracesTest, LirsErrorsNameTheFileAndLine) {
  for (const char* bad : {"12\nab\n", "12\n-1\n", "12\n3 4\n", "12\n99999999999999999999\n"}) {
    auto r = ParseLirsTrace(bad, "multi1.lirs");
    ASSERT_FALSE(r.ok()) << bad;
    const std::string e = r.status().ToString();
    EXPECT_NE(e.find("multi1.lirs"), std::string::npos) << e;
    EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  }
}

TEST(CacheTracesTest, Cache2kIsBigEndian32BitIntegers) {
  const std::string bytes("\x00\x00\x00\x01\x00\x01\x00\x00\xff\xff\xff\xff", 12);
  EXPECT_EQ(ParseCache2kTrace(bytes, "t").value(), (std::vector<CacheKey>{1, 65536, 4294967295}));
  const auto keys = RandomKeys(777, CacheKey{1} << 32, 5);
  EXPECT_EQ(ParseCache2kTrace(RenderCache2kTrace(keys), "t").value(), keys);
  auto r = ParseCache2kTrace(std::string(5, '\0'), "web07.cache2k");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("web07.cache2k"), std::string::npos);
  EXPECT_NE(r.status().ToString().find("5 bytes"), std::string::npos);
}

}  // namespace
}  // namespace seedance::control
