#include "seedance/sched/policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

namespace seedance::sched {
namespace {

class RandomPolicy final : public Policy {
 public:
  std::string_view name() const override { return "random"; }
  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64& rng) const override {
    for (auto& c : feasible) c.score = 0;
    if (feasible.empty()) return;
    Candidate& chosen = feasible[rng() % feasible.size()];
    chosen.score = 100;
    // The simulator runs this baseline with random GPU selection: a share
    // goes to a GPU chosen uniformly among those it fits on.
    if (pod.num_gpu == 1 && pod.gpu_milli < 1000) {
      const NodeState& s = cluster.state(chosen.node);
      int seen = 0;
      for (int i = 0; i < static_cast<int>(s.gpu_left.size()); ++i) {
        if (s.gpu_left[static_cast<size_t>(i)] >= pod.gpu_milli && rng() % ++seen == 0) {
          chosen.gpus = {i};
        }
      }
    }
  }
};

// Min-max normalisation to 0..100 in integers; equal scores all become 100.
void MinMaxNormalise(std::vector<Candidate>& cs) {
  if (cs.empty()) return;
  int64_t lo = cs[0].score, hi = cs[0].score;
  for (const auto& c : cs) {
    lo = std::min(lo, c.score);
    hi = std::max(hi, c.score);
  }
  for (auto& c : cs) c.score = hi == lo ? 100 : (c.score - lo) * 100 / (hi - lo);
}

class BestFitPolicy final : public Policy {
 public:
  std::string_view name() const override { return "bestfit"; }
  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    for (auto& c : feasible) {
      const NodeState& s = cluster.state(c.node);
      const double cpu = static_cast<double>(s.cpu_left - pod.cpu_milli) / 128000.0;
      const double gpu = static_cast<double>(s.gpu_left_total() - pod.gpu_demand_milli()) / 8000.0;
      c.score = static_cast<int64_t>((1.0 - 0.5 * cpu - 0.5 * gpu) * 100.0);
    }
    MinMaxNormalise(feasible);
  }
};

// Max-normalisation: score * 100 / max (integer), as the simulator's "norm max".
void MaxNormalise(std::vector<Candidate>& cs) {
  int64_t hi = 0;
  for (const auto& c : cs) hi = std::max(hi, c.score);
  if (hi <= 0) return;
  for (auto& c : cs) c.score = c.score * 100 / hi;
}

class DotProductPolicy final : public Policy {
 public:
  std::string_view name() const override { return "dotprod"; }
  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    const double req_cpu = static_cast<double>(pod.cpu_milli) / 128000.0;
    const double req_gpu = static_cast<double>(pod.gpu_demand_milli()) / 8000.0;
    for (auto& c : feasible) {
      const NodeState& s = cluster.state(c.node);
      const double free_cpu = static_cast<double>(s.cpu_left) / 128000.0;
      const double free_gpu = static_cast<double>(s.gpu_left_total()) / 8000.0;
      // The larger the dot product of free and requested, the lower the score.
      const double dot = free_cpu * req_cpu + free_gpu * req_gpu;
      c.score = static_cast<int64_t>((1.0 - dot / 2.0) * 100.0);
    }
    MaxNormalise(feasible);
  }
};

class GpuPackingPolicy final : public Policy {
 public:
  std::string_view name() const override { return "gpupacking"; }
  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    for (auto& c : feasible) {
      if (pod.num_gpu == 0) {
        c.score = 0;  // CPU-only pods: no preference
        continue;
      }
      const NodeState& s = cluster.state(c.node);
      const int free = s.full_free_gpus();
      const int n = static_cast<int>(s.gpu_left.size());
      if (free == n) {  // a completely idle node
        c.score = std::max(33 - free, free);
        continue;
      }
      if (pod.gpu_milli < 1000) {
        // A share on an already used GPU: the fullest one it fits on.
        int best = -1;
        for (int i = 0; i < n; ++i) {
          const int left = s.gpu_left[static_cast<size_t>(i)];
          if (left < 1000 && left >= pod.gpu_milli &&
              (best < 0 || left < s.gpu_left[static_cast<size_t>(best)])) {
            best = i;
          }
        }
        if (best >= 0) {
          // 100 - (free % of the GPU used) / 10
          c.score = 100 - (s.gpu_left[static_cast<size_t>(best)] * 100 / 1000) / 10;
          c.gpus = {best};
          continue;
        }
      }
      // Fully free GPUs on a partly used node: 50 - the fully free GPUs it uses.
      c.score = 50 - pod.num_gpu;
    }
  }
};

