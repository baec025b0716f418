#include "seedance/sched/policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "seedance/base/enum_names.h"
#include "src/sched/fragmentation.h"
#include "src/sched/seedance_policy.h"

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

// Min-max normalisation to 0..100 in integers; equal scores all become 100. It keeps the set of
// highest scores (scores_each_node_alone relies on it): for s < hi, (s - lo) * 100 < (hi - lo) *
// 100, so s maps below 100 while hi maps to 100.
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
  bool scores_each_node_alone() const override { return true; }  // min-max keeps the highest
  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    ScoreAlone(cluster, pod, feasible);
    MinMaxNormalise(feasible);
  }
  void ScoreAlone(const Cluster& cluster, const Pod& pod,
                  std::vector<Candidate>& feasible) const override {
    for (auto& c : feasible) {
      const NodeState& s = cluster.state(c.node);
      const double cpu = static_cast<double>(s.cpu_left - pod.cpu_milli) / 128000.0;
      const double gpu = static_cast<double>(s.gpu_left_total() - pod.gpu_demand_milli()) / 8000.0;
      c.score = static_cast<int64_t>((1.0 - 0.5 * cpu - 0.5 * gpu) * 100.0);
    }
  }
};

// Max-normalisation: score * 100 / max (integer), as the simulator's "norm max". It keeps the set
// of highest scores: with hi > 0 a score s < hi maps below 100 and hi to 100, and a raw score
// below 0 (a node past the formula's 128 cores or 8 GPUs) is raised to 0, still below 100. With
// hi <= 0 (every raw score at most 0) it is min-max normalisation instead, which keeps it too.
void MaxNormalise(std::vector<Candidate>& cs) {
  int64_t hi = 0;
  bool negative = false;
  for (const auto& c : cs) {
    hi = std::max(hi, c.score);
    negative |= c.score < 0;
  }
  if (hi <= 0) {
    if (negative) MinMaxNormalise(cs);
    return;
  }
  for (auto& c : cs) c.score = std::max<int64_t>(0, c.score * 100 / hi);
}

class DotProductPolicy final : public Policy {
 public:
  std::string_view name() const override { return "dotprod"; }
  bool scores_each_node_alone() const override { return true; }  // max-normalising keeps it
  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    ScoreAlone(cluster, pod, feasible);
    MaxNormalise(feasible);
  }
  void ScoreAlone(const Cluster& cluster, const Pod& pod,
                  std::vector<Candidate>& feasible) const override {
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
  }
};

class GpuPackingPolicy final : public Policy {
 public:
  std::string_view name() const override { return "gpupacking"; }
  bool scores_each_node_alone() const override { return true; }
  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    ScoreAlone(cluster, pod, feasible);
  }
  void ScoreAlone(const Cluster& cluster, const Pod& pod,
                  std::vector<Candidate>& feasible) const override {
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

// GPU clustering: pods of one GPU-affinity tag (a share, or k whole GPUs)
// gather on the same nodes. Bands of 25: only this tag here (75, 100], this
// tag among others (50, 75], an idle node (25, 50], only other tags (0, 25];
// inside a band, + 25 (8000 - milli-GPU left) / 8000 (integer arithmetic).
class GpuClusteringPolicy final : public Policy {
 public:
  std::string_view name() const override { return "gpuclustering"; }
  bool scores_each_node_alone() const override { return true; }
  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    ScoreAlone(cluster, pod, feasible);
  }
  void ScoreAlone(const Cluster& cluster, const Pod& pod,
                  std::vector<Candidate>& feasible) const override {
    const int tag = GpuTag(pod);
    for (auto& c : feasible) {
      if (tag < 0) {
        c.score = 0;
        continue;
      }
      const NodeState& s = cluster.state(c.node);
      int tags_here = 0;
      for (int n : s.tag_pods) tags_here += n > 0;
      // Nodes of more than 8 GPUs (8000 milli-GPU left) count as an empty 8-GPU one.
      const int64_t packed = 25 * (8000 - std::min<int64_t>(8000, s.gpu_left_total())) / 8000;
      int64_t band;
      if (s.tag_pods[static_cast<size_t>(tag)] > 0) {
        band = tags_here == 1 ? 75 : 50;
      } else {
        band = tags_here == 0 ? 25 : 0;
      }
      c.score = band + packed;
    }
  }
};

