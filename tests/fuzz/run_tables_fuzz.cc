// Fuzz target (libFuzzer): the runs table reader (bench/plan/published_runs.csv's columns, what
// `optimize --calibrate` and `record_run` read and write) and the kernel table reader — and, for a
// table that parses, a calibration with its rows (at most 8, to keep each input quick), every
// row written back and read again, and the kernel curves fitted. Seeds in
// tests/fuzz/corpus/run_tables/ (the first byte picks the reader: odd runs, even kernels).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/calibration.h"
#include "seedance/plan/kernel_fit.h"
#include "seedance/plan/run_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.empty()) return 0;
  const std::string_view body = text.substr(1);
  const auto& catalog = seedance::cost::GpuCatalog::BuiltIn();
  namespace plan = seedance::plan;
  if (text[0] & 1) {
    auto records = plan::ParseRunTable(body, "runs.csv", catalog);
    if (!records.ok()) return 0;
    std::string again = plan::RunTableHeader();
    for (const plan::RunRecord& r : *records) {
      if (r.kind == plan::RunKind::kRun) again += plan::FormatRunRow(r);
    }
    (void)plan::ParseRunTable(again, "again.csv", catalog);
    std::vector<plan::FitRow> rows = plan::FitRows(*records, catalog);
    if (rows.size() > 8) rows.resize(8);
    if (!rows.empty()) (void)plan::Calibrate(rows, plan::BuiltInFit());
  } else {
    auto rows = plan::ParseKernelTable(body, "kernels.csv");
    if (rows.ok() && rows->size() <= 64) (void)plan::FitKernelCurves(*rows);
  }
  return 0;
}
