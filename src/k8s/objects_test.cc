#include "seedance/k8s/objects.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace seedance::k8s {
namespace {

// A Node as kube-apiserver 1.20 returns it (trimmed: conditions, images and addresses dropped).
constexpr std::string_view kNodeJson = R"({
  "kind": "Node", "apiVersion": "v1",
  "metadata": {"name": "node-0042", "uid": "5c1e", "resourceVersion": "811",
               "labels": {"kubernetes.io/hostname": "node-0042", "seedance.io/gpu-model": "V100M32"}},
  "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
  "status": {"capacity": {"cpu": "96", "memory": "786432Mi", "pods": "110",
                          "seedance.io/gpu-milli": "8k", "nvidia.com/gpu": "8"},
             "allocatable": {"cpu": "95500m", "memory": "783Gi", "pods": "110",
                             "seedance.io/gpu-milli": "8000", "nvidia.com/gpu": "8"}}
})";

constexpr std::string_view kPodJson = R"({
  "metadata": {"name": "train-7", "namespace": "ml", "uid": "u-7",
               "annotations": {"seedance.io/num-gpu": "1", "seedance.io/gpu-milli": "500",
                               "seedance.io/gpu-spec": "V100M32|A100", "seedance.io/qos": "BE"}},
  "spec": {"schedulerName": "default-scheduler", "priority": 1000, "nodeName": null,
           "initContainers": [{"name": "fetch", "resources": {"requests": {"cpu": "6", "memory": "1Gi"}}}],
           "containers": [
             {"name": "a", "resources": {"requests": {"cpu": "2", "memory": "3Gi", "seedance.io/gpu-milli": "500"},
                                         "limits": {"seedance.io/gpu-milli": "500"}}},
             {"name": "b", "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}}}]},
  "status": {"phase": "Pending"}
})";

TEST(K8sObjectsTest, ReadsANodeAsTheApiServerSendsIt) {
  const KubeNode n = ParseKubeNode(kNodeJson, "node").value();
  EXPECT_EQ(n.node.name, "node-0042");
  EXPECT_EQ(n.node.cpu_milli, 95500);  // allocatable, not capacity
  EXPECT_EQ(n.node.memory_mib, 783 * 1024);
  EXPECT_EQ(n.node.gpu_count, 8);
  EXPECT_EQ(n.node.gpu_model, "V100M32");
  EXPECT_FALSE(n.unschedulable);
  // Only nvidia.com/gpu and capacity, nulls where objects might be.
  const KubeNode m = ParseKubeNode(
                         R"({"metadata":{"name":"n","labels":null},"spec":{"unschedulable":true},
          "status":{"allocatable":null,"capacity":{"nvidia.com/gpu":2,"cpu":"4"}}})",
                         "node")
                         .value();
  EXPECT_EQ(m.node.gpu_count, 2);
  EXPECT_EQ(m.node.cpu_milli, 4000);
  EXPECT_TRUE(m.unschedulable);
}

TEST(K8sObjectsTest, ReadsAPodsShapeAndRequests) {
  const KubePod p = ParseKubePod(kPodJson, "pod").value();
  EXPECT_EQ(p.pod.name, "ml/train-7");
  EXPECT_EQ(p.uid, "u-7");
  EXPECT_EQ(p.pod.num_gpu, 1);
  EXPECT_EQ(p.pod.gpu_milli, 500);
  EXPECT_EQ(p.pod.gpu_models, (std::vector<std::string>{"V100M32", "A100"}));
  EXPECT_EQ(p.pod.qos, sched::Qos::kBestEffort);
  EXPECT_EQ(p.pod.priority, 1000);
  // CPU: max(2 + 0.5, 6 from the init container) = 6; memory: max(3Gi + 512Mi, 1Gi).
  EXPECT_EQ(p.pod.cpu_milli, 6000);
  EXPECT_EQ(p.pod.memory_mib, 3 * 1024 + 512);
  EXPECT_TRUE(p.node_name.empty());
  EXPECT_FALSE(p.holds_resources());
  EXPECT_FALSE(p.terminating);
}

