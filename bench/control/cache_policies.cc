// Replacement policies of the tiered cache (issue 21 item 7) on synthetic access streams:
//   shuffled   --epochs epochs over --keys samples, each epoch a new random order (a DataLoader
//              with shuffle=True), capacities 10%, 25% and 50% of the dataset;
//   zipf-S     --accesses draws from Zipf(S) over --keys keys (S = 0.8, 1.0, 1.2), capacity 5%;
//   zipf+scan  zipf-1.0 with a one-time scan of --keys fresh keys every --accesses / 4 accesses.
//   public     with --trace-dir DIR: each DIR/*.lirs (LIRS text traces) and DIR/*.cache2k
//              (cache2k's binary traces), read by cache_traces.h, capacities 10% and 25% of the
//              trace's distinct keys (docs/benchmarks.md says where the traces come from).
// For each: the hit ratio of LRU, ARC, W-TinyLFU, Seedance's scan-aware policy and Belady's
// offline optimum. Then the time of one Access() of each online policy holding --latency-keys
// entries (10^6 by default) on a zipf-1.0 stream over twice as many keys: p50 and p99 over
// --latency-ops timed calls (steady_clock around each call, its own cost included). Last, the
// tiered cache's host-tier Get() (tiered_cache.h: the lock, the policy, the copy of a
// --record-bytes record) holding --latency-keys records, its state file in --shm-dir: the same
// stream, a miss followed by its Put as a data loader does; p50 and p99 of the gets host memory
// served, and of all gets.
//
//   build/bench/cache_policies [--keys N] [--epochs E] [--accesses A] [--latency-keys K]
//                              [--latency-ops O] [--record-bytes B] [--shm-dir DIR] [--seed S]
//                              [--trace-dir DIR]
// Prints one JSON document.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/control/cache_policy.h"
#include "seedance/control/cache_traces.h"
#include "seedance/control/tiered_cache.h"

namespace {

using seedance::base::Report;
using seedance::control::CacheKey;
using seedance::control::CachePolicy;

std::vector<std::unique_ptr<CachePolicy>> Online(size_t capacity) {
  std::vector<std::unique_ptr<CachePolicy>> p;
  p.push_back(seedance::control::NewLruPolicy(capacity));
  p.push_back(seedance::control::NewArcPolicy(capacity));
  p.push_back(seedance::control::NewWTinyLfuPolicy(capacity));
  p.push_back(std::make_unique<seedance::control::ScanAwarePolicy>(capacity));
  return p;
}

Report HitRatios(const std::vector<CacheKey>& trace, size_t capacity) {
  Report r = Report::object();
  r["capacity"] = static_cast<int64_t>(capacity);
  r["accesses"] = static_cast<int64_t>(trace.size());
  const auto n = static_cast<double>(trace.size());
  for (auto& p : Online(capacity)) {
    r[std::string(p->name())] = static_cast<double>(CountHits(*p, trace)) / n;
  }
  r["belady"] = static_cast<double>(seedance::control::BeladyHits(trace, capacity)) / n;
  return r;
}

Report Percentiles(std::vector<double> ns) {
  std::sort(ns.begin(), ns.end());
  Report r = Report::object();
  r["count"] = static_cast<int64_t>(ns.size());
  if (ns.empty()) return r;
  r["p50_ns"] = ns[ns.size() / 2];
  r["p99_ns"] = ns[ns.size() * 99 / 100];
  return r;
}

// The host tier's get at `records` entries, on `stream` (a miss is followed by its Put).
Report TieredGetLatency(size_t records, size_t record_bytes, const std::string& dir,
                        const std::vector<CacheKey>& stream) {
  seedance::control::TieredCacheOptions o;
  o.path = dir + "/seedance-bench-cache-" + std::to_string(getpid());
  o.record_bytes = record_bytes;
  o.tiers = {{"host", "", records}};
  auto created = seedance::control::TieredCache::Create(o);
  if (!created.ok()) {
    std::fprintf(stderr, "cache_policies: %s\n", created.status().ToString().c_str());
    std::exit(1);
  }
  auto& cache = *created.value();
  const std::string value(record_bytes, 'v');
  std::string out;
  for (CacheKey k = 0; k < records; ++k) (void)cache.Put(2 * records + k, value).value();
  std::vector<double> host_ns, all_ns;
  for (CacheKey k : stream) {
    const auto t0 = std::chrono::steady_clock::now();
    const int tier = cache.Get(k, &out).value();
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    all_ns.push_back(ns);
    if (tier == 0) host_ns.push_back(ns);
    if (tier < 0) (void)cache.Put(k, value).value();
  }
  Report r = Report::object();
  r["entries"] = static_cast<int64_t>(records);
  r["record_bytes"] = static_cast<int64_t>(record_bytes);
  r["host_hits"] = Percentiles(host_ns);
  r["all_gets"] = Percentiles(all_ns);
  (void)cache.Remove();
  return r;
}

std::string StringFlag(int argc, char** argv, std::string_view name, std::string fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (name == argv[i]) return argv[i + 1];
  }
  return fallback;
}