class FgdPolicy final : public Policy {
 public:
  explicit FgdPolicy(std::vector<PodClass> classes) : frag_(std::move(classes)) {}
  std::string_view name() const override { return "fgd"; }
  bool scores_each_node_alone() const override { return true; }

  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    ScoreAlone(cluster, pod, feasible);
  }
  void ScoreAlone(const Cluster& cluster, const Pod& pod,
                  std::vector<Candidate>& feasible) const override {
    for (auto& c : feasible) frag_.FgdScore(cluster, pod, c);
  }

 private:
  FragmentationCache frag_;
};

}  // namespace

void PrepareTieOrder(Cluster& cluster, TieBreak ties, uint64_t seed) {
  if (ties != TieBreak::kShuffledNodeNames) return;
  std::mt19937_64 order_rng(seed ^ 0x6e6f64652d6f7264ULL);  // "node-ord"
  cluster.ShuffleTieOrder(order_rng);
}

size_t TieDraw(size_t ties, std::mt19937_64& rng) { return ties > 1 ? rng() % ties : 0; }

namespace {

// The order of the --ties help: name first, as in the FGD paper's simulator.
inline constexpr base::EnumTable<TieBreak, 3> kTieBreakNames = {{
    {TieBreak::kNodeName, "name"},
    {TieBreak::kShuffledNodeNames, "shuffled-names"},
    {TieBreak::kRandom, "random"},
}};

}  // namespace

std::string_view TieBreakName(TieBreak ties) { return base::EnumName(kTieBreakNames, ties); }

base::StatusOr<TieBreak> ParseTieBreak(std::string_view name, std::string_view where) {
  return base::ParseEnum(kTieBreakNames, name, where);
}

std::string TieBreakNames() { return base::EnumNames(kTieBreakNames); }

size_t SelectHost(const std::vector<Candidate>& cs, const Cluster& cluster, TieBreak tie_break,
                  std::mt19937_64& rng) {
  size_t pick = 0, ties = 1;
  for (size_t i = 1; i < cs.size(); ++i) {
    if (cs[i].score > cs[pick].score) {
      pick = i;
      ties = 1;
    } else if (cs[i].score == cs[pick].score) {
      ++ties;
      if (tie_break != TieBreak::kRandom &&
          cluster.tie_rank(cs[i].node) < cluster.tie_rank(cs[pick].node)) {
        pick = i;
      }
    }
  }
  if (tie_break != TieBreak::kRandom || ties == 1) return pick;
  // The candidates come in node order: the k-th of the tied ones, k drawn once.
  size_t k = TieDraw(ties, rng);
  for (size_t i = pick;; ++i) {
    if (cs[i].score == cs[pick].score && k-- == 0) return i;
  }
}

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

bool PolicyUsesWorkload(std::string_view name) { return name == "fgd" || name == "seedance"; }

base::StatusOr<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                                   const std::vector<Pod>& workload) {
  if (name == "random") return std::unique_ptr<Policy>(new RandomPolicy());
  if (name == "bestfit") return std::unique_ptr<Policy>(new BestFitPolicy());
  if (name == "dotprod") return std::unique_ptr<Policy>(new DotProductPolicy());
  if (name == "gpupacking") return std::unique_ptr<Policy>(new GpuPackingPolicy());
  if (name == "gpuclustering") return std::unique_ptr<Policy>(new GpuClusteringPolicy());
  if (name == "seedance") return NewSeedancePolicy(workload);
  if (name == "fgd") return std::unique_ptr<Policy>(new FgdPolicy(TypicalPods(workload)));
  return base::InvalidArgumentError(
      "unknown policy '" + std::string(name) +
          "' (random, bestfit, dotprod, gpupacking, gpuclustering, fgd, seedance)",
      "policy");
}

}  // namespace seedance::sched
