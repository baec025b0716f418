// The caching allocator's host fast path beside glibc malloc, jemalloc and
// mimalloc, in one process: (1) a malloc+free pair of one size, repeated;
// (2) the same replay of a lifetime file (every buffer allocated at `lower`,
// freed at `upper`), real memory. jemalloc and mimalloc are loaded with
// dlopen(RTLD_LOCAL) so that they do not replace glibc's malloc for the rest
// of the process; a missing library marks its benchmarks as skipped.
//
//   build/bench/allocator_bench [--benchmark_filter=...]
//   SEEDANCE_DATA_DIR selects the data sets (default ../shared/data).
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/mem/caching_allocator.h"
#include "seedance/mem/lifetime.h"

namespace seedance::mem {
namespace {

struct Api {
  void* (*alloc)(size_t) = nullptr;
  void (*release)(void*) = nullptr;
};

Api Load(const char* library, const char* alloc_name, const char* free_name) {
  Api api;
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return api;
  api.alloc = reinterpret_cast<void* (*)(size_t)>(dlsym(handle, alloc_name));
  api.release = reinterpret_cast<void (*)(void*)>(dlsym(handle, free_name));
  return api;
}

const Api& Jemalloc() {
  static const Api api = Load("libjemalloc.so.2", "malloc", "free");
  return api;
}
const Api& Mimalloc() {
  static const Api api = Load("libmimalloc.so.2", "mi_malloc", "mi_free");
  return api;
}
const Api& Glibc() {
  static const Api api{&std::malloc, &std::free};
  return api;
}

void BM_PairSeedance(benchmark::State& state) {
  CachingAllocator a(AllocatorPolicy::kSeedance, NewHostBackend());
  const size_t size = static_cast<size_t>(state.range(0));
  (void)a.Free(*a.Allocate(size));  // warm the cache: the pair below is the cached path
  for (auto _ : state) {
    void* p = *a.Allocate(size);
    benchmark::DoNotOptimize(p);
    (void)a.Free(p);
  }
}

// jemalloc cannot be dlopen'ed (its thread-local storage model needs it
// loaded at start-up): measure it with LD_PRELOAD and the *Glibc rows.
constexpr const char* kNotLoaded =
    "not loadable here; for jemalloc run with LD_PRELOAD=libjemalloc.so.2 and read the Glibc rows";

void PairWith(benchmark::State& state, const Api& api) {
  if (api.alloc == nullptr) {
    state.SkipWithError(kNotLoaded);
    return;
  }
  const size_t size = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = api.alloc(size);
    benchmark::DoNotOptimize(p);
    api.release(p);
  }
}
void BM_PairGlibc(benchmark::State& s) { PairWith(s, Glibc()); }
void BM_PairJemalloc(benchmark::State& s) { PairWith(s, Jemalloc()); }
void BM_PairMimalloc(benchmark::State& s) { PairWith(s, Mimalloc()); }

BENCHMARK(BM_PairSeedance)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);
BENCHMARK(BM_PairGlibc)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);
BENCHMARK(BM_PairJemalloc)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);
BENCHMARK(BM_PairMimalloc)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);

// A replay as a list of (buffer, is_alloc) events.
struct Trace {
  std::vector<size_t> sizes;
  std::vector<std::pair<size_t, bool>> events;
};

const Trace* LoadTrace(const std::string& relative) {
  static std::map<std::string, std::unique_ptr<Trace>> cache;
  auto& slot = cache[relative];
  if (slot) return slot.get();
  const char* dir = std::getenv("SEEDANCE_DATA_DIR");
  const std::string path = std::string(dir ? dir : "../shared/data") + "/" + relative;
  auto text = base::Env::Default()->ReadFile(path);
  if (!text.ok()) return nullptr;
  auto file = ParseLifetimeCsv(*text, path);
  if (!file.ok()) return nullptr;
  slot = std::make_unique<Trace>();
  for (const Buffer& b : file->buffers) slot->sizes.push_back(static_cast<size_t>(b.size));
  for (const LifetimeEvent& e : OrderedEvents(file->buffers)) {
    slot->events.emplace_back(e.index, e.is_alloc);
  }
  return slot.get();
}

void ReplayWith(benchmark::State& state, const std::string& trace_name,
                const std::function<void*(size_t)>& alloc,
                const std::function<void(void*)>& release) {
  const Trace* trace = LoadTrace(trace_name);
  if (trace == nullptr) {
    state.SkipWithError("data set not found");
    return;
  }
  std::vector<void*> ptrs(trace->sizes.size());
  for (auto _ : state) {
    for (const auto& [i, is_alloc] : trace->events) {
      if (is_alloc) {
        ptrs[i] = alloc(trace->sizes[i]);
      } else {
        release(ptrs[i]);
      }
    }
  }
  state.counters["ns_per_op"] = benchmark::Counter(
      static_cast<double>(trace->events.size()) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

const char* const kTraces[] = {"minimalloc/K.1048576.csv", "idealloc/resnet50.csv"};

void BM_ReplaySeedance(benchmark::State& state) {
  CachingAllocator a(AllocatorPolicy::kSeedance, NewHostBackend());
  ReplayWith(
      state, kTraces[state.range(0)], [&](size_t n) { return *a.Allocate(n); },
      [&](void* p) { (void)a.Free(p); });
}
void ReplayApi(benchmark::State& state, const Api& api) {
  if (api.alloc == nullptr) {
    state.SkipWithError(kNotLoaded);
    return;
  }
  ReplayWith(state, kTraces[state.range(0)], api.alloc, api.release);
}
void BM_ReplayGlibc(benchmark::State& s) { ReplayApi(s, Glibc()); }
void BM_ReplayJemalloc(benchmark::State& s) { ReplayApi(s, Jemalloc()); }
void BM_ReplayMimalloc(benchmark::State& s) { ReplayApi(s, Mimalloc()); }

BENCHMARK(BM_ReplaySeedance)->DenseRange(0, 1);
BENCHMARK(BM_ReplayGlibc)->DenseRange(0, 1);
BENCHMARK(BM_ReplayJemalloc)->DenseRange(0, 1);
BENCHMARK(BM_ReplayMimalloc)->DenseRange(0, 1);

}  // namespace
}  // namespace seedance::mem

BENCHMARK_MAIN();