class FgdPolicy final : public Policy {
 public:
  explicit FgdPolicy(std::vector<PodClass> classes) : classes_(std::move(classes)) {}
  std::string_view name() const override { return "fgd"; }

  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    for (auto& c : feasible) {
      const Node& node = cluster.nodes()[static_cast<size_t>(c.node)];
      const NodeState& s = cluster.state(c.node);
      const int model = ModelId(node.gpu_model);
      const double before = Frag(model, node.gpu_model, s.cpu_left, s.gpu_left, -1, 0);
      const int64_t cpu_after = s.cpu_left - pod.cpu_milli;
      auto score_of = [&](std::span<const int> gpus) {
        double after;
        if (gpus.size() == 1) {
          after = Frag(model, node.gpu_model, cpu_after, s.gpu_left, gpus[0], pod.gpu_milli);
        } else {
          std::vector<int> left = s.gpu_left;
          for (int g : gpus) left[static_cast<size_t>(g)] -= pod.gpu_milli;
          after = Frag(model, node.gpu_model, cpu_after, left, -1, 0);
        }
        const double delta = before - after;
        return static_cast<int64_t>(std::floor(100.0 / (1.0 + std::exp(-delta / 1000.0))));
      };
      if (pod.num_gpu == 1 && pod.gpu_milli < 1000) {
        // Try every GPU the share fits on; GPUs with equal milli left give equal scores.
        int64_t best = -1;
        int best_gpu = -1, last_left = -1;
        for (int i = 0; i < static_cast<int>(s.gpu_left.size()); ++i) {
          const int left = s.gpu_left[static_cast<size_t>(i)];
          if (left < pod.gpu_milli || left == last_left) continue;
          last_left = left;
          const int one[1] = {i};
          const int64_t sc = score_of(one);
          if (sc > best) {
            best = sc;
            best_gpu = i;
          }
        }
        c.score = best;
        c.gpus = {best_gpu};
      } else {
        c.score = score_of(c.gpus);
      }
    }
  }

 private:
  static constexpr size_t kMaxMemoGpus = 8;
  // A node state as F sees it: GPU model, CPU left, sorted milli left per GPU.
  struct Key {
    int32_t model = 0;
    int32_t gpus = 0;
    int64_t cpu = 0;
    std::array<int16_t, kMaxMemoGpus> left{};
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = static_cast<uint64_t>(k.model) * 0x9E3779B97F4A7C15ull ^
                   static_cast<uint64_t>(k.cpu) * 0xC2B2AE3D27D4EB4Full ^
                   static_cast<uint64_t>(k.gpus);
      for (int16_t v : k.left) h = (h ^ static_cast<uint64_t>(v)) * 0x100000001B3ull;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };

  int ModelId(const std::string& model) const {
    auto [it, inserted] = model_ids_.try_emplace(model, static_cast<int>(model_ids_.size()));
    return it->second;
  }

  // F(M) of the state with CPU `cpu` and GPU lefts `left`, GPU `changed` (if
  // >= 0) lowered by `milli`; memoised (nodes of up to 8 GPUs).
  double Frag(int model, const std::string& model_name, int64_t cpu, std::span<const int> left,
              int changed, int milli) const {
    if (left.size() > kMaxMemoGpus) {
      NodeState s;
      s.cpu_left = cpu;
      s.gpu_left.assign(left.begin(), left.end());
      if (changed >= 0) s.gpu_left[static_cast<size_t>(changed)] -= milli;
      return NodeFragmentation(s, model_name, classes_);
    }
    Key k;
    k.model = model;
    k.cpu = cpu;
    k.gpus = static_cast<int32_t>(left.size());
    for (size_t i = 0; i < left.size(); ++i) {
      k.left[i] = static_cast<int16_t>(left[i] - (static_cast<int>(i) == changed ? milli : 0));
    }
    std::sort(k.left.begin(), k.left.begin() + k.gpus);
    auto it = memo_.find(k);
    if (it != memo_.end()) return it->second;
    NodeState s;
    s.cpu_left = cpu;
    s.gpu_left.assign(k.left.begin(), k.left.begin() + k.gpus);
    const double f = NodeFragmentation(s, model_name, classes_);
    memo_.emplace(k, f);
    return f;
  }

  std::vector<PodClass> classes_;
  mutable std::unordered_map<std::string, int> model_ids_;
  mutable std::unordered_map<Key, double, KeyHash> memo_;
};

}  // namespace

