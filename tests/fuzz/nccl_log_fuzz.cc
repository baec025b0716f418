// Fuzz target (libFuzzer): the NCCL_DEBUG=INFO log reader and the JSON rendering of its report.
// Built by the `asan` preset (clang, ASan + UBSan); .ci/run runs it for a fixed time from the
// seeds in tests/fuzz/corpus/nccl_log/. A crash, a sanitizer report or a timeout fails CI.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/comm/nccl_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto report = seedance::comm::AnalyzeNcclLog(text, "nccl.log");
  if (report.ok()) (void)seedance::base::DumpJson(*report);
  return 0;
}