TEST(K8sObjectsTest, ShapeFollowsTheRequestWithoutAnnotations) {
  auto pod = [](const std::string& milli) {
    return ParseKubePod(R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":
                             {"limits":{"seedance.io/gpu-milli":")" +
                            milli + R"("}}}]}})",
                        "pod");
  };
  EXPECT_EQ(pod("250").value().pod.num_gpu, 1);
  EXPECT_EQ(pod("250").value().pod.gpu_milli, 250);
  EXPECT_EQ(pod("4000").value().pod.num_gpu, 4);
  EXPECT_EQ(pod("4000").value().pod.gpu_milli, 1000);
  EXPECT_EQ(pod("4000").value().ns, "default");
  auto bad = pod("1500");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("multiple of 1000"), std::string::npos);
}

// A CPU-only pod may carry the annotations with num-gpu 0 (the Alibaba trace's rows say gpu_milli
// 0 for them); the milli-GPU then means nothing, and any GPU request is a contradiction.
TEST(K8sObjectsTest, ACpuOnlyPodMaySayZeroGpus) {
  auto pod = [](const std::string& milli, const std::string& request) {
    return ParseKubePod(R"({"metadata":{"name":"p","annotations":{"seedance.io/num-gpu":"0",
                             "seedance.io/gpu-milli":")" +
                            milli + R"("}},"spec":{"containers":[{"resources":{"requests":
                             {"cpu":"12","seedance.io/gpu-milli":")" +
                            request + R"("}}}]}})",
                        "pod");
  };
  for (const std::string milli : {"0", "500", "1000"}) {
    const auto p = pod(milli, "0");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->pod.num_gpu, 0);
    EXPECT_EQ(p->pod.gpu_milli, 0);
    EXPECT_EQ(p->pod.cpu_milli, 12000);
  }
  EXPECT_FALSE(pod("-1", "0").ok());
  EXPECT_FALSE(pod("1001", "0").ok());
  EXPECT_FALSE(pod("0", "500").ok());
}

TEST(K8sObjectsTest, ErrorsNameThePath) {
  struct Case {
    std::string json, path;
  };
  const std::vector<Case> cases = {
      {R"({"metadata":{"name":"n"},"status":{"allocatable":{"cpu":"lots"}}})",
       "node.status.allocatable[cpu]"},
      {R"({"metadata":{"name":"n"},"status":{"allocatable":{"seedance.io/gpu-milli":"1500"}}})",
       "node.status.allocatable[seedance.io/gpu-milli]"},
      {R"({"metadata":{"name":5}})", "node.metadata.name"},
      {R"({"metadata":{}})", "node.metadata.name"},
      {R"({"metadata":{"name":"n"},"spec":{"unschedulable":"yes"}})", "node.spec.unschedulable"},
      {R"([1,2])", "node"},
      {R"({"metadata":)", "node"},
  };
  for (const auto& c : cases) {
    auto r = ParseKubeNode(c.json, "node");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_NE(r.status().ToString().find(c.path), std::string::npos) << r.status().ToString();
  }
  const std::vector<Case> pods = {
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/num-gpu":"2"}}})",
       "pod.metadata.annotations"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/num-gpu":"2","seedance.io/gpu-milli":"500"}}})",
       "pod.metadata.annotations[seedance.io/gpu-milli]"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/num-gpu":"1","seedance.io/gpu-milli":"500"}},
           "spec":{"containers":[{"resources":{"requests":{"seedance.io/gpu-milli":"300"}}}]}})",
       "pod.spec.containers[].resources.requests"},
      {R"({"metadata":{"name":"p"},"spec":{"containers":{"a":1}}})", "pod.spec.containers"},
      {R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"memory":"1Zi"}}}]}})",
       "pod.spec.containers[0].resources.requests[memory]"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/qos":"gold"}}})",
       "pod.metadata.annotations[seedance.io/qos]"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/gpu-assignment":"0,0"}}})",
       "pod.metadata.annotations[seedance.io/gpu-assignment]"},
      {R"({"metadata":{"name":"p"},"spec":{"priority":"high"}})", "pod.spec.priority"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/rdma":"yes"}}})",
       "pod.metadata.annotations[seedance.io/rdma]"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/gang":"g"}}})",
       "pod.metadata.annotations"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/gang":"g","seedance.io/gang-size":"0"}}})",
       "pod.metadata.annotations[seedance.io/gang-size]"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/gang":"","seedance.io/gang-size":"2"}}})",
       "pod.metadata.annotations[seedance.io/gang]"},
  };
  for (const auto& c : pods) {
    auto r = ParseKubePod(c.json, "pod");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_NE(r.status().ToString().find(c.path), std::string::npos) << r.status().ToString();
  }
}

