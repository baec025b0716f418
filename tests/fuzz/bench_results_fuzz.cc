// Fuzz target (libFuzzer): the benchmark results `cost compare` reads (Google Benchmark JSON,
// JSON samples, CSV samples), then the comparison of the file with itself. Built by the `asan`
// preset; .ci/run runs it from the seeds in tests/fuzz/corpus/bench_results/.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/cost/bench_compare.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto set = seedance::cost::ReadSamples(text, "results.json");
  if (!set.ok()) return 0;
  seedance::cost::CompareOptions o;
  o.resamples = 50;  // the statistics are not what is fuzzed; keep each input fast
  auto report = seedance::cost::CompareSamples(*set, *set, o);
  if (report.ok()) (void)seedance::base::DumpJson(*report);
  return 0;
}
