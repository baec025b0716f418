// Replacement policies of the tiered cache (issue 21 item 7) on synthetic access streams:
//   shuffled   --epochs epochs over --keys samples, each epoch a new random order (a DataLoader
//              with shuffle=True), capacities 10%, 25% and 50% of the dataset;
//   zipf-S     --accesses draws from Zipf(S) over --keys keys (S = 0.8, 1.0, 1.2), capacity 5%;
//   zipf+scan  zipf-1.0 with a one-time scan of --keys fresh keys every --accesses / 4 accesses.
// For each: the hit ratio of LRU, ARC, W-TinyLFU, Seedance's scan-aware policy and Belady's
// offline optimum. Then the time of one Access() of each online policy holding --latency-keys
// entries (10^6 by default) on a zipf-1.0 stream over twice as many keys: p50 and p99 over
// --latency-ops timed calls (steady_clock around each call, its own cost included).
//
//   build/bench/cache_policies [--keys N] [--epochs E] [--accesses A] [--latency-keys K]
//                              [--latency-ops O] [--seed S]
// Prints one JSON document.
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
#include <vector>

#include "seedance/base/report.h"
#include "seedance/control/cache_policy.h"
#include "seedance/control/cache_traces.h"

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
    std::sort(ns.begin(), ns.end());
    Report r = Report::object();
    r["p50_ns"] = ns[ns.size() / 2];
    r["p99_ns"] = ns[ns.size() * 99 / 100];
    latency[std::string(p->name())] = r;
  }
  out["access_latency"] = latency;
  std::printf("%s\n", seedance::base::DumpJson(out, 2).c_str());
  return 0;
}
