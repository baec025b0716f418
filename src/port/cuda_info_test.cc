#include "seedance/port/cuda_info.h"

#include <gtest/gtest.h>

namespace seedance::port {
namespace {

TEST(CudaInfoTest, ReportsBuildAndDevicesConsistently) {
  CudaInfo info = QueryCuda();
#ifdef SEEDANCE_WITH_CUDA
  EXPECT_TRUE(info.compiled);
  EXPECT_GE(info.compiled_version, 12000);
#else
  EXPECT_FALSE(info.compiled);
#endif
  // Either there are devices, or there is a reason why not.
  EXPECT_NE(info.devices.empty(), info.error.empty());
}

TEST(CudaInfoTest, SelfTestPassesOnADeviceOrSaysUnavailable) {
  CudaInfo info = QueryCuda();
  base::Status s = CudaSelfTest();
  if (info.devices.empty()) {
    EXPECT_EQ(s.code(), base::StatusCode::kUnavailable) << s.ToString();
  } else {
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
}

}  // namespace
}  // namespace seedance::port