// Quantities past int range, sums that overflow int64, the MiB round-up at the top of int64 and
// negative quantities are refused with the field's path: never a pod with a wrapped-around shape.
TEST(K8sObjectsTest, ArithmeticThatWouldWrapIsRefusedWithTheField) {
  const std::string gpu = "seedance.io/gpu-milli";
  auto requests = [](const std::vector<std::string>& containers) {
    std::string j = R"({"metadata":{"name":"p"},"spec":{"containers":[)";
    for (size_t i = 0; i < containers.size(); ++i) {
      j += (i ? "," : "") + std::string(R"({"resources":{"requests":{)") + containers[i] + "}}}";
    }
    return j + "]}}";
  };
  struct Case {
    std::string json, path;
  };
  const std::vector<Case> cases = {
      // GPU counts past int range, and past the 64-GPU bound, by request or annotation.
      {requests({R"("seedance.io/gpu-milli":"4294967296000")"}),
       "pod.spec.containers[0].resources.requests[" + gpu + "]"},
      {requests({R"("seedance.io/gpu-milli":"65000")"}),
       "pod.spec.containers[0].resources.requests[" + gpu + "]"},
      {requests({R"("seedance.io/gpu-milli":"40000")", R"("seedance.io/gpu-milli":"40000")"}),
       "pod.spec.containers[].resources.requests"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/num-gpu":"4294967297","seedance.io/gpu-milli":"1000"}}})",
       "pod.metadata.annotations[seedance.io/num-gpu]"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/num-gpu":"1","seedance.io/gpu-milli":"4294967796"}}})",
       "pod.metadata.annotations[seedance.io/gpu-milli]"},
      // Negative quantities: never a "CPU-only" GPU pod, nor a negative CPU or memory.
      {requests({R"("seedance.io/gpu-milli":"-500")"}),
       "pod.spec.containers[0].resources.requests[" + gpu + "]"},
      {requests({R"("cpu":"-1")"}), "pod.spec.containers[0].resources.requests[cpu]"},
      {requests({R"("memory":"-1Gi")"}), "pod.spec.containers[0].resources.requests[memory]"},
      {R"({"metadata":{"name":"p","annotations":{"seedance.io/num-gpu":"-1","seedance.io/gpu-milli":"1000"}}})",
       "pod.metadata.annotations[seedance.io/num-gpu]"},
      // Sums over containers that overflow int64.
      {requests({R"("cpu":"5000000000000000")", R"("cpu":"5000000000000000")"}),  // x1000 milli
       "pod.spec.containers[1].resources.requests[cpu]"},
      {requests({R"("memory":"8E")", R"("memory":"8E")"}),
       "pod.spec.containers[1].resources.requests[memory]"},
  };
  for (const auto& c : cases) {
    auto r = ParseKubePod(c.json, "pod");
    ASSERT_FALSE(r.ok()) << c.json << " gave " << r->pod.num_gpu << " x " << r->pod.gpu_milli;
    EXPECT_EQ(r.status().code(), base::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().ToString().find(c.path), std::string::npos) << c.json << "\n"
                                                                     << r.status().ToString();
  }
  // The round-up to MiB at the top of int64 does not wrap: the largest quantity the reader takes
  // rounds up to a positive MiB count.
  auto top = ParseKubePod(requests({R"("memory":"9223372036854775807")"}), "pod");
  if (top.ok()) {
    EXPECT_EQ(top->pod.memory_mib, (int64_t{INT64_MAX} >> 20) + 1);
  } else {
    EXPECT_NE(top.status().ToString().find("[memory]"), std::string::npos);
  }
  // A node's negative capacity is refused too.
  for (const std::string& field : {std::string("cpu"), std::string("memory")}) {
    auto n = ParseKubeNode(
        R"({"metadata":{"name":"n"},"status":{"allocatable":{")" + field + R"(":"-4"}}})", "node");
    ASSERT_FALSE(n.ok()) << field;
    EXPECT_NE(n.status().ToString().find("node.status.allocatable[" + field + "]"),
              std::string::npos);
  }
}

