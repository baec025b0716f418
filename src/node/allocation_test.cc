#include "seedance/node/allocation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "seedance/base/hash.h"

namespace seedance::node {
namespace {

std::vector<AgentGpu> Gpus(int n) {
  std::vector<AgentGpu> gpus;
  for (int i = 0; i < n; ++i) {
    AgentGpu g;
    g.index = i;
    g.uuid = "GPU-" + std::to_string(i);
    gpus.push_back(g);
  }
  return gpus;
}

std::vector<std::string> Ids(const AgentGpu& g, int from, int n) {
  std::vector<std::string> out;
  for (int s = from; s < from + n; ++s) out.push_back(ShareDeviceId(g, s));
  return out;
}

AgentPod Pod(const std::string& name, int64_t milli, std::vector<int> gpus, std::string created,
             std::string node = "n1") {
  AgentPod p;
  p.ns = "default";
  p.name = name;
  p.node_name = std::move(node);
  p.phase = "Pending";
  p.created = std::move(created);
  p.assignment = std::move(gpus);
  p.has_assignment = !p.assignment.empty();
  p.containers = {{"main", milli}};
  return p;
}

TEST(ParseAgentPod, ReadsWhatTheAgentNeedsAndNamesBadFields) {
  const char* json = R"({"metadata": {"name": "p", "namespace": "ns", "uid": "u1",
    "resourceVersion": "42", "creationTimestamp": "2026-12-06T08:00:00Z",
    "annotations": {"seedance.io/gpu-assignment": "0,3",
                    "seedance.io/gpu-allocated": "{\"a\": \"00ff\"}"}},
    "spec": {"nodeName": "n1", "containers": [
      {"name": "a", "resources": {"limits": {"seedance.io/gpu-milli": "2k"}}},
      {"name": "b", "resources": {"requests": {"cpu": "1"}}},
      {"name": "c", "resources": {"requests": {"seedance.io/gpu-milli": 500}}}]},
    "status": {"phase": "Pending"}})";
  auto p = ParseAgentPod(json, "Pod");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->Key(), "ns/p");
  EXPECT_EQ(p->resource_version, "42");
  EXPECT_EQ(p->assignment, (std::vector<int>{0, 3}));
  ASSERT_EQ(p->containers.size(), 2u);
  EXPECT_EQ(p->containers[0].name, "a");
  EXPECT_EQ(p->containers[0].milli, 2000);  // the limit stands in for the request
  EXPECT_EQ(p->containers[1].milli, 500);
  EXPECT_EQ(p->allocated.at("a"), "00ff");

  struct Bad {
    const char* json;
    const char* where;
  };
  for (const Bad& b : {
           Bad{R"({"metadata": {"annotations": {"seedance.io/gpu-assignment": "x"}}})",
               "seedance.io/gpu-assignment"},
           Bad{R"({"metadata": {"annotations": {"seedance.io/gpu-allocated": "[1]"}}})",
               "seedance.io/gpu-allocated"},
           Bad{R"({"spec": {"containers": [{"resources": {"requests":
               {"seedance.io/gpu-milli": "-5"}}}]}})",
               "spec.containers[0].resources.requests.seedance.io/gpu-milli"},
           Bad{R"({"spec": {"containers": {}}})", "spec.containers"},
           Bad{R"({"status": {"phase": 3}})", "status.phase"},
       }) {
    auto r = ParseAgentPod(b.json, "Pod");
    ASSERT_FALSE(r.ok()) << b.json;
    EXPECT_NE(r.status().ToString().find(b.where), std::string::npos) << r.status().ToString();
  }
  EXPECT_FALSE(ParseAgentPod("{", "Pod").ok());
  EXPECT_FALSE(ParseAgentPodList(R"({"items": {}})", "PodList").ok());
}

TEST(MatchAllocation, OldestPendingPodWithTheSizeOnThisNode) {
  const auto gpus = Gpus(4);
  std::vector<AgentPod> pods = {
      Pod("young", 500, {1}, "2026-12-06T08:00:05Z"),
      Pod("old", 500, {2}, "2026-12-06T08:00:01Z"),
      Pod("oldest-other-node", 500, {2}, "2026-12-06T07:00:00Z", "n2"),
      Pod("oldest-other-size", 250, {2}, "2026-12-06T07:00:00Z"),
  };
  pods.push_back(Pod("running", 500, {2}, "2026-12-06T06:00:00Z"));
  pods.back().phase = "Running";
  // IDs on neither candidate's GPU: the oldest is taken.
  auto m = MatchAllocation(pods, "n1", gpus, Ids(gpus[0], 0, 500));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(pods[m->pod].name, "old");
  // IDs on the younger one's GPU: it is taken (GetPreferredAllocation steered kubelet there).
  m = MatchAllocation(pods, "n1", gpus, Ids(gpus[1], 0, 500));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(pods[m->pod].name, "young");
  EXPECT_FALSE(m->repeat);
}

