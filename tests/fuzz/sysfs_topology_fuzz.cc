// Fuzz target (libFuzzer): node discovery over a fake /sys whose NUMA and CPU files hold the input.
// Built by the `asan` preset (clang, ASan + UBSan); .ci/run runs it for a fixed time from the
// seeds in tests/fuzz/corpus/sysfs_topology/. A crash, a sanitizer report or a timeout fails CI.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/base/fake_env.h"
#include "seedance/base/report.h"
#include "seedance/topo/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The input is split at NUL bytes into the contents of a few sysfs files.
  static const char* const kFiles[] = {
      "/sys/devices/system/node/online",         "/sys/devices/system/node/node0/cpulist",
      "/sys/devices/system/node/node0/distance", "/sys/devices/system/node/node0/meminfo",
      "/sys/devices/system/cpu/online",          "/sys/devices/system/node/node1/cpulist"};
  seedance::base::FakeEnv env;
  size_t start = 0;
  for (const char* path : kFiles) {
    const size_t end = std::min(text.find('\0', start), text.size());
    env.SetFile(path, std::string(text.substr(std::min(start, text.size()),
                                              end - std::min(start, text.size()))));
    start = end + 1;
  }
  const seedance::topo::Topology t = seedance::topo::DiscoverTopology(env);
  if (t.nodes.size() > static_cast<size_t>(seedance::topo::kMaxNumaNodes)) __builtin_trap();
  (void)seedance::base::DumpJson(seedance::topo::TopologyToReport(t));
  (void)seedance::topo::ParseCpuList(text, "list");
  return 0;
}
