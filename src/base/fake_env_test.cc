#include "seedance/base/fake_env.h"

#include <gtest/gtest.h>

namespace seedance::base {
namespace {

TEST(FakeEnvTest, FilesAndDirectories) {
  FakeEnv env;
  env.SetFile("/sys/devices/system/node/node0/cpulist", "0-3");
  env.SetFile("/sys/devices/system/node/node1/cpulist", "4-7");
  env.SetFile("/sys/devices/system/node/online", "0-1");
  EXPECT_EQ(*env.ReadFile("/sys/devices/system/node/online"), "0-1");
  EXPECT_EQ(*env.ListDirectory("/sys/devices/system/node"),
            (std::vector<std::string>{"node0", "node1", "online"}));
  EXPECT_TRUE(env.FileExists("/sys/devices/system/node/node0"));
  EXPECT_FALSE(env.FileExists("/sys/devices/system/node/node2"));
  EXPECT_EQ(env.ReadFile("/proc/stat").status().code(), StatusCode::kNotFound);
  env.RemoveFile("/sys/devices/system/node/online");
  EXPECT_FALSE(env.FileExists("/sys/devices/system/node/online"));
}

TEST(FakeEnvTest, ClockMovesOnlyWhenAdvanced) {
  FakeEnv env;
  EXPECT_EQ(env.NowMonotonicNanos(), 0);
  env.SleepFor(std::chrono::seconds(5));
  EXPECT_EQ(env.NowMonotonicNanos(), 5'000'000'000);
  env.AdvanceClock(std::chrono::milliseconds(1));
  EXPECT_EQ(env.NowUnixNanos(), FakeEnv::kStartUnixNanos + 5'001'000'000);
}

TEST(FakeEnvTest, FaultInjectionAndVariables) {
  FakeEnv env;
  env.SetFile("/data/x", "1");
  env.FailPath("/data/x", IoError("disk on fire", "/data/x"));
  EXPECT_EQ(env.ReadFile("/data/x").status().message(), "disk on fire");
  EXPECT_EQ(env.WriteFileAtomic("/data/x", "2").code(), StatusCode::kIoError);
  ASSERT_TRUE(env.WriteFileAtomic("/data/y", "3").ok());
  EXPECT_EQ(*env.ReadFile("/data/y"), "3");
  env.SetVar("CI", "true");
  EXPECT_EQ(env.GetVar("CI"), "true");
  env.UnsetVar("CI");
  EXPECT_FALSE(env.GetVar("CI").has_value());
}

TEST(FakeEnvTest, LinksAreListedAndReadBack) {
  FakeEnv env;
  env.SetFile("/sys/class/net/eth0/operstate", "up\n");
  env.SetLink("/sys/class/net/eth0/device", "../../../0000:00:03.0");
  env.SetLink("/sys/class/net/lo", "../../devices/virtual/net/lo");
  EXPECT_EQ(*env.ReadLink("/sys/class/net/eth0/device"), "../../../0000:00:03.0");
  EXPECT_EQ(env.ReadLink("/sys/class/net/eth0/operstate").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(env.ReadLink("/sys/nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*env.ListDirectory("/sys/class/net"), (std::vector<std::string>{"eth0", "lo"}));
  EXPECT_TRUE(env.FileExists("/sys/class/net/lo"));
}

}  // namespace
}  // namespace seedance::base