TEST(MatchAllocation, RefusesWithTheReason) {
  const auto gpus = Gpus(2);
  auto why = [&](const std::vector<AgentPod>& pods, const std::vector<std::string>& ids) {
    auto m = MatchAllocation(pods, "n1", gpus, ids);
    EXPECT_FALSE(m.ok());
    return m.status().ToString();
  };
  EXPECT_NE(why({}, Ids(gpus[0], 0, 100)).find("no pod bound to node n1 is waiting for 100"),
            std::string::npos);
  EXPECT_NE(why({Pod("p", 100, {}, "t")}, Ids(gpus[0], 0, 100)).find("no pod bound"),
            std::string::npos);  // no assignment: not the extender's pod
  EXPECT_NE(why({Pod("p", 100, {5}, "t")}, Ids(gpus[0], 0, 100)).find("GPU 5, which this node"),
            std::string::npos);
  auto sick = gpus;
  sick[1].healthy = false;
  sick[1].why_unhealthy = "XID 79";
  auto m = MatchAllocation({Pod("p", 100, {1}, "t")}, "n1", sick, Ids(sick[0], 0, 100));
  EXPECT_NE(m.status().ToString().find("unhealthy (XID 79)"), std::string::npos);
  std::vector<AgentPod> full = {Pod("a", 600, {0}, "1"), Pod("b", 600, {0}, "2")};
  full[0].allocated["main"] = "f";
  EXPECT_NE(why(full, Ids(gpus[0], 0, 600)).find("already allocated hold 600 of 1000"),
            std::string::npos);
  auto dup = Ids(gpus[0], 0, 2);
  dup.push_back(dup[0]);
  EXPECT_NE(why({Pod("p", 3, {0}, "t")}, dup).find("names a device twice"), std::string::npos);
  EXPECT_NE(why({}, {}).find("no device IDs"), std::string::npos);
}

TEST(MatchAllocation, ARetryFindsItsPodAgain) {
  const auto gpus = Gpus(1);
  const auto ids = Ids(gpus[0], 10, 300);
  std::vector<AgentPod> pods = {Pod("a", 300, {0}, "1"), Pod("b", 300, {0}, "2")};
  pods[0].allocated["main"] = DeviceFingerprint(ids);
  pods[0].phase = "Running";
  auto m = MatchAllocation(pods, "n1", gpus, ids);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(pods[m->pod].name, "a");
  EXPECT_TRUE(m->repeat);
  m = MatchAllocation(pods, "n1", gpus, Ids(gpus[0], 400, 300));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(pods[m->pod].name, "b");
}

// Random nodes against a brute force that ranks every (pod, container) by the documented rule.
TEST(MatchAllocation, AgreesWithABruteForceOnRandomNodes) {
  base::SplitMix64 rng(44);
  int matched = 0, refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int ngpu = 1 + static_cast<int>(rng.Next() % 4);
    const auto gpus = Gpus(ngpu);
    std::vector<AgentPod> pods;
    const int npods = static_cast<int>(rng.Next() % 6);
    const int64_t sizes[] = {100, 250, 500, 1000, 2000};
    for (int k = 0; k < npods; ++k) {
      const int64_t milli = sizes[rng.Next() % 5];
      std::vector<int> assign;
      if (rng.Next() % 8 != 0) {
        const int want = milli > 1000 ? 2 : 1;
        std::set<int> s;
        while (static_cast<int>(s.size()) < want)
          s.insert(static_cast<int>(rng.Next() % (ngpu + 1)));
        assign.assign(s.begin(), s.end());
      }
      AgentPod p = Pod("p" + std::to_string(k), milli, assign,
                       "2026-12-06T08:00:0" + std::to_string(rng.Next() % 4) + "Z",
                       rng.Next() % 5 == 0 ? "n2" : "n1");
      if (rng.Next() % 4 == 0) p.allocated["main"] = "x" + std::to_string(k);
      if (rng.Next() % 6 == 0) p.phase = "Running";
      pods.push_back(p);
    }
    const int64_t count = sizes[rng.Next() % 4];
    const int on = static_cast<int>(rng.Next() % ngpu);
    const auto ids = Ids(gpus[on], 0, static_cast<int>(std::min<int64_t>(count, 1000)));
    auto m = MatchAllocation(pods, "n1", gpus, ids);

    // The brute force: rank (no GPU-set match, created, key) over every eligible container.
    std::vector<std::tuple<int, std::string, std::string, size_t>> ranked;
    for (size_t i = 0; i < pods.size(); ++i) {
      const AgentPod& p = pods[i];
      if (p.node_name != "n1" || p.phase != "Pending" || p.assignment.empty()) continue;
      if (p.containers[0].milli != static_cast<int64_t>(ids.size())) continue;
      if (p.allocated.count("main")) continue;
      bool valid =
          std::all_of(p.assignment.begin(), p.assignment.end(), [&](int g) { return g < ngpu; });
      const bool here = valid && p.assignment == std::vector<int>{on};
      ranked.emplace_back(here ? 0 : 1, p.created, p.Key(), i);
    }
    std::sort(ranked.begin(), ranked.end());
    if (ranked.empty()) {
      EXPECT_FALSE(m.ok());
      ++refused;
      continue;
    }
    const AgentPod& want = pods[std::get<3>(ranked.front())];
    // It is refused only for the reasons the header names: a GPU not here, or overcommit.
    bool bad_gpu = false;
    for (int g : want.assignment) bad_gpu = bad_gpu || g >= ngpu;
    std::map<int, int64_t> used;
    for (const AgentPod& p : pods) {
      if (&p == &want || p.node_name != "n1" || !p.allocated.count("main")) continue;
      for (int g : p.assignment)
        used[g] += p.containers[0].milli / static_cast<int64_t>(p.assignment.size());
    }
    bool over = false;
    for (int g : want.assignment)
      over = over || used[g] + static_cast<int64_t>(ids.size()) /
                                   static_cast<int64_t>(want.assignment.size()) >
                         1000;
    if (bad_gpu || over) {
      EXPECT_FALSE(m.ok()) << "trial " << trial;
      ++refused;
    } else {
      ASSERT_TRUE(m.ok()) << "trial " << trial << ": " << m.status().ToString();
      EXPECT_EQ(pods[m->pod].Key(), want.Key()) << "trial " << trial;
      ++matched;
    }
  }
  EXPECT_GT(matched, 300);
  EXPECT_GT(refused, 300);
}