std::vector<PodClass> TypicalPods(const std::vector<Pod>& pods, double coverage) {
  std::map<std::tuple<int64_t, int, int, std::vector<std::string>>, int64_t> count;
  for (const Pod& p : pods) ++count[{p.cpu_milli, p.num_gpu, p.gpu_milli, p.gpu_models}];
  std::vector<std::pair<int64_t, PodClass>> sorted;
  for (const auto& [k, n] : count) {
    PodClass c;
    std::tie(c.cpu_milli, c.num_gpu, c.gpu_milli, c.gpu_models) = k;
    sorted.emplace_back(n, std::move(c));
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<PodClass> out;
  int64_t covered = 0;
  const double total = static_cast<double>(pods.size());
  for (auto& [n, c] : sorted) {
    if (static_cast<double>(covered) >= coverage * total) break;
    covered += n;
    c.popularity = static_cast<double>(n);
    out.push_back(std::move(c));
  }
  for (auto& c : out) c.popularity /= static_cast<double>(covered);
  return out;
}

double NodeFragmentation(const NodeState& s, const std::string& gpu_model,
                         const std::vector<PodClass>& classes) {
  const double idle = static_cast<double>(s.gpu_left_total());
  double f = 0;
  for (const PodClass& m : classes) {
    double fm = idle;  // CPU-only class, no access, or the class does not fit: all idle GPU
    const bool allowed = m.gpu_models.empty() || std::find(m.gpu_models.begin(), m.gpu_models.end(),
                                                           gpu_model) != m.gpu_models.end();
    if (m.gpu_milli > 0 && allowed && s.cpu_left >= m.cpu_milli) {
      int fitting = 0;
      double small = 0;
      for (int left : s.gpu_left) {
        if (left >= m.gpu_milli) {
          ++fitting;
        } else {
          small += left;
        }
      }
      if (fitting >= m.num_gpu) fm = small;  // Q3: only GPUs too small for m are fragment
    }
    f += m.popularity * fm;
  }
  return f;
}

base::StatusOr<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                                   const std::vector<Pod>& workload) {
  if (name == "random") return std::unique_ptr<Policy>(new RandomPolicy());
  if (name == "bestfit") return std::unique_ptr<Policy>(new BestFitPolicy());
  if (name == "dotprod") return std::unique_ptr<Policy>(new DotProductPolicy());
  if (name == "gpupacking") return std::unique_ptr<Policy>(new GpuPackingPolicy());
  if (name == "fgd") return std::unique_ptr<Policy>(new FgdPolicy(TypicalPods(workload)));
  return base::InvalidArgumentError(
      "unknown policy '" + std::string(name) + "' (random, bestfit, dotprod, gpupacking, fgd)",
      "--policy");
}

}  // namespace seedance::sched
