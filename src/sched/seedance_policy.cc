// Seedance policy: FGD's fragmentation descent plus reserves for scarce GPU
// types for GPU pods, best fit on GPU among the nodes FGD cannot tell apart
// for shares, and best fit on GPU alone for CPU-only pods.
//
//   GPU pods:  score = step x 8192 + packing
//   CPU-only:  score = packing
//   step = floor(100 sigma(-(dF + penalty) / 1000))
//   penalty = scarcity_weight x milli-GPU of the pod, when the pod could run
//             on any type and placing it would leave type t with less free
//             GPU than its reserve; else 0
//   reserve(t) = share(t) x GPU free in the cluster now
//   share(t)  = (demand of the pods that allow only some types, spread evenly
//               over the types they allow, that lands on t) / all GPU demand
//   packing = 8000 - the node's milli-GPU left after the pod (0 .. 8000), for
//             CPU-only pods and GPU shares; 0 for whole-GPU pods
//
// dF is FGD's increase of expected fragmentation F_n(M) (docs/design/sched.md), the best GPU tried
// for a share. Its steps are coarse, so many nodes tie; among them a share goes where the least GPU
// stays free (shares gather on nodes already cut up), while whole-GPU pods keep the simulator's
// tie-break. A CPU-only pod barely moves F (the CPU-only class counts all
// idle GPU wherever it goes), yet the CPU it takes from a GPU-rich node can
// strand that node's GPUs later: it goes where the least GPU is free.
// Measured against FGD in docs/benchmarks.md; the variants tried are in
// docs/design/sched.md.
#include "src/sched/seedance_policy.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "src/sched/fragmentation.h"

namespace seedance::sched {
namespace {

// The packing key's range: 8 GPUs' milli-GPU (the largest Alibaba node);
// larger nodes saturate it, which only coarsens their tie-break.
constexpr int64_t kMaxNodeMilli = 8000;
constexpr int64_t kStepUnit = 8192;  // one FGD step outweighs any packing key

class SeedancePolicy final : public Policy {
 public:
  SeedancePolicy(const std::vector<Pod>& workload, SeedancePolicyOptions options)
      : options_(options), frag_(TypicalPods(workload)) {
    double total = 0;
    for (const Pod& p : workload) {
      total += static_cast<double>(p.gpu_demand_milli());
      if (p.num_gpu == 0 || p.gpu_models.empty()) continue;
      const double share =
          static_cast<double>(p.gpu_demand_milli()) / static_cast<double>(p.gpu_models.size());
      for (const auto& m : p.gpu_models) share_[m] += share;
    }
    for (auto& [m, d] : share_) d /= total;
  }
  std::string_view name() const override { return "seedance"; }
  // A step (0..100) in the high part, the packing key (0..8000) below it.
  int64_t max_score() const override { return 100 * kStepUnit + kMaxNodeMilli; }

  void Score(const Cluster& cluster, const Pod& pod, std::vector<Candidate>& feasible,
             std::mt19937_64&) const override {
    if (feasible.empty()) return;
    if (pod.num_gpu == 0) {  // CPU-only: best fit on GPU, FGD not consulted
      for (Candidate& c : feasible) c.score = Packing(cluster.state(c.node), 0);
      return;
    }
    std::map<std::string, double> free_by_model;
    double free_total = 0;
    if (pod.num_gpu > 0 && pod.gpu_models.empty() && !share_.empty()) {
      for (int n = 0; n < static_cast<int>(cluster.nodes().size()); ++n) {
        const double f = static_cast<double>(cluster.state(n).gpu_left_total());
        free_by_model[cluster.nodes()[static_cast<size_t>(n)].gpu_model] += f;
        free_total += f;
      }
    }
    for (size_t i = 0; i < feasible.size(); ++i) {
      Candidate& c = feasible[i];
      const Node& node = cluster.nodes()[static_cast<size_t>(c.node)];
      double penalty = 0;
      if (pod.num_gpu > 0 && pod.gpu_models.empty()) {
        auto it = share_.find(node.gpu_model);
        if (it != share_.end()) {
          // Reserve of type t: its share of the demand that can only run on
          // some types, applied to the GPU capacity still free.
          const double reserve = it->second * free_total;
          const double after =
              free_by_model.at(node.gpu_model) - static_cast<double>(pod.gpu_demand_milli());
          if (after < reserve) {
            penalty = options_.scarcity_weight * static_cast<double>(pod.gpu_demand_milli());
          }
        }
      }
      frag_.FgdScore(cluster, pod, c, penalty);  // FGD's step of (increase + penalty)
      const bool share = pod.gpu_milli < 1000;   // whole-GPU pods: no packing key
      c.score = c.score * kStepUnit +
                (share ? Packing(cluster.state(c.node), pod.gpu_demand_milli()) : 0);
    }
  }

 private:
  // 8000 - the node's milli-GPU left once `demand` is placed, clamped to 0 .. 8000.
  static int64_t Packing(const NodeState& s, int64_t demand) {
    return kMaxNodeMilli - std::clamp<int64_t>(s.gpu_left_total() - demand, 0, kMaxNodeMilli);
  }

  SeedancePolicyOptions options_;
  FragmentationCache frag_;
  // Per GPU type: the share of the workload's GPU demand that can only run on
  // a few types, spread evenly over the types it allows.
  std::map<std::string, double> share_;
};

}  // namespace

std::unique_ptr<Policy> NewSeedancePolicy(const std::vector<Pod>& workload,
                                          SeedancePolicyOptions options) {
  return std::make_unique<SeedancePolicy>(workload, options);
}

}  // namespace seedance::sched
