#include "seedance/node/gpu_health.h"

#include <gtest/gtest.h>

namespace seedance::node {
namespace {

std::vector<port::NvmlReading> Readings(int n) {
  std::vector<port::NvmlReading> out(n);
  for (int i = 0; i < n; ++i) {
    out[i].index = i;
    out[i].uuid = "GPU-" + std::to_string(i);
    out[i].name = "NVIDIA H200";
    out[i].pci_address = "0000:0" + std::to_string(i) + ":00.0";
    out[i].ecc_uncorrected_errors = 3;  // errors before the agent started are not news
  }
  return out;
}

TEST(GpuHealth, NumaNodesComeFromTheTopologyByPciAddress) {
  topo::Topology t;
  t.gpus.resize(2);
  t.gpus[0].pci_address = "0000:01:00.0";
  t.gpus[0].numa_node = 1;
  t.gpus[1].pci_address = "0000:00:00.0";
  t.gpus[1].numa_node = 0;
  auto r = Readings(3);
  r[1].pci_address = "0000:01:00.0";
  const auto gpus = GpusFromReadings(r, t);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].numa_node, 0);
  EXPECT_EQ(gpus[1].numa_node, 1);
  EXPECT_EQ(gpus[2].numa_node, -1);
}

TEST(GpuHealth, CriticalXidsAndNewEccErrorsStickApplicationXidsDoNot) {
  auto r = Readings(4);
  GpuHealth h(GpusFromReadings(r, {}));
  EXPECT_FALSE(h.Update(r));
  for (uint64_t xid : {13, 31, 43, 45, 68, 109}) {
    r[0].xid_errors = {xid};
    EXPECT_FALSE(h.Update(r)) << xid;
  }
  r[0].xid_errors = {79};
  EXPECT_TRUE(h.Update(r));
  EXPECT_EQ(h.gpus()[0].why_unhealthy, "XID 79");
  r[0].xid_errors.clear();
  EXPECT_FALSE(h.Update(r));  // stays
  EXPECT_FALSE(h.gpus()[0].healthy);
  r[2].ecc_uncorrected_errors = 5;
  EXPECT_TRUE(h.Update(r));
  EXPECT_EQ(h.gpus()[2].why_unhealthy, "2 uncorrected ECC errors");
  EXPECT_EQ(UnhealthyGpuList(h.gpus()), "0,2");
  // A GPU NVML stops reporting is unhealthy until it is back.
  auto missing = r;
  missing.erase(missing.begin() + 3);
  EXPECT_TRUE(h.Update(missing));
  EXPECT_EQ(h.gpus()[3].why_unhealthy, "not reported by NVML");
  EXPECT_TRUE(h.Update(r));
  EXPECT_TRUE(h.gpus()[3].healthy);
  EXPECT_EQ(UnhealthyGpuList(h.gpus()), "0,2");
}

TEST(GpuHealth, IsApplicationXidMatchesNvidiasList) {
  int application = 0;
  for (uint64_t xid = 0; xid < 200; ++xid) application += IsApplicationXid(xid);
  EXPECT_EQ(application, 6);
}

}  // namespace
}  // namespace seedance::node
