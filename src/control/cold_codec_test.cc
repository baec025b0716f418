#include "seedance/control/cold_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace seedance::control {
namespace {

std::string NormalFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0F, 0.02F);  // the scale of trained weights
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  std::string out(n * sizeof(float), '\0');
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());  // data() may be null
  return out;
}

TEST(ColdCodecTest, ShuffleGroupsBytesOfEqualSignificance) {
  // Three 2-byte elements and a one-byte tail: a0 a1 b0 b1 c0 c1 t -> a0 b0 c0 a1 b1 c1 t.
  const std::string in = "AaBbCct";
  EXPECT_EQ(ByteShuffle(in, 2), "ABCabct");
  EXPECT_EQ(ByteUnshuffle("ABCabct", 2), in);
  EXPECT_EQ(ByteShuffle(in, 1), in);
  for (int w : {2, 4, 8}) {
    for (size_t n : {0, 1, 7, 8, 9, 1000, 1003}) {
      const std::string data = NormalFloats(n, 1).substr(0, n);
      EXPECT_EQ(ByteUnshuffle(ByteShuffle(data, w), w), data) << w << " " << n;
    }
  }
}

TEST(ColdCodecTest, RoundTripsAndShuffleCompressesFloatsBetter) {
  const std::string weights = NormalFloats(1 << 16, 2);
  auto shuffled = EncodeCold(weights, {.element_bytes = 4});
  auto plain = EncodeCold(weights, {.element_bytes = 1});
  ASSERT_TRUE(shuffled.ok() && plain.ok());
  EXPECT_LT(shuffled->size(), plain->size());
  EXPECT_LT(shuffled->size(), weights.size());
  auto back = DecodeCold(*shuffled);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, weights);
  for (const std::string& s : {std::string(), std::string("x"), std::string(100000, '\0')}) {
    auto frame = EncodeCold(s, {});
    ASSERT_TRUE(frame.ok());
    EXPECT_EQ(*DecodeCold(*frame), s);
  }
}

TEST(ColdCodecTest, RejectsBadOptions) {
  EXPECT_FALSE(EncodeCold("abc", {.element_bytes = 3}).ok());
  EXPECT_FALSE(EncodeCold("abc", {.level = 0}).ok());
  EXPECT_FALSE(EncodeCold("abc", {.level = 99}).ok());
}

// Every single-byte change and every truncation of a frame is an error naming a field, never
// different bytes.
TEST(ColdCodecTest, DamageIsDetectedNotDecoded) {
  const std::string original = NormalFloats(300, 3) + "tail";
  const std::string frame = *EncodeCold(original, {});
  for (size_t i = 0; i < frame.size(); ++i) {
    for (int flip : {0x01, 0x80, 0xFF}) {
      std::string bad = frame;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      auto r = DecodeCold(bad);
      if (r.ok()) {
        EXPECT_EQ(*r, original) << "byte " << i;
      }
    }
  }
  for (size_t n = 0; n < frame.size(); ++n) {
    EXPECT_FALSE(DecodeCold(frame.substr(0, n)).ok()) << n;
  }
  std::string wrong = frame;
  wrong[0] = 'X';
  EXPECT_NE(DecodeCold(wrong).status().ToString().find("magic"), std::string::npos);
  std::string huge = frame;
  for (int i = 6; i < 14; ++i) huge[static_cast<size_t>(i)] = '\x7f';  // claims ~9e18 bytes
  EXPECT_FALSE(DecodeCold(huge).ok());
}

}  // namespace
}  // namespace seedance::control
