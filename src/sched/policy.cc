#include "seedance/sched/policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

namespace seedance::sched {
namespace {

class RandomPolicy final : public Policy {
 public:
  std::string_view name() const override { return "random"; }
  void Score(const Cluster&, const Pod&, std::vector<Candidate>& feasible,
             std::mt19937_64& rng) const override {
    for (auto& c : feasible) c.score = 0;
    if (!feasible.empty()) feasible[rng() % feasible.size()].score = 100;
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

class FgdPolicy final : public Policy {
 public:
  explicit FgdPolicy(std::vector<PodClass> classes) : classes_(std::move(classes)) {}
  std::string_view name() const override { return "fgd"; }

  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    for (auto& c : feasible) {
      const std::string& model = cluster.nodes()[static_cast<size_t>(c.node)].gpu_model;
      const NodeState& s = cluster.state(c.node);
      const double before = Frag(s, model);
      auto score_of = [&](std::span<const int> gpus) {
        const double after = Frag(cluster.After(pod, c.node, gpus), model);
        const double delta = before - after;
        return static_cast<int64_t>(std::floor(100.0 / (1.0 + std::exp(-delta / 1000.0))));
      };
      if (pod.num_gpu == 1 && pod.gpu_milli < 1000) {
        // Try every GPU the share fits on; GPUs with equal milli left give equal scores.
        int64_t best = -1;
        std::vector<int> best_gpu;
        for (int i = 0; i < static_cast<int>(s.gpu_left.size()); ++i) {
          if (s.gpu_left[static_cast<size_t>(i)] < pod.gpu_milli) continue;
          const int one[1] = {i};
          const int64_t sc = score_of(one);
          if (sc > best) {
            best = sc;
            best_gpu = {i};
          }
        }
        c.score = best;
        c.gpus = best_gpu;
      } else {
        c.score = score_of(c.gpus);
      }
    }
  }

 private:
  // F(M) memoised by node state: GPU model, CPU left and the multiset of GPU milli left.
  double Frag(const NodeState& s, const std::string& model) const {
    std::vector<int> left = s.gpu_left;
    std::sort(left.begin(), left.end());
    Key key{model, s.cpu_left, left};
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    const double f = NodeFragmentation(s, model, classes_);
    memo_.emplace(std::move(key), f);
    return f;
  }

  using Key = std::tuple<std::string, int64_t, std::vector<int>>;
  std::vector<PodClass> classes_;
  mutable std::map<Key, double> memo_;
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
  if (name == "fgd") return std::unique_ptr<Policy>(new FgdPolicy(TypicalPods(workload)));
  return base::InvalidArgumentError(
      "unknown policy '" + std::string(name) + "' (random, bestfit, fgd)", "--policy");
}

}  // namespace seedance::sched
