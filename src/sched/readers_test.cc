// The readers on the real traces, checked against the figures their
// SOURCE.md files publish, and on damaged input.
#include "seedance/sched/readers.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "seedance/base/env.h"
#include "seedance/base/testing/data.h"
#include "seedance/base/testing/text_mutator.h"

namespace seedance::sched {
namespace {

std::string Read(const std::string& rel) {
  auto text = base::Env::Default()->ReadFile((base::testing::DataDir() / rel).string());
  EXPECT_TRUE(text.ok()) << rel;
  return text.ok() ? *text : "";
}

TEST(Readers, AlibabaNodes) {
  const std::string dir = (base::testing::DataDir() / "alibaba-gpu-2023").string();
  SEEDANCE_REQUIRE_DATA(dir);
  auto all = ReadAlibabaNodes(Read("alibaba-gpu-2023/openb_node_list_all_node.csv"), "all");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  int gpus = 0, cpu_only = 0;
  std::map<std::string, int> by_model;
  for (const Node& n : *all) {
    gpus += n.gpu_count;
    cpu_only += n.gpu_count == 0;
    by_model[n.gpu_model] += n.gpu_count;
  }
  // SOURCE.md: 1523 nodes (310 CPU-only), 6212 GPUs; G2 4392, T4 842, G3 312, P100 265.
  EXPECT_EQ(all->size(), 1523u);
  EXPECT_EQ(cpu_only, 310);
  EXPECT_EQ(gpus, 6212);
  EXPECT_EQ(by_model["G2"], 4392);
  EXPECT_EQ(by_model["T4"], 842);
  EXPECT_EQ(by_model["G3"], 312);
  EXPECT_EQ(by_model["P100"], 265);
  auto gpu_nodes = ReadAlibabaNodes(Read("alibaba-gpu-2023/openb_node_list_gpu_node.csv"), "g");
  ASSERT_TRUE(gpu_nodes.ok());
  EXPECT_EQ(gpu_nodes->size(), 1213u);
}

TEST(Readers, AlibabaPodsEveryVariant) {
  const std::string dir = (base::testing::DataDir() / "alibaba-gpu-2023").string();
  SEEDANCE_REQUIRE_DATA(dir);
  auto pods = ReadAlibabaPods(Read("alibaba-gpu-2023/openb_pod_list_default.csv"), "default");
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  // SOURCE.md: 8152 pods; 1088 CPU-only, 6989 one-GPU (3078 fractional), 16 two-, 15 four-,
  // 44 eight-GPU; QoS LS 4647, BE 3398, Burstable 100, Guaranteed 7; 6086.8 GPUs requested.
  std::map<int, int> by_gpus;
  std::map<Qos, int> by_qos;
  int fractional = 0;
  int64_t milli = 0;
  for (const Pod& p : *pods) {
    ++by_gpus[p.num_gpu];
    ++by_qos[p.qos];
    fractional += p.num_gpu == 1 && p.gpu_milli < 1000;
    milli += p.gpu_demand_milli();
  }
  EXPECT_EQ(pods->size(), 8152u);
  EXPECT_EQ(by_gpus[0], 1088);
  EXPECT_EQ(by_gpus[1], 6989);
  EXPECT_EQ(fractional, 3078);
  EXPECT_EQ(by_gpus[2], 16);
  EXPECT_EQ(by_gpus[4], 15);
  EXPECT_EQ(by_gpus[8], 44);
  EXPECT_EQ(by_qos[Qos::kLatencySensitive], 4647);
  EXPECT_EQ(by_qos[Qos::kBestEffort], 3398);
  EXPECT_EQ(by_qos[Qos::kBurstable], 100);
  EXPECT_EQ(by_qos[Qos::kGuaranteed], 7);
  EXPECT_NEAR(milli / 1000.0, 6086.8, 0.05);
  // Every other variant parses, the 5-column multigpu files included.
  const std::map<std::string, size_t> rows = {
      {"cpu0", 7064},       {"cpu037", 7336},      {"cpu050", 7439},     {"cpu072", 7608},
      {"cpu100", 7853},     {"cpu200", 8832},      {"cpu235", 9240},     {"cpu250", 9420},
      {"cpu300", 10094},    {"gpushare100", 8152}, {"gpushare20", 8152}, {"gpushare40", 8152},
      {"gpushare60", 8152}, {"gpushare80", 8152},  {"gpuspec05", 8152},  {"gpuspec10", 8152},
      {"gpuspec20", 8152},  {"gpuspec25", 8152},   {"gpuspec33", 8152},  {"multigpu20", 8324},
      {"multigpu30", 8508}, {"multigpu40", 8746},  {"multigpu50", 9061}};
  for (const auto& [name, n] : rows) {
    auto p = ReadAlibabaPods(Read("alibaba-gpu-2023/openb_pod_list_" + name + ".csv"), name);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->size(), n) << name;
  }
}

TEST(Readers, PhillyAndPai) {
  const std::string dir = (base::testing::DataDir() / "philly").string();
  SEEDANCE_REQUIRE_DATA(dir);
  auto jobs = ReadPhillyJobs(Read("philly/philly_jobs_pollux.csv"), "philly");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  // SOURCE.md: 82,247 jobs; 1 GPU 76,627, 4: 1,870, 2: 1,818, 8: 1,643, 16: 199, 32: 67.
  std::map<int, int> by_gpus;
  for (const Job& j : *jobs) ++by_gpus[j.num_gpus];
  EXPECT_EQ(jobs->size(), 82247u);
  EXPECT_EQ(by_gpus[1], 76627);
  EXPECT_EQ(by_gpus[4], 1870);
  EXPECT_EQ(by_gpus[2], 1818);
  EXPECT_EQ(by_gpus[8], 1643);
  EXPECT_EQ(by_gpus[16], 199);
  EXPECT_EQ(by_gpus[32], 67);
  auto pai = ReadPaiMachines(Read("alibaba-pai-2020/pai_machine_spec.csv"), "pai");
  ASSERT_TRUE(pai.ok()) << pai.status().ToString();
  // SOURCE.md: 6,742 GPUs and 83 CPU-only machines. It says 1,896 machines, but the file holds
  // 1,897 data rows with distinct ids (`awk 'NR>1' | wc -l`); the GPU and CPU-only totals match.
  int gpus = 0, cpu_only = 0;
  for (const Node& n : *pai) {
    gpus += n.gpu_count;
    cpu_only += n.gpu_count == 0;
  }
  EXPECT_EQ(pai->size(), 1897u);
  EXPECT_EQ(gpus, 6742);
  EXPECT_EQ(cpu_only, 83);
}

TEST(Readers, ErrorsNameFileLineAndColumn) {
  const std::string pods_header =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n";
  struct Case {
    std::string text;
    std::string where;
  };
  const Case pod_cases[] = {
      {pods_header + "p,1000,10,1,1500,,LS,Running,0,5,0\n", "p.csv:2: gpu_milli"},
      {pods_header + "p,1000,10,2,500,,LS,Running,0,5,0\n", "p.csv:2: gpu_milli"},
      {pods_header + "p,1000,10,0,500,,LS,Running,0,5,0\n", "p.csv:2: gpu_milli"},
      {pods_header + "p,1000,10,1,500,,XX,Running,0,5,0\n", "p.csv:2: qos"},
      {pods_header + "p,1000,10,1,500,,LS,Lost,0,5,0\n", "p.csv:2: pod_phase"},
      {pods_header + "p,1000,10,1,500,,LS,Running,9,5,9\n", "p.csv:2: deletion_time"},
      {pods_header + "p,-1,10,1,500,,LS,Running,0,5,0\n", "p.csv:2: cpu_milli"},
      {pods_header + "p,1,10,1,500,,LS,Running,,5,0\n", "p.csv:2: creation_time"},
      {pods_header + "p,1,10,1,500,A||B,LS,Running,0,5,0\n", "p.csv:2: gpu_spec"},
      {pods_header + "p,1,1,1,5,,LS,Running,0,5,0\np,1,1,1,5,,LS,Running,0,5,0\n", "p.csv:3: name"},
      {"name,cpu_milli,memory_mib,num_gpu\np,1,1,1\n", "p.csv:1"},
  };
  for (const Case& c : pod_cases) {
    auto r = ReadAlibabaPods(c.text, "p.csv");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().where(), c.where) << r.status().ToString();
  }
  auto n = ReadAlibabaNodes("sn,cpu_milli,memory_mib,gpu,model\nx,1000,1,2,\n", "n.csv");
  EXPECT_EQ(n.status().where(), "n.csv:2: model");
  auto j = ReadPhillyJobs(
      "timestamp,duration,num_gpus,gpu_time,cluster\n2017-13-01 00:00:00,1,1,1,a\n", "j.csv");
  EXPECT_EQ(j.status().where(), "j.csv:2: timestamp");
  j = ReadPhillyJobs(
      "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-01 00:00:00,10,2,10,a\n", "j.csv");
  EXPECT_EQ(j.status().where(), "j.csv:2: gpu_time");
  // Hardening finding 8: negative fields, signs and spaces in timestamps.
  for (const char* ts :
       {"2017-10-01 -1:00:00", "2017-10-01 00:-5:00", "2017-10-01 00:00:-1", "2017-10-01 +1:00:00",
        "2017-10-01  1:00:00", "2017-10-1 01:00:00", "2017-10-01 01:00:00 "}) {
    j = ReadPhillyJobs(
        std::string("timestamp,duration,num_gpus,gpu_time,cluster\n") + ts + ",1,1,1,a\n", "j.csv");
    EXPECT_EQ(j.status().where(), "j.csv:2: timestamp") << ts;
  }
  auto m = ReadPaiMachines("machine,gpu_type,cap_cpu,cap_mem,cap_gpu\nm,CPU,96,512,8\n", "m.csv");
  EXPECT_EQ(m.status().where(), "m.csv:2: gpu_type");
}