TEST(K8sObjectsTest, GangMembersNameTheirGangPerNamespace) {
  const KubePod p = ParseKubePod(R"({"metadata":{"name":"w-1","namespace":"ml","annotations":
        {"seedance.io/gang":"job-9","seedance.io/gang-size":"4"}}})",
                                 "pod")
                        .value();
  EXPECT_EQ(p.gang, "ml/job-9");
  EXPECT_EQ(p.pod.gang, 4);
  const KubePod alone = ParseKubePod(R"({"metadata":{"name":"w-2"}})", "pod").value();
  EXPECT_EQ(alone.gang, "");
  EXPECT_EQ(alone.pod.gang, 1);
  EXPECT_FALSE(alone.pod.rdma);
  EXPECT_TRUE(
      ParseKubePod(R"({"metadata":{"name":"r","annotations":{"seedance.io/rdma":"true"}}})", "pod")
          ->pod.rdma);
}

TEST(K8sObjectsTest, TopologyLabelsOfANode) {
  const KubeNode n =
      ParseKubeNode(R"({"metadata":{"name":"a","labels":{"seedance.io/numa-nodes":"2",
        "seedance.io/rdma-nics":"4"}}})",
                    "node")
          .value();
  EXPECT_EQ(n.node.numa_nodes, 2);
  EXPECT_EQ(n.node.nics, 4);
  const KubeNode plain = ParseKubeNode(R"({"metadata":{"name":"b"}})", "node").value();
  EXPECT_EQ(plain.node.numa_nodes, 1);
  EXPECT_EQ(plain.node.nics, 0);
  for (const char* bad : {R"({"metadata":{"name":"a","labels":{"seedance.io/numa-nodes":"0"}}})",
                          R"({"metadata":{"name":"a","labels":{"seedance.io/rdma-nics":"x"}}})"}) {
    auto r = ParseKubeNode(bad, "node");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().ToString().find("node.metadata.labels[seedance.io/"), std::string::npos)
        << r.status().ToString();
  }
}

TEST(K8sObjectsTest, BoundPodsCarryTheirAssignment) {
  const KubePod p =
      ParseKubePod(
          R"({"metadata":{"name":"p","uid":"x","deletionTimestamp":"2026-12-03T07:00:00Z",
          "annotations":{"seedance.io/gpu-assignment":"3,1"}},
          "spec":{"nodeName":"node-1","containers":[{"resources":{"requests":{"seedance.io/gpu-milli":"2000"}}}]},
          "status":{"phase":"Running"}})",
          "pod")
          .value();
  EXPECT_EQ(p.gpus, (std::vector<int>{3, 1}));
  EXPECT_TRUE(p.holds_resources());
  EXPECT_TRUE(p.terminating);
  EXPECT_EQ(FormatGpuAssignment(p.gpus), "3,1");
  for (const char* bad : {",", "1,", "-1", "a", "1,1", "2000", " "}) {
    EXPECT_FALSE(ParseGpuAssignment(bad, "a").ok()) << bad;
  }
  // Empty: no GPUs (what a CPU-only pod's Binding would say, if it said anything).
  EXPECT_EQ(ParseGpuAssignment("", "a").value(), std::vector<int>{});
  EXPECT_EQ(FormatGpuAssignment({}), "");
}

}  // namespace
}  // namespace seedance::k8s
