// The Pareto front (feature COST-4): the O(n log n) sweep at up to 10^6 points against the
// O(n^2) definition at up to 10^4, in one program. Objectives: throughput (max), memory (min),
// power (min). Points are uniform in the unit cube (a front of O(log^2 n) points) or on a
// trade-off surface, throughput = (memory + power) / 2 plus 1% noise, where more throughput costs
// memory and power (a large front: the sweep's worst case).
//
//   build/bench/pareto_bench --benchmark_repetitions=9
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "seedance/cost/pareto.h"

namespace {

using seedance::cost::Direction;

std::vector<double> Points(size_t n, bool anti_correlated) {
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> p(n * 3);
  for (size_t i = 0; i < n; ++i) {
    double x = u(gen), y = u(gen), z = u(gen);
    if (anti_correlated) x = (y + z) / 2 + 0.01 * u(gen);
    p[i * 3] = x, p[i * 3 + 1] = y, p[i * 3 + 2] = z;
  }
  return p;
}

// throughput up, memory down, power down
const Direction kDirs[] = {Direction::kMax, Direction::kMin, Direction::kMin};

void BM_Sweep(benchmark::State& state) {
  const auto p = Points(static_cast<size_t>(state.range(0)), state.range(1) != 0);
  size_t front = 0;
  for (auto _ : state) {
    auto f = seedance::cost::ParetoFront(p, kDirs);
    front = f->size();
    benchmark::DoNotOptimize(f);
  }
  state.counters["front"] = static_cast<double>(front);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_Quadratic(benchmark::State& state) {
  const auto p = Points(static_cast<size_t>(state.range(0)), state.range(1) != 0);
  for (auto _ : state) {
    auto f = seedance::cost::ParetoFrontQuadratic(p, kDirs);
    benchmark::DoNotOptimize(f);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_Sweep)
    ->ArgNames({"n", "anti"})
    ->Args({10'000, 0})
    ->Args({10'000, 1})
    ->Args({1'000'000, 0})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Quadratic)
    ->ArgNames({"n", "anti"})
    ->Args({10'000, 0})
    ->Args({10'000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
