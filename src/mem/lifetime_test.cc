#include "seedance/mem/lifetime.h"

#include <gtest/gtest.h>

#include <random>

#include "seedance/base/testing/text_mutator.h"

namespace seedance::mem {
namespace {

// Brute force: the largest total size live at any integer time.
int64_t BruteMaxLive(const std::vector<Buffer>& buffers) {
  int64_t lo = INT64_MAX, hi = INT64_MIN, best = 0;
  for (const Buffer& b : buffers) {
    lo = std::min(lo, b.lower);
    hi = std::max(hi, b.upper);
  }
  for (int64_t t = lo; t < hi; ++t) {
    int64_t live = 0;
    for (const Buffer& b : buffers) {
      if (b.lower <= t && t < b.upper) live += b.size;
    }
    best = std::max(best, live);
  }
  return best;
}

TEST(LifetimeTest, ParsesMiniMallocFormatAndOptionalColumns) {
  auto f = ParseLifetimeCsv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n", "x.csv");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->buffers.size(), 2u);
  EXPECT_EQ(f->buffers[1].id, "b2");
  EXPECT_EQ(f->buffers[1].upper, 9);
  EXPECT_TRUE(f->offsets.empty());
  EXPECT_FALSE(f->has_offsets);
  auto g = ParseLifetimeCsv("size,kind,id,upper,lower,offset\n8,weight,w,10,0,64\n", "y.csv");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->buffers[0].kind, BufferKind::kWeight);
  EXPECT_EQ(g->offsets, std::vector<int64_t>{64});
}

// Every defect of issue #3 item 1, with the file, line and field it must name.
TEST(LifetimeTest, EachDefectNamesFileLineAndField) {
  struct Case {
    const char* csv;
    const char* where;
    const char* message_part;
  };
  const Case cases[] = {
      {"id,lower,upper,size\na,0,1,4\na,1,2,4\n", "d.csv:3: id", "duplicate id 'a'"},
      {"id,lower,upper,size\na,5,5,4\n", "d.csv:2: lower", "must be less than 'upper'"},
      {"id,lower,upper,size\na,6,5,4\n", "d.csv:2: lower", "must be less than 'upper'"},
      {"id,lower,upper,size\na,0,1,0\n", "d.csv:2: size", "must be positive"},
      {"id,lower,upper,size\na,0,1,-8\n", "d.csv:2: size", "must be positive"},
      {"id,lower,upper,size\na,0,1,99999999999999999999\n", "d.csv:2: size", "fits in 64 bits"},
      {"id,lower,upper,size\na,0,1,2251799813685249\n", "d.csv:2: size", "2^50"},
      {"id,lower,upper\na,0,1\n", "d.csv:1", "missing column 'size'"},
      {"id,lower,upper,size\na,0,1\n", "d.csv:2", "expected 4 fields"},
      {"id,lower,upper,size\na,0,x1,4\n", "d.csv:2: upper", "must be an integer"},
      {"id,lower,upper,size\na,0,1.5,4\n", "d.csv:2: upper", "must be an integer"},
      {"id,lower,upper,size,colour\na,0,1,4,red\n", "d.csv:1", "unknown column 'colour'"},
      {"id,lower,upper,size,kind\na,0,1,4,cache\n", "d.csv:2: kind",
       "expected unspecified, weight"},
      // Hardening finding 1: ends and sums that would overflow int64.
      {"id,lower,upper,size,offset\na,0,1,1000,9223372036854775000\n", "d.csv:2: offset",
       "exceeds the supported arena"},
      {"id,lower,upper,size,offset\na,0,1,1000,4611686018427387000\n", "d.csv:2: offset",
       "exceeds the supported arena"},
  };
  for (const Case& c : cases) {
    auto f = ParseLifetimeCsv(c.csv, "d.csv");
    ASSERT_FALSE(f.ok()) << c.csv;
    EXPECT_EQ(f.status().where(), c.where) << f.status().ToString();
    EXPECT_NE(f.status().message().find(c.message_part), std::string_view::npos)
        << f.status().ToString();
  }
}

// 4,097 buffers of 2^50 bytes add up to past 2^62: rejected at the row where the sum passes it.
TEST(LifetimeTest, SizesThatAddUpPastTheArenaAreRejected) {
  std::string csv = "id,lower,upper,size\n";
  for (int i = 0; i < 4097; ++i) csv += "b" + std::to_string(i) + ",0,1,1125899906842624\n";
  auto f = ParseLifetimeCsv(csv, "big.csv");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().where(), "big.csv:4098: size");
  std::vector<Buffer> buffers(8200, Buffer{"", 0, 1, kMaxBufferSize});
  for (size_t i = 0; i < buffers.size(); ++i) buffers[i].id = std::to_string(i);
  const base::Status s = ValidateBuffers(buffers, "plan input");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("2^62"), std::string_view::npos);
  buffers.resize(4096);  // exactly 2^62
  EXPECT_TRUE(ValidateBuffers(buffers, "plan input").ok());
}

TEST(LifetimeTest, MaxLiveMatchesBruteForce) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<Buffer> buffers;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      const int64_t lower = rng() % 20;
      buffers.push_back({std::to_string(i), lower, lower + 1 + static_cast<int64_t>(rng() % 8),
                         1 + static_cast<int64_t>(rng() % 100)});
    }
    EXPECT_EQ(MaxLiveBytes(buffers), BruteMaxLive(buffers));
  }
  // Half-open: a buffer ending at t and one starting at t never coexist.
  EXPECT_EQ(MaxLiveBytes(std::vector<Buffer>{{"a", 0, 5, 10}, {"b", 5, 9, 7}}), 10);
}

TEST(LifetimeTest, CsvRoundTrip) {
  std::vector<Buffer> buffers = {{"a,b", 0, 4, 16, BufferKind::kActivation},
                                 {"c", 2, 9, 8, BufferKind::kGradient}};
  const std::string csv = PlanToCsv(buffers, std::vector<int64_t>{0, 16});
  auto back = ParseLifetimeCsv(csv, "rt.csv");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << csv;
  EXPECT_EQ(back->buffers[0].id, "a,b");
  EXPECT_EQ(back->buffers[1].kind, BufferKind::kGradient);
  EXPECT_EQ(back->offsets, (std::vector<int64_t>{0, 16}));
  // An empty plan still has its offset column.
  auto empty = ParseLifetimeCsv(PlanToCsv({}, {}), "e.csv");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->has_offsets);
}

TEST(LifetimeTest, MutatedFilesFailCleanly) {
  std::mt19937 rng(17);
  const std::string original = "id,lower,upper,size\n0,0,3,4\n1,3,9,4\n2,0,9,4\n3,9,21,4\n";
  for (int i = 0; i < 3000; ++i) {
    auto f = ParseLifetimeCsv(base::testing::MutateText(original, rng), "m.csv");
    if (f.ok()) {
      EXPECT_TRUE(ValidateBuffers(f->buffers, "m").ok());
    } else {
      EXPECT_EQ(f.status().where().rfind("m.csv:", 0), 0u) << f.status().ToString();
    }
  }
}

}  // namespace
}  // namespace seedance::mem
