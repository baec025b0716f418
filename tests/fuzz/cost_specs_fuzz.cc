// Fuzz target (libFuzzer): the YAML inputs of `cost tco|roi|power|breakdown` (the first byte
// picks the verb, the rest is the file) and `cost power-fit`'s samples CSV, each turned into its
// report. Built by the `asan` preset; .ci/run runs it from tests/fuzz/corpus/cost_specs/.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/cost/model_reports.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto& catalog = seedance::cost::GpuCatalog::BuiltIn();
  seedance::base::StatusOr<seedance::base::Report> r = seedance::base::InternalError("none");
  switch (data[0] % 5) {
    case 0:
      r = seedance::cost::TcoYamlReport(text, "tco.yaml", catalog);
      break;
    case 1:
      r = seedance::cost::RoiYamlReport(text, "roi.yaml", catalog);
      break;
    case 2:
      r = seedance::cost::PowerYamlReport(text, "power.yaml", catalog);
      break;
    case 3:
      r = seedance::cost::BreakdownYamlReport(text, "run.yaml", catalog);
      break;
    default:
      r = seedance::cost::PowerFitCsvReport(text, "samples.csv");
  }
  if (r.ok()) (void)seedance::base::DumpJson(*r);
  return 0;
}
