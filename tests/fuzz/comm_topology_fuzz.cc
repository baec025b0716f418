// Fuzz target (libFuzzer): the cluster topology YAML of `comm advise --topology`, then the advisor.
// Built by the `asan` preset (clang, ASan + UBSan); .ci/run runs it for a fixed time from the
// seeds in tests/fuzz/corpus/comm_topology/. A crash, a sanitizer report or a timeout fails CI.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/comm/nccl_advisor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto topology = seedance::comm::ParseTopologyYaml(text, "topology.yaml");
  if (!topology.ok()) return 0;
  (void)seedance::base::DumpJson(
      seedance::comm::AdviceToReport(seedance::comm::AdviseNccl(*topology)));
  return 0;
}
