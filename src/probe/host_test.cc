#include "seedance/probe/host.h"

#include <gtest/gtest.h>

#include "seedance/probe/probe.h"
#include "src/probe/fake_proc_for_test.h"

namespace seedance::probe {
namespace {

TEST(HostTest, ReadsProcfsCounters) {
  base::FakeEnv env;
  testing::ProcAt0(env);
  auto r = ReadHost(env, {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->notes.empty()) << r->notes.front();
  EXPECT_EQ(r->cpu_count, 2);
  EXPECT_DOUBLE_EQ(r->cpu_seconds[0], 10.0);  // 1000 ticks / 100
  EXPECT_DOUBLE_EQ(r->cpu_seconds[4], 1.0);   // iowait
  EXPECT_EQ(*r->memory_total_bytes, 16000000ull * 1024);
  EXPECT_EQ(*r->memory_available_bytes, 4000000ull * 1024);
  // Whole disks only: sda, not sda1 or loop0.
  ASSERT_EQ(r->disks.size(), 1u);
  EXPECT_EQ(r->disks.at("sda").read_bytes, 2000u * 512);
  EXPECT_EQ(r->disks.at("sda").written_bytes, 4000u * 512);
  EXPECT_EQ(r->disks.at("sda").io_time_ms, 1000u);
  ASSERT_EQ(r->nets.size(), 1u);  // lo skipped
  EXPECT_EQ(r->nets.at("eth0").receive_bytes, 1000000u);
  EXPECT_EQ(r->nets.at("eth0").transmit_bytes, 2000000u);
}

TEST(HostTest, TaskCountersAndMissingTask) {
  base::FakeEnv env;
  testing::ProcAt0(env);
  env.SetFile("/proc/77/stat",
              "77 (my (odd) name) R 1 77 77 0 -1 0 0 0 0 0 250 150 0 0 20 0 12 0 1 0 0");
  env.SetFile("/proc/77/statm", "1000 300 10 1 0 100 0\n");
  HostOptions o;
  o.task_pid = 77;
  auto r = ReadHost(env, o);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->task.has_value());
  EXPECT_DOUBLE_EQ(r->task->cpu_seconds, 4.0);  // (250 + 150) / 100
  EXPECT_EQ(r->task->resident_bytes, 300u * 4096);
  EXPECT_EQ(r->task->threads, 12);
  o.task_pid = 78;
  auto missing = ReadHost(env, o);
  EXPECT_EQ(missing.status().code(), base::StatusCode::kNotFound);
}

TEST(HostTest, GarbageFilesGiveNotesNotCrashes) {
  base::FakeEnv env;
  env.SetFile("/proc/stat", "nonsense\n");
  env.SetFile("/proc/meminfo", "\x01\x02");
  env.SetFile("/proc/net/dev", "eth0: 1 2\n");
  env.SetFile("/proc/diskstats", "8 0\n");
  auto r = ReadHost(env, {});
  ASSERT_TRUE(r.ok());
  EXPECT_GE(r->notes.size(), 3u);
  EXPECT_TRUE(r->nets.empty());
  EXPECT_TRUE(r->disks.empty());
}

TEST(WindowTest, RatesOverOneSecond) {
  base::FakeEnv env;
  testing::ProcAt0(env);
  env.SetFile("/sys/class/net/eth0/operstate", "up\n");
  env.SetFile("/sys/class/net/eth0/speed", "10000\n");  // 10 Gb/s = 1.25e9 B/s
  env.SetFile("/sys/class/net/eth0/device/vendor", "0x1af4\n");
  Probe probe(env, nullptr, {});
  auto a = probe.Read();
  env.AdvanceClock(std::chrono::seconds(1));
  testing::ProcAt1(env);
  auto b = probe.Read();
  ASSERT_TRUE(a.ok() && b.ok());
  std::map<std::string, double> v;
  for (const auto& x : WindowValues(probe, *a, *b)) v[x.metric] = x.value;
  // 200 ticks: busy = 200 - idle 90 - iowait 30 = 80 -> 40 %.
  EXPECT_NEAR(v["cpu.util"], 40, 1e-9);
  EXPECT_NEAR(v["cpu.iowait"], 15, 1e-9);
  EXPECT_NEAR(v["cpu.user"], 25, 1e-9);
  EXPECT_NEAR(v["cpu.system"], 15, 1e-9);
  EXPECT_DOUBLE_EQ(v["mem.used"], 87.5);  // 1 - 2,000,000 / 16,000,000
  EXPECT_DOUBLE_EQ(v["disk.read_bytes"], 1000.0 * 512);
  EXPECT_DOUBLE_EQ(v["disk.write_bytes"], 2000.0 * 512);
  EXPECT_DOUBLE_EQ(v["disk.util"], 50);  // 500 ms busy in 1 s
  EXPECT_DOUBLE_EQ(v["net.in_bytes"], 125e6);
  EXPECT_DOUBLE_EQ(v["net.out_bytes"], 250e6);
  EXPECT_DOUBLE_EQ(v["net.share"], 20);  // 250e6 / 1.25e9
  // Filters keep a prefix or an exact name.
  auto only = WindowValues(probe, *a, *b, {"net.out_bytes", "cpu"});
  for (const auto& x : only) {
    EXPECT_TRUE(x.metric == "net.out_bytes" || x.metric.rfind("cpu.", 0) == 0) << x.metric;
  }
  EXPECT_EQ(only.size(), 6u);
}

// RAPL: a two-package server with DRAM subzones; package 1's counter wraps during the window.
// Watts = microjoules / 1e6 / seconds; the total is both packages and both DRAM zones (the
// core subzone is inside its package and not added again).
TEST(RaplTest, ZonePowerAcrossAWrapAndTheTotal) {
  base::FakeEnv env;
  testing::ProcAt0(env);
  auto zone = [&](const std::string& dir, const char* name, uint64_t uj, uint64_t range) {
    const std::string path = "/sys/class/powercap/" + dir;
    env.SetFile(path + "/name", std::string(name) + "\n");
    env.SetFile(path + "/energy_uj", std::to_string(uj) + "\n");
    env.SetFile(path + "/max_energy_range_uj", std::to_string(range) + "\n");
  };
  zone("intel-rapl:0", "package-0", 1'000'000'000, 262'143'328'850);
  zone("intel-rapl:0:0", "core", 500'000'000, 262'143'328'850);
  zone("intel-rapl:0:1", "dram", 200'000'000, 65'712'999'613);
  zone("intel-rapl:1", "package-1", 262'000'000'000, 262'143'328'850);
  zone("intel-rapl:1:0", "dram", 300'000'000, 65'712'999'613);
  env.SetFile("/sys/class/powercap/intel-rapl/enabled", "1\n");  // the control type: skipped
  Probe probe(env, nullptr, {});
  auto a = probe.Read();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host.rapl.size(), 5u);
  EXPECT_EQ(RaplTotalZones(a->host.rapl),
            (std::vector<std::string>{"intel-rapl:0", "intel-rapl:0:1", "intel-rapl:1",
                                      "intel-rapl:1:0"}));
  env.AdvanceClock(std::chrono::seconds(2));
  testing::ProcAt1(env);
  zone("intel-rapl:0", "package-0", 1'400'000'000, 262'143'328'850);  // +400 J: 200 W
  zone("intel-rapl:0:0", "core", 800'000'000, 262'143'328'850);       // +300 J: 150 W
  zone("intel-rapl:0:1", "dram", 240'000'000, 65'712'999'613);        // +40 J: 20 W
  // Wrapped: (262,143,328,850 - 262,000,000,000) + 156,671,150 = 300,000,000 uJ: 150 W.
  zone("intel-rapl:1", "package-1", 156'671'150, 262'143'328'850);
  zone("intel-rapl:1:0", "dram", 330'000'000, 65'712'999'613);  // +30 J: 15 W
  auto b = probe.Read();
  ASSERT_TRUE(b.ok());
  std::map<std::string, double> zone_watts;
  double total = -1;
  for (const auto& v : WindowValues(probe, *a, *b)) {
    if (v.metric == "host.power") zone_watts[v.labels[0].second] = v.value;
    if (v.metric == "host.power_total") total = v.value;
  }
  EXPECT_NEAR(zone_watts["intel-rapl:0"], 200, 1e-9);
  EXPECT_NEAR(zone_watts["intel-rapl:0:0"], 150, 1e-9);
  EXPECT_NEAR(zone_watts["intel-rapl:1"], 150, 1e-9);
  EXPECT_NEAR(total, 200 + 20 + 150 + 15, 1e-9);
  // The sample for the power fit: RAPL's total with the window's CPU utilization (40 %).
  const auto row = PowerSampleOf(WindowValues(probe, *a, *b), *b);
  ASSERT_TRUE(row.has_value());
  EXPECT_NEAR(row->watts, 385, 1e-9);
  EXPECT_NEAR(row->cpu_utilization_pct, 40, 1e-9);
  EXPECT_FALSE(row->has_gpus);
  EXPECT_EQ(PowerSamplesCsv({*row}), "watts,cpu_utilization_pct\n385,40\n");
}

TEST(RaplTest, PsysAloneCountsAndUnreadableEnergyIsANote) {
  base::FakeEnv env;
  testing::ProcAt0(env);
  env.SetFile("/sys/class/powercap/intel-rapl:0/name", "package-0\n");
  env.SetFile("/sys/class/powercap/intel-rapl:0/energy_uj", "100\n");
  env.SetFile("/sys/class/powercap/intel-rapl:1/name", "psys\n");
  env.SetFile("/sys/class/powercap/intel-rapl:1/energy_uj", "100\n");
  env.SetFile("/sys/class/powercap/intel-rapl:2/name", "package-1\n");  // no energy_uj
  auto r = ReadHost(env, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(RaplTotalZones(r->rapl), (std::vector<std::string>{"intel-rapl:1"}));
  bool noted = false;
  for (const auto& n : r->notes) noted = noted || n.find("intel-rapl:2/energy_uj") != n.npos;
  EXPECT_TRUE(noted);
  // Without powercap there is nothing to read and nothing to note.
  base::FakeEnv bare;
  testing::ProcAt0(bare);
  auto none = ReadHost(bare, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->rapl.empty());
  for (const auto& n : none->notes) EXPECT_EQ(n.find("powercap"), n.npos) << n;
}

}  // namespace
}  // namespace seedance::probe
