#include "seedance/control/cpu_memory.h"

#include <gtest/gtest.h>

#include "seedance/base/fake_env.h"

namespace seedance::control {
namespace {

// A process with 2,000 pages of address space and 500 resident, on a 4 KiB-page machine.
void Machine(base::FakeEnv& env) { env.SetFile("/proc/self/statm", "2000 500 100 10 0 300 0\n"); }

TEST(CpuMemoryTest, AGivenBudgetIsTheResidentSetAgainstIt) {
  base::FakeEnv env;
  Machine(env);
  auto m = ReadCpuMemory(env, 1 << 30);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->in_use, 500 * 4096);
  EXPECT_EQ(m->budget, 1 << 30);
  EXPECT_EQ(m->source, "budget");
}

TEST(CpuMemoryTest, ACgroupV2LimitIsItsUsageAgainstIt) {
  base::FakeEnv env;
  Machine(env);
  env.SetFile("/proc/self/cgroup", "0::/job.slice/run-1\n");
  env.SetFile("/sys/fs/cgroup/job.slice/run-1/memory.current", "734003200\n");
  env.SetFile("/sys/fs/cgroup/job.slice/run-1/memory.max", "1073741824\n");
  auto m = ReadCpuMemory(env);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->in_use, 734003200);
  EXPECT_EQ(m->budget, 1073741824);
  EXPECT_EQ(m->source, "cgroup v2");
  // "max" is no limit: on to the next reading.
  env.SetFile("/sys/fs/cgroup/job.slice/run-1/memory.max", "max\n");
  m = ReadCpuMemory(env);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->source, "ram");
  EXPECT_EQ(m->in_use, 500 * 4096);
  EXPECT_EQ(m->budget, int64_t{16} << 30);
}

TEST(CpuMemoryTest, CgroupV1IsFoundAmongTheControllersAndItsHugeLimitIsNone) {
  base::FakeEnv env;
  Machine(env);
  env.SetFile("/proc/self/cgroup", "12:cpu,cpuacct:/k\n11:memory,hugetlb:/kubepods/pod1\n0::/\n");
  env.SetFile("/sys/fs/cgroup/memory/kubepods/pod1/memory.usage_in_bytes", "100\n");
  env.SetFile("/sys/fs/cgroup/memory/kubepods/pod1/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(MemoryCgroupFiles(env).size(), 1u);  // the v2 root has no files here
  auto m = ReadCpuMemory(env);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->source, "ram");  // a v1 "no limit"
  env.SetFile("/sys/fs/cgroup/memory/kubepods/pod1/memory.limit_in_bytes", "2147483648\n");
  m = ReadCpuMemory(env);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->source, "cgroup v1");
  EXPECT_EQ(m->in_use, 100);
  EXPECT_EQ(m->budget, 2147483648);
}

TEST(CpuMemoryTest, AnAddressSpaceLimitIsTheVirtualSizeAgainstIt) {
  base::FakeEnv env;
  Machine(env);
  env.SetMemory({4096, int64_t{16} << 30, int64_t{8} << 30});
  auto m = ReadCpuMemory(env);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->source, "rlimit");
  EXPECT_EQ(m->in_use, 2000 * 4096);
  EXPECT_EQ(m->budget, int64_t{8} << 30);
}

TEST(CpuMemoryTest, AMalformedStatmIsAnErrorNamingIt) {
  base::FakeEnv env;
  env.SetFile("/proc/self/statm", "lots\n");
  auto m = ReadCpuMemory(env);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().where(), "/proc/self/statm");
}

// On this machine, against what the kernel says directly.
TEST(CpuMemoryTest, TheRealProcessReadsConsistently) {
  auto m = ReadCpuMemory(*base::Env::Default());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_GT(m->in_use, 0);
  EXPECT_GT(m->budget, 0);
}

}  // namespace
}  // namespace seedance::control
