#include "seedance/probe/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "src/probe/fake_proc_for_test.h"

namespace seedance::probe {
namespace {

port::NvmlReading H200(int index) {
  port::NvmlReading g;
  g.index = index;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-0000000" + std::to_string(index);
  g.pci_address = "0000:1" + std::to_string(index) + ":00.0";
  g.gpu_util_pct = 93;
  g.memory_util_pct = 41;
  g.memory_used_bytes = 80ull << 30;
  g.memory_total_bytes = 141ull << 30;
  g.power_watts = 612.5;
  g.energy_millijoules = 123456789;
  g.sm_clock_mhz = 1980;
  g.memory_clock_mhz = 3201;
  g.nvlink_tx_bytes = 1000;
  return g;
}

Snapshot Sample() {
  base::FakeEnv env;
  testing::ProcAt0(env);
  Snapshot s;
  s.unix_nanos = 1767225600LL * 1000000000LL;
  s.host = *ReadHost(env, {});
  s.gpus = {H200(0), H200(1)};
  return s;
}

// Checks the text format's rules: every sample belongs to a family announced
// by one HELP and one TYPE line, names match the metric-name grammar.
void CheckWellFormed(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::set<std::string> typed, helped;
  const std::regex name_re("[a-zA-Z_:][a-zA-Z0-9_:]*");
  while (std::getline(in, line)) {
    ASSERT_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(helped.insert(name).second) << "two HELP lines for " << name;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream w(line.substr(7));
      std::string name, type;
      w >> name >> type;
      EXPECT_TRUE(type == "gauge" || type == "counter") << line;
      if (type == "counter" && name.rfind("seedance_", 0) == 0) {
        EXPECT_TRUE(name.size() > 6 && name.substr(name.size() - 6) == "_total") << name;
      }
      EXPECT_TRUE(typed.insert(name).second) << "two TYPE lines for " << name;
      continue;
    }
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_TRUE(std::regex_match(name, name_re)) << line;
    EXPECT_TRUE(typed.count(name)) << "sample before its TYPE: " << line;
    EXPECT_TRUE(helped.count(name)) << line;
  }
}

TEST(ExpositionTest, SeedanceNamingIsWellFormedWithBaseUnits) {
  const Snapshot s = Sample();
  ExpositionContext c;
  c.hostname = "node-7";
  const std::string text = RenderPrometheus(s, Naming::kSeedance, c);
  CheckWellFormed(text);
  EXPECT_NE(text.find("seedance_cpu_seconds_total{mode=\"user\"} 10\n"), std::string::npos);
  EXPECT_NE(text.find("seedance_memory_total_bytes 16384000000\n"), std::string::npos);
  EXPECT_NE(text.find("seedance_network_transmit_bytes_total{interface=\"eth0\"} 2000000\n"),
            std::string::npos);
  // 93 % -> 0.93 ratio; 123456789 mJ -> 123456.789 J; 1980 MHz -> 1.98e9 Hz.
  EXPECT_NE(text.find("seedance_gpu_utilization_ratio{gpu=\"0\",uuid=\"GPU-00000000\","
                      "model=\"NVIDIA H200\",pci_bus_id=\"0000:10:00.0\"} 0.93"),
            std::string::npos);
  EXPECT_NE(text.find("seedance_gpu_energy_joules_total{gpu=\"1\""), std::string::npos);
  EXPECT_NE(text.find("} 123456.789"), std::string::npos);
  EXPECT_NE(text.find("} 1980000000\n"), std::string::npos);
  // Families with no reading (temperature) are left out, not printed empty.
  EXPECT_EQ(text.find("temperature"), std::string::npos);
  EXPECT_EQ(text.find("DCGM_"), std::string::npos);
}

TEST(ExpositionTest, DcgmNamingUsesDcgmNamesLabelsAndUnits) {
  const Snapshot s = Sample();
  Snapshot before = s;
  before.unix_nanos -= 2'000'000'000;  // 2 s earlier, 1000 bytes fewer
  before.gpus[0].nvlink_tx_bytes = 0;
  ExpositionContext c;
  c.hostname = "node-7";
  c.previous = &before;
  const std::string text = RenderPrometheus(s, Naming::kDcgm, c);
  CheckWellFormed(text);
  const std::string labels0 =
      "{gpu=\"0\",UUID=\"GPU-00000000\",pci_bus_id=\"00000000:10:00.0\",device=\"nvidia0\","
      "modelName=\"NVIDIA H200\",Hostname=\"node-7\"}";
  EXPECT_NE(text.find("DCGM_FI_DEV_GPU_UTIL" + labels0 + " 93\n"), std::string::npos) << text;
  EXPECT_NE(text.find("DCGM_FI_DEV_FB_USED" + labels0 + " 81920\n"), std::string::npos);  // MiB
  EXPECT_NE(text.find("DCGM_FI_DEV_FB_FREE" + labels0 + " 62464\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + labels0 + " 123456789\n"),
            std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_SM_CLOCK" + labels0 + " 1980\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_PROF_NVLINK_TX_BYTES" + labels0 + " 500\n"), std::string::npos);
  // Host families keep Seedance names.
  EXPECT_NE(text.find("seedance_cpu_seconds_total"), std::string::npos);
  EXPECT_EQ(text.find("seedance_gpu_"), std::string::npos);
}

TEST(ExpositionTest, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  Snapshot s = Sample();
  s.gpus[0].name = "evil\"\n{name}";
  const std::string text = RenderPrometheus(s, Naming::kSeedance, {});
  CheckWellFormed(text);
  EXPECT_NE(text.find("model=\"evil\\\"\\n{name}\""), std::string::npos);
}

TEST(ExpositionTest, SampleValuesAreShortAndReadBackExactly) {
  EXPECT_EQ(FormatSampleValue(39822.41), "39822.41");  // %.17g gave 39822.410000000003
  EXPECT_EQ(FormatSampleValue(0.1), "0.1");
  EXPECT_EQ(FormatSampleValue(1796144742.709), "1796144742.709");
  EXPECT_EQ(FormatSampleValue(25276510208), "25276510208");
  EXPECT_EQ(FormatSampleValue(-3), "-3");
  EXPECT_EQ(FormatSampleValue(1e300), "1e+300");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatSampleValue(HUGE_VAL), "+Inf");
  EXPECT_EQ(FormatSampleValue(-HUGE_VAL), "-Inf");
  // Any double reads back to itself (strtod as the reference reader), in at most 17 digits.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    uint64_t bits = rng();
    double x;
    std::memcpy(&x, &bits, sizeof x);
    if (!std::isfinite(x)) continue;
    const std::string text = FormatSampleValue(x);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), x) << text;
    EXPECT_LE(text.size(), 24u) << text;
  }
}

TEST(Naming, NamesRoundTripAndErrorsListThem) {
  for (Naming n : {Naming::kSeedance, Naming::kDcgm}) {
    EXPECT_EQ(*ParseNaming(NamingName(n), "--naming"), n);
  }
  auto bad = ParseNaming("DCGM", "--naming");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("seedance or dcgm"), std::string::npos);
}

}  // namespace
}  // namespace seedance::probe
