// Fuzz target (libFuzzer): the saved `nvidia-smi topo -m` reader; what it accepts is square and
// symmetric. Built by the `asan` preset (clang, ASan + UBSan); .ci/run runs it for a fixed time
// from the seeds in tests/fuzz/corpus/smi_topo/. A crash, a sanitizer report or a timeout fails CI.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/topo/matrix.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = seedance::topo::ParseNvidiaSmiTopo(std::string(text), "topo.txt");
  if (!m.ok()) return 0;
  for (size_t i = 0; i < m->size(); ++i) {
    if ((*m)[i].size() != m->size()) __builtin_trap();
    for (size_t j = 0; j < i; ++j) {
      if ((*m)[i][j] != (*m)[j][i]) __builtin_trap();
    }
  }
  return 0;
}
