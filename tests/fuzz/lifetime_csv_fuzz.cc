// Fuzz target (libFuzzer): the lifetime/plan CSV reader, then the greedy planner and the
// independent checker on what it accepts. Built by the `asan` preset (clang, ASan + UBSan); .ci/run
// runs it for a fixed time from the seeds in tests/fuzz/corpus/lifetime_csv/. A crash, a sanitizer
// report or a timeout fails CI.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/mem/lifetime.h"
#include "seedance/mem/plan_checker.h"
#include "seedance/mem/planner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto file = seedance::mem::ParseLifetimeCsv(text, "fuzz.csv");
  if (!file.ok() || file->buffers.size() > 512) return 0;
  seedance::mem::PlanOptions options;
  options.algo = seedance::mem::PlanAlgo::kGreedy;
  auto plan = seedance::mem::PlanOffsets(file->buffers, options);
  if (!plan.ok()) return 0;
  // Every plan the planner returns must pass the checker.
  if (!seedance::mem::CheckPlan(file->buffers, plan->offsets).ok()) __builtin_trap();
  if (file->has_offsets) (void)seedance::mem::CheckPlan(file->buffers, file->offsets);
  return 0;
}