TEST(PreferredDevices, TheCandidatesShareOnItsGpus) {
  const auto gpus = Gpus(3);
  std::vector<std::string> available;
  for (const auto& g : gpus) {
    auto ids = Ids(g, 0, 1000);
    available.insert(available.end(), ids.begin(), ids.end());
  }
  auto two = PreferredDevices({Pod("p", 2000, {0, 2}, "1")}, "n1", gpus, available, {}, 2000);
  ASSERT_EQ(two.size(), 2000u);
  auto spread = SpreadOf(gpus, two);
  ASSERT_TRUE(spread.ok());
  EXPECT_EQ(spread->gpus, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(spread->counts, (std::vector<int64_t>{1000, 1000}));
  // must_include on another GPU, not enough free, or no candidate: no preference.
  EXPECT_TRUE(PreferredDevices({Pod("p", 300, {1}, "1")}, "n1", gpus, available,
                               {ShareDeviceId(gpus[0], 1)}, 300)
                  .empty());
  EXPECT_TRUE(PreferredDevices({Pod("p", 300, {1}, "1")}, "n1", gpus, Ids(gpus[1], 0, 299), {}, 300)
                  .empty());
  EXPECT_TRUE(PreferredDevices({}, "n1", gpus, available, {}, 300).empty());
}

TEST(AllocationEnv, NamesTheAssignedGpusAndTheShare) {
  auto gpus = Gpus(4);
  gpus[3].uuid.clear();
  AllocationEnvOptions mps;
  mps.mps_thread_percentage = true;
  auto env = AllocationEnv(Pod("p", 333, {2}, "1"), "main", gpus, mps);
  EXPECT_EQ(env.at("NVIDIA_VISIBLE_DEVICES"), "GPU-2");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "GPU-2");
  EXPECT_EQ(env.at("SEEDANCE_GPU_MILLI"), "333");
  EXPECT_EQ(env.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "34");  // rounded up
  env = AllocationEnv(Pod("p", 2000, {1, 3}, "1"), "main", gpus, {});
  EXPECT_EQ(env.at("NVIDIA_VISIBLE_DEVICES"), "GPU-1,3");
  EXPECT_EQ(env.at("SEEDANCE_GPU_MILLI"), "1000");
  EXPECT_EQ(env.at("SEEDANCE_GPU_ASSIGNMENT"), "1,3");
  EXPECT_EQ(env.count("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), 0u);
}

TEST(AllocatedPatch, KeepsEarlierContainersAndCarriesThePrecondition) {
  AgentPod p = Pod("p", 100, {0}, "1");
  p.resource_version = "77";
  p.allocated["init"] = "aa";
  const auto j = nlohmann::json::parse(AllocatedPatch(p, "main", "bb"));
  EXPECT_EQ(j["metadata"]["resourceVersion"], "77");
  const auto v = nlohmann::json::parse(
      j["metadata"]["annotations"]["seedance.io/gpu-allocated"].get<std::string>());
  EXPECT_EQ(v, (nlohmann::json{{"init", "aa"}, {"main", "bb"}}));
}

}  // namespace
}  // namespace seedance::node
