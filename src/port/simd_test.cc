// The process-wide SIMD choice: names, the rule for kAvx2 on a CPU without it, how a call's own
// request combines with the process choice (the whole table), and SEEDANCE_SIMD.
#include "seedance/port/simd.h"

#include <gtest/gtest.h>

#include "seedance/base/fake_env.h"

namespace seedance::port {
namespace {

// Restores the process choice after each test.
class SimdTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(SetSimdKernel(SimdKernel::kAuto).ok()); }
};

TEST_F(SimdTest, NamesRoundTripAndErrorsListThem) {
  for (SimdKernel k : {SimdKernel::kAuto, SimdKernel::kScalar, SimdKernel::kAvx2}) {
    auto parsed = ParseSimdKernel(SimdKernelName(k), "x");
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, k);
  }
  auto bad = ParseSimdKernel("sse", "--simd");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("auto, scalar or avx2"), std::string::npos);
  EXPECT_NE(bad.status().ToString().find("--simd"), std::string::npos);
}

TEST_F(SimdTest, Avx2IsRefusedExactlyWhereTheCpuLacksIt) {
  EXPECT_EQ(CheckSimdKernel(SimdKernel::kAvx2).ok(), CpuHasAvx2F16c());
  EXPECT_TRUE(CheckSimdKernel(SimdKernel::kScalar).ok());
  EXPECT_TRUE(CheckSimdKernel(SimdKernel::kAuto).ok());
  EXPECT_EQ(SetSimdKernel(SimdKernel::kAvx2).ok(), CpuHasAvx2F16c());
  if (!CpuHasAvx2F16c()) {
    EXPECT_EQ(ProcessSimdKernel(), SimdKernel::kAuto);  // unchanged
  }
}

TEST_F(SimdTest, RequestAndProcessChoiceTable) {
  const bool cpu = CpuHasAvx2F16c();
  // (process choice, request) -> UseAvx2. A request other than auto wins; auto asks the process;
  // auto there asks the CPU.
  struct Row {
    SimdKernel process, request;
    bool avx2;
  };
  std::vector<Row> rows = {
      {SimdKernel::kAuto, SimdKernel::kAuto, cpu},
      {SimdKernel::kAuto, SimdKernel::kScalar, false},
      {SimdKernel::kScalar, SimdKernel::kAuto, false},
      {SimdKernel::kScalar, SimdKernel::kScalar, false},
  };
  if (cpu) {
    rows.push_back({SimdKernel::kAuto, SimdKernel::kAvx2, true});
    rows.push_back({SimdKernel::kScalar, SimdKernel::kAvx2, true});
    rows.push_back({SimdKernel::kAvx2, SimdKernel::kAuto, true});
    rows.push_back({SimdKernel::kAvx2, SimdKernel::kScalar, false});
  }
  for (const Row& r : rows) {
    ASSERT_TRUE(SetSimdKernel(r.process).ok());
    EXPECT_EQ(UseAvx2(r.request), r.avx2)
        << SimdKernelName(r.process) << " / " << SimdKernelName(r.request);
  }
  ASSERT_TRUE(SetSimdKernel(SimdKernel::kScalar).ok());
  EXPECT_EQ(ActiveSimdName(), "scalar");
  const base::Report r = SimdToReport();
  EXPECT_EQ(r["choice"], "scalar");
  EXPECT_EQ(r["active"], "scalar");
  EXPECT_EQ(r["cpu_avx2_f16c"], cpu);
}

TEST_F(SimdTest, TheEnvironmentVariable) {
  base::FakeEnv env;
  auto unset = SimdKernelFromEnv(env);
  ASSERT_TRUE(unset.ok());
  EXPECT_EQ(*unset, SimdKernel::kAuto);
  env.SetVar("SEEDANCE_SIMD", "");
  EXPECT_EQ(*SimdKernelFromEnv(env), SimdKernel::kAuto);
  env.SetVar("SEEDANCE_SIMD", "scalar");
  EXPECT_EQ(*SimdKernelFromEnv(env), SimdKernel::kScalar);
  env.SetVar("SEEDANCE_SIMD", "AVX2");  // names are exact
  auto bad = SimdKernelFromEnv(env);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("SEEDANCE_SIMD"), std::string::npos);
  env.SetVar("SEEDANCE_SIMD", "avx2");
  EXPECT_EQ(SimdKernelFromEnv(env).ok(), CpuHasAvx2F16c());
}

}  // namespace
}  // namespace seedance::port
