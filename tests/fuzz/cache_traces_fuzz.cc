// Fuzz target (libFuzzer): the public cache-trace readers of control/cache_traces.h — LIRS text
// and cache2k's big-endian integers; the first byte picks. Contract on every input: an accepted
// LIRS text renders to the canonical form, which reads back to the same keys; an accepted
// cache2k input renders back to the same bytes. Built by the `asan` preset; .ci/run runs it from
// the seeds in tests/fuzz/corpus/cache_traces/.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/control/cache_traces.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto keys = seedance::control::ParseLirsTrace(in, "fuzz");
    if (keys.ok()) {
      auto again = seedance::control::ParseLirsTrace(seedance::control::RenderLirsTrace(*keys), "");
      if (!again.ok() || *again != *keys) __builtin_trap();
    }
  } else {
    auto keys = seedance::control::ParseCache2kTrace(in, "fuzz");
    if (keys.ok() && seedance::control::RenderCache2kTrace(*keys) != in) __builtin_trap();
  }
  return 0;
}
