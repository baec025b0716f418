// FGD's expected fragmentation F_n(M) of node states (docs/design/sched.md),
// memoised by node shape: shared by the FGD and Seedance policies and the
// simulator's fragmentation metric. Private to seedance::sched.
//
// Thread safety: the memo is mutable and unsynchronised; one cache per run.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "seedance/sched/cluster.h"
#include "seedance/sched/policy.h"

namespace seedance::sched {

class FragmentationCache {
 public:
  explicit FragmentationCache(std::vector<PodClass> classes) : classes_(std::move(classes)) {}

  // F_n(M) of node `node` as it is now.
  double Current(const Cluster& cluster, int node) const;
  // F after placing `pod` on `gpus` of `node`, minus F now (milli-GPU).
  double Increase(const Cluster& cluster, const Pod& pod, int node,
                  std::span<const int> gpus) const;
  // FGD's score of placing `pod` on candidate `c` (docs/design/sched.md):
  // floor(100 sigma(-(increase + extra_cost) / 1000)). For a share every GPU
  // it fits on is tried (one per distinct milli left, in index order) and the
  // first best is written to c.gpus; other pods keep c.gpus.
  void FgdScore(const Cluster& cluster, const Pod& pod, Candidate& c, double extra_cost = 0) const;

 private:
  static constexpr size_t kMaxMemoGpus = 8;
  struct Key {  // a node state as F sees it: model, CPU left, sorted milli left
    int32_t model = 0;
    int32_t gpus = 0;
    int64_t cpu = 0;
    std::array<int16_t, kMaxMemoGpus> left{};
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  int ModelId(const std::string& model) const;
  double Frag(int model, const std::string& model_name, int64_t cpu, std::span<const int> left,
              std::span<const int> changed, int milli) const;

  std::vector<PodClass> classes_;
  mutable std::unordered_map<std::string, int> model_ids_;
  mutable std::unordered_map<Key, double, KeyHash> memo_;
};

}  // namespace seedance::sched