TEST(Readers, FuzzedPodListsParseOrFailCleanly) {
  const std::string good =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "a,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
      "b,6000,12288,1,460,T4|P100,BE,Pending,427061,12902960,\n"
      "c,88000,327680,8,1000,,LS,Succeeded,5,10,6\n";
  std::mt19937 rng(5);
  int parsed = 0;
  for (int i = 0; i < 5000; ++i) {
    auto r = ReadAlibabaPods(base::testing::MutateText(good, rng), "f.csv");
    if (r.ok()) {
      ++parsed;
      for (const Pod& p : *r) {
        EXPECT_TRUE(p.num_gpu == 0 ? p.gpu_milli == 0 : p.gpu_milli >= 1 && p.gpu_milli <= 1000);
      }
    } else {
      EXPECT_TRUE(std::string(r.status().where()).starts_with("f.csv")) << r.status().ToString();
    }
  }
  EXPECT_GT(parsed, 100);
}

TEST(Readers, JobUtilization) {
  auto ok = ReadJobUtilization("id,gpu_util_pct\nphilly-0,3.5\nphilly-7,100\n", "u.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->size(), 2u);
  EXPECT_DOUBLE_EQ(ok->at("philly-0"), 3.5);
  const std::pair<const char*, const char*> bad[] = {
      {"id,util\na,3\n", "u.csv:1"},                          // wrong header
      {"id,gpu_util_pct\na,3\na,4\n", "u.csv:3: id"},         // duplicate id
      {"id,gpu_util_pct\na,101\n", "u.csv:2: gpu_util_pct"},  // out of range
      {"id,gpu_util_pct\na,-1\n", "u.csv:2: gpu_util_pct"},
      {"id,gpu_util_pct\na,x\n", "u.csv:2: gpu_util_pct"},  // not a number
      {"id,gpu_util_pct\n,5\n", "u.csv:2: id"},             // empty id
  };
  for (const auto& [text, where] : bad) {
    auto r = ReadJobUtilization(text, "u.csv");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_TRUE(std::string(r.status().where()).starts_with(where))
        << text << " -> " << r.status().ToString();
  }
  std::mt19937 rng(8);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    auto r = ReadJobUtilization(
        base::testing::MutateText("id,gpu_util_pct\na,3\nb,50.5\nc,0\n", rng), "u.csv");
    if (r.ok()) {
      ++parsed;
      for (const auto& [id, pct] : *r) EXPECT_TRUE(pct >= 0 && pct <= 100) << id;
    } else {
      EXPECT_TRUE(std::string(r.status().where()).starts_with("u.csv")) << r.status().ToString();
    }
  }
  EXPECT_GT(parsed, 100);
}

}  // namespace
}  // namespace seedance::sched
