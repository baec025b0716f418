// The front door's own cost: parsing and validating a job spec, and the whole
// plan (evaluation of the stated layout, the search, reasons, Pareto front) for
// the default job and for a 1T-parameter model on 4,096 GPUs.
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

// Megatron-LM's 1T configuration (Narayanan et al. 2021, table 1: 128 layers, hidden 25,600,
// 160 heads, sequence 2,048) on 512 nodes of 8 H100 SXM; argument 0: dev profile, 1: prod.
void BM_Optimize1TOn4096Gpus(benchmark::State& state) {
  const cost::GpuCatalog& catalog = cost::GpuCatalog::BuiltIn();
  const std::string yaml =
      "name: gpt-1t\n"
      "model: {family: gpt, layers: 128, hidden_size: 25600, attention_heads: 160,\n"
      "        ffn_size: 102400, vocab_size: 51200, sequence_length: 2048}\n"
      "training: {global_batch: 4096, micro_batch: 1, precision: bf16}\n"
      "hardware: {gpu: H100-SXM, gpus_per_node: 8, nodes: 512}\n"
      "parallelism: {tensor: 8, pipeline: 64, zero_stage: 1}\n";
  OptimizeOptions options;
  options.profile = state.range(0) == 0 ? Profile::kDev : Profile::kProd;
  int64_t layouts = 0;
  for (auto _ : state) {
    auto report = OptimizeYaml(yaml, "gpt-1t.yaml", catalog, options);
    if (!report.ok()) {
      state.SkipWithError(report.status().ToString().c_str());
      return;
    }
    layouts = (*report)["search"]["layouts_evaluated"].get<int64_t>();
    benchmark::DoNotOptimize(report);
  }
  state.counters["layouts"] = static_cast<double>(layouts);
}
BENCHMARK(BM_Optimize1TOn4096Gpus)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace seedance::plan

BENCHMARK_MAIN();
