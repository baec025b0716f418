#include "seedance/base/logging.h"

#include <gtest/gtest.h>

namespace seedance::base {
namespace {

TEST(LoggingTest, ParseLevels) {
  LogLevel l = LogLevel::kError;
  EXPECT_TRUE(ParseLogLevel("debug", &l));
  EXPECT_EQ(l, LogLevel::kDebug);
  EXPECT_TRUE(ParseLogLevel("warning", &l));
  EXPECT_EQ(l, LogLevel::kWarning);
  EXPECT_FALSE(ParseLogLevel("loud", &l));
  EXPECT_EQ(l, LogLevel::kWarning);
}

TEST(LoggingTest, BelowThresholdIsNotEvaluated) {
  SetMinLogLevel(LogLevel::kError);
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  SEEDANCE_LOG(kInfo) << count();
  EXPECT_EQ(evaluated, 0);
  ::testing::internal::CaptureStderr();
  SEEDANCE_LOG(kError) << "visible " << count();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(evaluated, 1);
  EXPECT_NE(err.find("E logging_test.cc:"), std::string::npos) << err;
  EXPECT_NE(err.find("visible 1"), std::string::npos) << err;
  SetMinLogLevel(LogLevel::kWarning);
}

TEST(LoggingTest, PassingCheckDoesNothing) {
  int x = 3;
  SEEDANCE_CHECK(x == 3) << "never printed";
  SEEDANCE_DCHECK(x > 0);
}

TEST(LoggingDeathTest, FailedCheckAbortsWithConditionAndText) {
  int x = 3;
  EXPECT_DEATH(SEEDANCE_CHECK(x == 4) << "x is " << x, "check failed: x == 4 x is 3");
}

}  // namespace
}  // namespace seedance::base
