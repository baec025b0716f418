// The front door's own cost: parsing and validating a job spec, and building
// the optimize report for it (no engine sections yet).
#include <benchmark/benchmark.h>

#include "seedance/plan/optimize.h"

namespace seedance::plan {
namespace {

void BM_ParseDefaultJob(benchmark::State& state) {
  const cost::GpuCatalog& catalog = cost::GpuCatalog::BuiltIn();
  for (auto _ : state) {
    auto spec = ParseJobSpec(DefaultJobYaml(), "default", catalog);
    benchmark::DoNotOptimize(spec);
  }
}
BENCHMARK(BM_ParseDefaultJob);

void BM_OptimizeDefaultJob(benchmark::State& state) {
  const cost::GpuCatalog& catalog = cost::GpuCatalog::BuiltIn();
  for (auto _ : state) {
    auto report = OptimizeYaml(DefaultJobYaml(), "default", catalog, {});
    benchmark::DoNotOptimize(report);
  }
}
BENCHMARK(BM_OptimizeDefaultJob);

}  // namespace
}  // namespace seedance::plan

BENCHMARK_MAIN();
