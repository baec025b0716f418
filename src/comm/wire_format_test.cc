// The decoder against damaged payloads: truncation at every length, random
// bit flips and byte edits never crash, never write out of bounds (the ASan
// build runs this too) and never write at all when they fail.
#include "seedance/comm/wire_format.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "seedance/comm/compressor.h"

namespace seedance::comm {
namespace {

std::vector<std::vector<uint8_t>> SamplePayloads(size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> x(n);
  for (auto& v : x) v = g(rng);
  std::vector<std::vector<uint8_t>> out;
  for (auto kind : {CompressorKind::kTopK, CompressorKind::kRandomK, CompressorKind::kInt8,
                    CompressorKind::kInt4, CompressorKind::kSign, CompressorKind::kFp16Int4}) {
    for (double ratio : {0.01, 0.5}) {  // varint and bitmap index sections
      for (bool fp16 : {false, true}) {
        CompressorConfig c;
        c.kind = kind;
        c.ratio = ratio;
        c.fp16_values = fp16;
        c.chunk = 64;
        std::vector<uint8_t> p;
        (*Compressor::Create(c))->Compress(x, p, 7);
        out.push_back(std::move(p));
      }
    }
  }
  return out;
}

// Decodes into a buffer with guard zones on both sides; a failed decode must
// leave the whole buffer untouched, a successful one the guards.
void CheckDecode(const std::vector<uint8_t>& payload, size_t n) {
  constexpr size_t kGuard = 64;
  constexpr float kMark = 12345.0f;
  std::vector<float> buf(n + 2 * kGuard, kMark);
  std::span<float> out(buf.data() + kGuard, n);
  const base::Status s = DecodeAdd(payload, out);
  for (size_t i = 0; i < kGuard; ++i) {
    ASSERT_EQ(buf[i], kMark);
    ASSERT_EQ(buf[buf.size() - 1 - i], kMark);
  }
  if (!s.ok()) {
    for (float v : out) ASSERT_EQ(v, kMark) << "a failed decode wrote: " << s.ToString();
  }
}

TEST(WireFormat, RoundTripsAndPicksTheSmallerIndexForm) {
  const auto payloads = SamplePayloads(1000);
  for (const auto& p : payloads) {
    auto h = ReadHeader(p);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ(h->n, 1000u);
    std::vector<float> out(1000, 0.0f);
    EXPECT_TRUE(DecodeAdd(p, out).ok());
  }
  // top-k 1% of 1000 (10 indices): varints (4 + ~10 bytes) beat a 125-byte bitmap;
  // 50%: the bitmap wins.
  EXPECT_EQ(ReadHeader(payloads[0])->flags & kFlagBitmap, 0);
  EXPECT_EQ(ReadHeader(payloads[2])->flags & kFlagBitmap, kFlagBitmap);
  EXPECT_EQ(ReadHeader(payloads[1])->flags & kFlagFp16Values, kFlagFp16Values);
}

TEST(WireFormat, WrongLengthOutputIsRefused) {
  const auto p = SamplePayloads(100)[0];
  std::vector<float> out(99, 0.0f);
  EXPECT_FALSE(DecodeAdd(p, out).ok());
}

TEST(WireFormat, EveryTruncationFailsCleanly) {
  for (const auto& p : SamplePayloads(300)) {
    for (size_t len = 0; len < p.size(); ++len) {
      std::vector<uint8_t> cut(p.begin(), p.begin() + static_cast<int64_t>(len));
      CheckDecode(cut, 300);
      std::vector<float> out(300);
      ASSERT_FALSE(DecodeAdd(cut, out).ok()) << "accepted a payload cut to " << len;
    }
  }
}

TEST(WireFormat, RandomCorruptionNeverCrashesOrOverruns) {
  std::mt19937 rng(2);
  const auto payloads = SamplePayloads(300);
  int rejected = 0, total = 0;
  for (int round = 0; round < 20000; ++round) {
    std::vector<uint8_t> p = payloads[rng() % payloads.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % p.size();
      switch (rng() % 3) {
        case 0:
          p[at] ^= static_cast<uint8_t>(1u << (rng() % 8));  // bit flip
          break;
        case 1:
          p[at] = static_cast<uint8_t>(rng());  // byte replaced
          break;
        default:
          p.insert(p.begin() + static_cast<int64_t>(at), static_cast<uint8_t>(rng()));
          break;
      }
    }
    CheckDecode(p, 300);
    std::vector<float> out(300);
    rejected += !DecodeAdd(p, out).ok();
    ++total;
  }
  EXPECT_GT(rejected, total / 4);  // most damage is caught; the rest decodes to some values
}

TEST(WireFormat, HeaderErrorsNameTheByte) {
  auto p = SamplePayloads(100)[0];
  p[0] = 'X';
  EXPECT_EQ(ReadHeader(p).status().where(), "byte 0");
  p = SamplePayloads(100)[0];
  p[4] = 9;
  EXPECT_EQ(ReadHeader(p).status().where(), "byte 4");
  p.push_back(0);
  p[4] = 1;
  EXPECT_EQ(ReadHeader(p).status().where(), "byte 20");
}

}  // namespace
}  // namespace seedance::comm
