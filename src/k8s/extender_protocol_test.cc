#include "seedance/k8s/extender_protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace seedance::k8s {
namespace {

// ExtenderArgs as kube-scheduler 1.20's HTTPExtender sends them with nodeCacheCapable: true
// (the Pod abridged; Nodes null, NodeNames set).
constexpr std::string_view kFilterArgs = R"({"Pod":{"metadata":{"name":"p1","namespace":"ml",
  "uid":"0b4f","annotations":{"seedance.io/num-gpu":"1","seedance.io/gpu-milli":"500"}},
  "spec":{"containers":[{"name":"c","resources":{"limits":{"seedance.io/gpu-milli":"500"},
  "requests":{"seedance.io/gpu-milli":"500"}}}],"schedulerName":"default-scheduler",
  "priority":0},"status":{"phase":"Pending"}},"Nodes":null,"NodeNames":["node-a","node-b"]})";

TEST(ExtenderProtocolTest, DecodesFilterArgsWithNodeNames) {
  const ExtenderArgs a = DecodeExtenderArgs(kFilterArgs).value();
  EXPECT_EQ(a.pod.pod.name, "ml/p1");
  EXPECT_EQ(a.pod.uid, "0b4f");
  EXPECT_EQ(a.pod.pod.gpu_milli, 500);
  ASSERT_TRUE(a.node_names.has_value());
  EXPECT_EQ(a.candidate_names(), (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_TRUE(a.nodes.empty());
}

TEST(ExtenderProtocolTest, IsLiberalInKeysAndNulls) {
  // Lower-case keys, Nodes as a NodeList instead of names, null maps.
  const ExtenderArgs a =
      DecodeExtenderArgs(
          R"({"pod":{"metadata":{"name":"p"}},"nodes":{"items":[{"metadata":{"name":"n1"},
          "status":{"allocatable":{"seedance.io/gpu-milli":"2000"}}}]},"nodenames":null})")
          .value();
  EXPECT_FALSE(a.node_names.has_value());
  ASSERT_EQ(a.nodes.size(), 1U);
  EXPECT_EQ(a.nodes[0].node.gpu_count, 2);
  EXPECT_EQ(a.candidate_names(), (std::vector<std::string>{"n1"}));
}

TEST(ExtenderProtocolTest, BadArgumentsNameTheField) {
  struct Case {
    std::string body, where;
  };
  const std::vector<Case> cases = {
      {"", "ExtenderArgs"},
      {"[]", "ExtenderArgs"},
      {R"({"NodeNames":["a"]})", "ExtenderArgs.Pod"},
      {R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":[1]})", "ExtenderArgs.NodeNames[0]"},
      {R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":"a"})", "ExtenderArgs.NodeNames"},
      {R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{}}]}})",
       "ExtenderArgs.Nodes.items[0].metadata.name"},
  };
  for (const auto& c : cases) {
    auto r = DecodeExtenderArgs(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_NE(r.status().ToString().find(c.where), std::string::npos) << r.status().ToString();
  }
}

TEST(ExtenderProtocolTest, EncodesExactlyWhatTheGoTypesMarshal) {
  ExtenderFilterResult f;
  f.node_names = std::vector<std::string>{"node-a"};
  f.failed["node-b"] = "1 free GPU share of 400 milli < 500";
  EXPECT_EQ(EncodeFilterResult(f),
            R"({"Error":"","FailedAndUnresolvableNodes":{},"FailedNodes":{"node-b":"1 free GPU )"
            R"(share of 400 milli < 500"},"NodeNames":["node-a"],"Nodes":null})");
  EXPECT_EQ(EncodeFilterResult({}),
            R"({"Error":"","FailedAndUnresolvableNodes":{},"FailedNodes":{},"NodeNames":null,)"
            R"("Nodes":null})");
  EXPECT_EQ(EncodeHostPriorityList({{"a", 10}, {"b", 0}}),
            R"([{"Host":"a","Score":10},{"Host":"b","Score":0}])");
  EXPECT_EQ(EncodeBindingResult(""), R"({"Error":""})");
  EXPECT_EQ(EncodePreemptionResult({{"n1", {{"u1", "u2"}, 0}}}),
            R"({"NodeNameToMetaVictims":{"n1":{"NumPDBViolations":0,"Pods":[{"UID":"u1"},)"
            R"({"UID":"u2"}]}}})");
}

TEST(ExtenderProtocolTest, DecodesBindingAndPreemptionArgs) {
  const auto b =
      DecodeBindingArgs(R"({"PodName":"p1","PodNamespace":"ml","PodUID":"0b4f","Node":"node-a"})")
          .value();
  EXPECT_EQ(b.pod_namespace, "ml");
  EXPECT_EQ(b.node, "node-a");
  EXPECT_FALSE(DecodeBindingArgs(R"({"PodName":"p1"})").ok());
  const auto p = DecodePreemptionArgs(
                     R"({"Pod":{"metadata":{"name":"hi"}},"NodeNameToMetaVictims":{"n1":{"Pods":)"
                     R"([{"UID":"u1"}],"NumPDBViolations":1},"n2":null}})")
                     .value();
  EXPECT_EQ(p.victims.at("n1").pod_uids, (std::vector<std::string>{"u1"}));
  EXPECT_EQ(p.victims.at("n1").num_pdb_violations, 1);
  EXPECT_TRUE(p.victims.at("n2").pod_uids.empty());
  // Full victims (nodeCacheCapable false) are read for their UIDs.
  const auto full =
      DecodePreemptionArgs(R"({"Pod":{"metadata":{"name":"hi"}},"NodeNameToVictims":{"n1":{"Pods":)"
                           R"([{"metadata":{"name":"lo","uid":"u9"}}]}}})")
          .value();
  EXPECT_EQ(full.victims.at("n1").pod_uids, (std::vector<std::string>{"u9"}));
}

}  // namespace
}  // namespace seedance::k8s
