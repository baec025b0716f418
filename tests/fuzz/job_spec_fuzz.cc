// Fuzz target (libFuzzer): the job-spec YAML reader against the built-in catalog — and, for a
// spec that parses, the whole plan (memory and time models, the search, reasons, the does-not-fit
// answer) — and the catalog-override YAML reader. Built by the `asan` preset (clang, ASan + UBSan);
// .ci/run runs it for a fixed time from the seeds in tests/fuzz/corpus/job_spec/. A crash, a
// sanitizer report or a timeout fails CI.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/optimize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.empty()) return 0;
  const std::string_view body = text.substr(1);
  const auto& catalog = seedance::cost::GpuCatalog::BuiltIn();
  if (text[0] & 1) {
    auto spec = seedance::plan::ParseJobSpec(body, "job.yaml", catalog);
    if (spec.ok()) {
      (void)seedance::base::DumpJson(seedance::plan::JobSpecToReport(*spec));
      auto report = seedance::plan::Optimize(*spec, catalog, {});
      if (report.ok()) (void)seedance::base::DumpJson(*report);
    }
  } else {
    (void)seedance::cost::GpuCatalog::WithOverrides(catalog, body, "catalog.yaml");
  }
  return 0;
}