// Hit ratios on each public trace in `dir`.
Report PublicTraces(const std::string& dir) {
  auto* env = seedance::base::Env::Default();
  auto names = env->ListDirectory(dir);
  if (!names.ok()) {
    std::fprintf(stderr, "cache_policies: %s\n", names.status().ToString().c_str());
    std::exit(1);
  }
  std::sort(names->begin(), names->end());
  Report rows = Report::array();
  for (const std::string& name : *names) {
    const bool lirs = name.ends_with(".lirs");
    if (!lirs && !name.ends_with(".cache2k")) continue;
    const std::string path = dir + "/" + name;
    auto bytes = env->ReadFile(path);
    auto trace = bytes.ok() ? (lirs ? seedance::control::ParseLirsTrace(*bytes, path)
                                    : seedance::control::ParseCache2kTrace(*bytes, path))
                            : seedance::base::StatusOr<std::vector<CacheKey>>(bytes.status());
    if (!trace.ok()) {
      std::fprintf(stderr, "cache_policies: %s\n", trace.status().ToString().c_str());
      std::exit(1);
    }
    std::vector<CacheKey> distinct = *trace;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (double share : {0.1, 0.25}) {
      Report r = HitRatios(
          *trace,
          std::max<size_t>(1, static_cast<size_t>(share * static_cast<double>(distinct.size()))));
      r["trace"] = name;
      r["distinct"] = static_cast<int64_t>(distinct.size());
      rows.push_back(r);
    }
  }
  return rows;
}

int64_t Flag(int argc, char** argv, std::string_view name, int64_t fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (name == argv[i]) {
      char* end = nullptr;
      const long long v = std::strtoll(argv[i + 1], &end, 10);
      if (end == argv[i + 1] || *end != '\0' || v <= 0) {
        std::fprintf(stderr, "cache_policies: %s needs a positive integer, got '%s'\n", argv[i],
                     argv[i + 1]);
        std::exit(2);
      }
      return v;
    }
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const auto keys = static_cast<CacheKey>(Flag(argc, argv, "--keys", 100000));
  const int epochs = static_cast<int>(Flag(argc, argv, "--epochs", 10));
  const auto accesses = static_cast<size_t>(Flag(argc, argv, "--accesses", 2000000));
  const auto latency_keys = static_cast<size_t>(Flag(argc, argv, "--latency-keys", 1000000));
  const auto latency_ops = static_cast<size_t>(Flag(argc, argv, "--latency-ops", 1000000));
  std::mt19937_64 rng(static_cast<uint64_t>(Flag(argc, argv, "--seed", 1)));

  Report out = Report::object();
  out["keys"] = static_cast<int64_t>(keys);
  Report shuffled = Report::array();
  const auto epochs_trace = seedance::control::ShuffledEpochsTrace(keys, epochs, rng);
  for (double share : {0.1, 0.25, 0.5}) {
    shuffled.push_back(HitRatios(epochs_trace, static_cast<size_t>(share * keys)));
  }
  out["shuffled"] = shuffled;
  for (double s : {0.8, 1.0, 1.2}) {
    char name[32];
    std::snprintf(name, sizeof name, "zipf-%.1f", s);
    out[name] = HitRatios(seedance::control::ZipfTrace(accesses, keys, s, rng), keys / 20);
  }
  auto mixed = seedance::control::ZipfTrace(accesses, keys, 1.0, rng);
  std::vector<CacheKey> with_scans;
  CacheKey fresh = keys;
  for (size_t i = 0; i < mixed.size(); ++i) {
    if (i % (accesses / 4) == accesses / 8) {
      for (CacheKey j = 0; j < keys; ++j) with_scans.push_back(fresh++);
    }
    with_scans.push_back(mixed[i]);
  }
  out["zipf-1.0+scan"] = HitRatios(with_scans, keys / 20);

  Report latency = Report::object();
  latency["entries"] = static_cast<int64_t>(latency_keys);
  const auto stream = seedance::control::ZipfTrace(latency_ops, 2 * latency_keys, 1.0, rng);
  for (auto& p : Online(latency_keys)) {
    for (CacheKey k = 0; k < latency_keys; ++k) p->Access(2 * latency_keys + k);  // fill it
    std::vector<double> ns(stream.size());
    for (size_t i = 0; i < stream.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      p->Access(stream[i]);
      ns[i] =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    }
    latency[std::string(p->name())] = Percentiles(std::move(ns));
  }
  out["access_latency"] = latency;
  if (const std::string dir = StringFlag(argc, argv, "--trace-dir", ""); !dir.empty()) {
    out["public"] = PublicTraces(dir);
  }
  out["tiered_get_latency"] =
      TieredGetLatency(latency_keys, static_cast<size_t>(Flag(argc, argv, "--record-bytes", 256)),
                       StringFlag(argc, argv, "--shm-dir", "/dev/shm"), stream);
  std::printf("%s\n", seedance::base::DumpJson(out, 2).c_str());
  return 0;
}
