// The experiment layer's multi-seed runner: the same report whatever the thread count (each run
// owns its cluster and policy, results are kept in seed order), progress reported once per seed,
// and the rules that are checked before any work. CI also runs these under ThreadSanitizer.
#include "seedance/sched/experiment.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "seedance/base/fake_env.h"

namespace seedance::sched {
namespace {

// A small Alibaba 2023 cluster: 6 nodes of 8 GPUs and 96 CPUs, two GPU models.
std::string Nodes() {
  std::string s = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (int i = 0; i < 6; ++i) {
    s += "node" + std::to_string(i) + ",96000,786432,8," + (i % 2 ? "V100M32" : "G2") + "\n";
  }
  return s;
}

// 80 pods: whole GPUs (1, 2, 4), shares of one GPU and CPU-only pods, arriving one second apart
// and running 30 to 600 s.
std::string Pods() {
  std::string s =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n";
  const int gpus[] = {1, 1, 2, 4, 1, 0, 1, 8};
  const int milli[] = {1000, 500, 1000, 1000, 250, 0, 1000, 1000};
  for (int i = 0; i < 80; ++i) {
    const int k = i % 8;
    const int start = i;
    const int end = start + 30 + (i * 37) % 570;
    s += "pod" + std::to_string(i) + "," + std::to_string(4000 + 1000 * (i % 5)) + ",16384," +
         std::to_string(gpus[k]) + "," + std::to_string(milli[k]) + ",," + (k == 5 ? "BE" : "LS") +
         ",Running," + std::to_string(start) + "," + std::to_string(end) + "," +
         std::to_string(start) + "\n";
  }
  return s;
}

// The report without its run times, which differ from run to run.
void DropRunTimes(base::Report& r) {
  if (r.is_object()) {
    r.erase("runtime_ms");
    for (auto& [key, value] : r.items()) DropRunTimes(value);
  } else if (r.is_array()) {
    for (auto& value : r) DropRunTimes(value);
  }
}

struct Outcome {
  std::string json;
  std::vector<std::pair<std::string, int>> progress;  // (policy, done) in call order
};

Outcome RunOn(ExperimentSpec spec, int threads) {
  base::FakeEnv env;
  env.SetFile("nodes.csv", Nodes());
  env.SetFile("pods.csv", Pods());
  spec.nodes_file = "nodes.csv";
  spec.pods_file = "pods.csv";
  spec.threads = threads;
  Outcome out;
  std::mutex mu;  // RunExperiment promises a lock around progress; this one checks nothing else
  auto result = RunExperiment(spec, env, [&](std::string_view policy, int done, int total) {
    std::lock_guard lock(mu);
    EXPECT_EQ(total, spec.seeds);
    out.progress.emplace_back(std::string(policy), done);
  });
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (result.ok()) {
    DropRunTimes(result->report);
    out.json = base::DumpJson(result->report);
  }
  return out;
}

void ExpectSameWhateverTheThreads(const ExperimentSpec& spec) {
  const Outcome one = RunOn(spec, 1);
  ASSERT_FALSE(one.json.empty());
  for (int threads : {2, 4, 8}) {
    const Outcome many = RunOn(spec, threads);
    EXPECT_EQ(many.json, one.json) << threads << " threads";
    // Every seed of every policy reported once, and `done` counts up to the seeds.
    ASSERT_EQ(many.progress.size(), spec.policies.size() * spec.seeds);
    for (const auto& policy : spec.policies) {
      std::vector<int> done;
      for (const auto& [p, d] : many.progress) {
        if (p == policy) done.push_back(d);
      }
      std::vector<int> expected(spec.seeds);
      for (int i = 0; i < spec.seeds; ++i) expected[i] = i + 1;
      EXPECT_EQ(done, expected) << policy;
    }
  }
}

TEST(Experiment, FgdProtocolReportIsTheSameWhateverTheThreads) {
  ExperimentSpec spec;
  spec.protocol = "fgd";
  spec.policies = {"fgd", "bestfit", "random"};
  spec.seeds = 5;
  ExpectSameWhateverTheThreads(spec);
}

TEST(Experiment, EventModeReportIsTheSameWhateverTheThreads) {
  ExperimentSpec spec;
  spec.protocol = "events";
  spec.policies = {"bestfit", "seedance"};
  spec.seeds = 4;
  ExpectSameWhateverTheThreads(spec);
}

TEST(Experiment, SeedsChangeTheRandomPolicysRuns) {
  // The runs differ by seed, so the averaging above had something to average.
  ExperimentSpec spec;
  spec.protocol = "fgd";
  spec.policies = {"random"};
  spec.seeds = 1;
  const std::string a = RunOn(spec, 1).json;
  spec.first_seed = 7;
  const std::string b = RunOn(spec, 1).json;
  EXPECT_NE(a, b);
}

TEST(Experiment, RulesAreCheckedBeforeAnyWork) {
  ExperimentSpec spec;
  spec.protocol = "fgd";
  spec.spot_fraction = 0.3;  // an event-mode setting
  EXPECT_FALSE(ValidateExperiment(spec).ok());
  base::FakeEnv env;  // no files: the rule fails first, before any read
  auto result = RunExperiment(spec, env);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().ToString().find("events"), std::string::npos)
      << result.status().ToString();
}

}  // namespace
}  // namespace seedance::sched
