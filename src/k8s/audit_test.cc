#include "seedance/k8s/audit.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace seedance::k8s {
namespace {

std::string AuditNodes() {
  return R"({"items":[
    {"metadata":{"name":"a"},"status":{"allocatable":{"seedance.io/gpu-milli":"2k"}}},
    {"metadata":{"name":"b"},"status":{"allocatable":{"seedance.io/gpu-milli":"1000"}}}]})";
}

std::string AuditPod(const std::string& name, const std::string& node, int num, int milli,
                     const std::string& assignment, const std::string& phase = "Running") {
  std::string ann = R"("seedance.io/num-gpu":")" + std::to_string(num) +
                    R"(","seedance.io/gpu-milli":")" + std::to_string(milli) + "\"";
  if (!assignment.empty()) ann += R"(,"seedance.io/gpu-assignment":")" + assignment + "\"";
  return R"({"metadata":{"name":")" + name + R"(","annotations":{)" + ann +
         R"(}},"spec":{"nodeName":")" + node +
         R"(","containers":[{"resources":{"requests":{"seedance.io/gpu-milli":")" +
         std::to_string(num * milli) + R"("}}}]},"status":{"phase":")" + phase + R"("}})";
}

TEST(K8sAuditTest, ACleanClusterHasNoFindings) {
  const std::string pods = "{\"items\":[" + AuditPod("p1", "a", 1, 500, "0") + "," +
                           AuditPod("p2", "a", 1, 500, "0") + "," +
                           AuditPod("p3", "a", 1, 1000, "1") + "," +
                           AuditPod("done", "b", 1, 1000, "0", "Succeeded") + "]}";
  const AuditReport r = AuditGpus(AuditNodes(), pods).value();
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.gpu_pods, 3);
  EXPECT_EQ((r.gpu_milli.at({"a", 0})), 1000);
  EXPECT_EQ((r.gpu_milli.at({"a", 1})), 1000);
  EXPECT_EQ(r.gpu_milli.count({"b", 0}), 0U);  // the finished pod holds nothing
}

TEST(K8sAuditTest, FindsEveryKindOfViolation) {
  const std::string pods =
      "{\"items\":[" + AuditPod("x", "b", 1, 600, "0") + "," + AuditPod("y", "b", 1, 600, "0") +
      "," + AuditPod("twice", "a", 2, 1000, "1,1") + "," + AuditPod("far", "a", 1, 100, "7") + "," +
      AuditPod("ghost", "zzz", 1, 100, "0") + "," + AuditPod("loose", "a", 1, 100, "") + "," +
      AuditPod("short", "a", 2, 1000, "0") + "]}";
  const AuditReport r = AuditGpus(AuditNodes(), pods).value();
  std::multiset<std::string> kinds;
  for (const auto& f : r.findings) kinds.insert(f.kind);
  EXPECT_EQ(kinds.count("over"), 1U);
  EXPECT_EQ(kinds.count("repeated"), 1U);
  EXPECT_EQ(kinds.count("out-of-range"), 2U);  // GPU 7 on a 2-GPU node; 1 GPU of 2 assigned
  EXPECT_EQ(kinds.count("unknown-node"), 1U);
  EXPECT_EQ(kinds.count("unassigned"), 1U);
  for (const auto& f : r.findings) {
    if (f.kind == "over") {
      EXPECT_EQ(f.node, "b");
      EXPECT_NE(f.detail.find("1200 milli-GPU"), std::string::npos);
      EXPECT_NE(f.detail.find("default/x, default/y"), std::string::npos);
    }
  }
  EXPECT_FALSE(AuditGpus("{}", pods).ok());
  EXPECT_FALSE(AuditGpus(AuditNodes(), "[1]").ok());
}

}  // namespace
}  // namespace seedance::k8s
