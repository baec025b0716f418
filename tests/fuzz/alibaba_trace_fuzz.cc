// Fuzz target (libFuzzer): the Alibaba 2023 node and pod list readers (the first byte picks which).
// Built by the `asan` preset (clang, ASan + UBSan); .ci/run runs it for a fixed time from the
// seeds in tests/fuzz/corpus/alibaba_trace/. A crash, a sanitizer report or a timeout fails CI.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/sched/readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.empty()) return 0;
  const std::string_view body = text.substr(1);
  if (text[0] & 1) {
    (void)seedance::sched::ReadAlibabaNodes(body, "nodes.csv");
  } else {
    (void)seedance::sched::ReadAlibabaPods(body, "pods.csv");
  }
  return 0;
}
