#include "seedance/control/io_pressure.h"

#include <gtest/gtest.h>

#include <random>

#include "seedance/base/fake_env.h"
#include "seedance/base/testing/text_mutator.h"

namespace seedance::control {
namespace {

constexpr std::string_view kSample =
    "some avg10=1.23 avg60=0.50 avg300=0.10 total=123456\n"
    "full avg10=0.80 avg60=0.30 avg300=0.05 total=65432\n";

TEST(IoPressureTest, ParsesTheKernelsFormat) {
  auto p = ParseIoPressure(kSample, "io");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_DOUBLE_EQ(p->some.avg10, 1.23);
  EXPECT_DOUBLE_EQ(p->some.avg300, 0.10);
  EXPECT_EQ(p->some.total_us, 123456);
  EXPECT_DOUBLE_EQ(p->full.avg60, 0.30);
  EXPECT_EQ(p->full.total_us, 65432);
}

// The running kernel's own file, where it has one: the independent reference for the format.
TEST(IoPressureTest, ReadsThisMachinesFileWhenPresent) {
  auto p = ReadIoPressure(*base::Env::Default());
  if (!p.ok() && p.status().code() == base::StatusCode::kNotFound) {
    GTEST_SKIP() << "no PSI on this kernel";
  }
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_GE(p->some.total_us, p->full.total_us);  // all tasks stalled implies some did
}

TEST(IoPressureTest, StallShareIsTheTotalsDeltaOverWallTime) {
  base::FakeEnv env;
  env.SetFile(kIoPressurePath, std::string(kSample));
  auto before = ReadIoPressure(env);
  ASSERT_TRUE(before.ok());
  env.SetFile(kIoPressurePath,
              "some avg10=70.0 avg60=20.0 avg300=5.0 total=1623456\n"
              "full avg10=50.0 avg60=10.0 avg300=2.0 total=965432\n");
  auto after = ReadIoPressure(env);
  ASSERT_TRUE(after.ok());
  EXPECT_DOUBLE_EQ(StallShare(*before, *after, 2.0), 0.75);  // 1.5 s stalled in 2 s
  EXPECT_DOUBLE_EQ(StallShare(*before, *after, 1.0), 1.0);   // clamped
  EXPECT_DOUBLE_EQ(StallShare(*before, *after, 0.0), 0.0);
  env.RemoveFile(kIoPressurePath);
  EXPECT_EQ(ReadIoPressure(env).status().code(), base::StatusCode::kNotFound);
}

TEST(IoPressureTest, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* where;
  };
  const Case cases[] = {
      {"full avg10=0 avg60=0 avg300=0 total=1\n", "io"},  // no `some`
      {"some avg10=0 avg60=0 avg300=0\n", "io:1"},        // a field missing
      {"some avg10=0 avg60=0 avg300=0 total=1\nsome avg10=0 avg60=0 avg300=0 total=1\n",
       "io:2"},  // twice
      {"some avg10=0 avg60=0 avg300=0 total=1\nfull avg10=101 avg60=0 avg300=0 total=1\n",
       "io:2"},                                               // over 100%
      {"some avg10=0 avg60=0 avg300=0 total=-4\n", "io:1"},   // negative total
      {"some avg10=0 avg61=0 avg300=0 total=1\n", "io:1"},    // wrong key
      {"some avg10=nan avg60=0 avg300=0 total=1\n", "io:1"},  // not finite
      {"cpu avg10=0 avg60=0 avg300=0 total=1\n", "io:1"},     // unknown line
  };
  for (const Case& c : cases) {
    auto p = ParseIoPressure(c.text, "io");
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.status().where(), c.where) << c.text;
  }
}

// Mutated files parse or fail with a located error; nothing crashes (run under the sanitizers).
TEST(IoPressureTest, MutatedFilesFailCleanly) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const std::string text = base::testing::MutateText(std::string(kSample), rng, 4);
    auto p = ParseIoPressure(text, "io");
    if (!p.ok()) {
      EXPECT_TRUE(p.status().where().starts_with("io")) << text;
    } else {
      EXPECT_GE(p->some.total_us, 0);
    }
  }
}

}  // namespace
}  // namespace seedance::control
