#include "seedance/node/node_labels.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace seedance::node {
namespace {

TEST(NodeLabels, GpuModelIsAValidLabelValue) {
  EXPECT_EQ(GpuModelLabel("NVIDIA A100-SXM4-80GB"), "A100-SXM4-80GB");
  EXPECT_EQ(GpuModelLabel("NVIDIA H100 80GB HBM3"), "H100-80GB-HBM3");
  EXPECT_EQ(GpuModelLabel("Tesla V100-SXM2-16GB"), "Tesla-V100-SXM2-16GB");
  EXPECT_EQ(GpuModelLabel(" (weird) "), "weird");
  EXPECT_EQ(GpuModelLabel(std::string(100, 'x')).size(), 63u);
  EXPECT_EQ(GpuModelLabel(""), "");
}

TEST(NodeLabels, FromDiscoveryAndRemovedWithoutGpus) {
  topo::Topology t;
  t.nics.resize(3);
  t.nics[0].kind = "infiniband";
  t.nics[1].kind = "roce";
  t.nics[2].kind = "ethernet";
  std::vector<AgentGpu> gpus(4);
  for (int i = 0; i < 4; ++i) {
    gpus[i].index = i;
    gpus[i].name = "NVIDIA H200";
    gpus[i].numa_node = i / 2;
  }
  auto labels = NodeLabels(t, gpus);
  EXPECT_EQ(labels.at("seedance.io/gpu-model"), "H200");
  EXPECT_EQ(labels.at("seedance.io/numa-nodes"), "2");
  EXPECT_EQ(labels.at("seedance.io/rdma-nics"), "2");
  gpus[1].healthy = false;
  auto patch = nlohmann::json::parse(NodePatch(labels, gpus));
  EXPECT_EQ(patch["metadata"]["annotations"]["seedance.io/unhealthy-gpus"], "1");
  auto none = NodeLabels(t, {});
  EXPECT_FALSE(none.at("seedance.io/gpu-model").has_value());
  patch = nlohmann::json::parse(NodePatch(none, {}));
  EXPECT_TRUE(patch["metadata"]["labels"]["seedance.io/gpu-model"].is_null());
  EXPECT_TRUE(patch["metadata"]["annotations"]["seedance.io/unhealthy-gpus"].is_null());
}

}  // namespace
}  // namespace seedance::node
