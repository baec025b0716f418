#include "src/sched/fragmentation.h"

#include <algorithm>
#include <cmath>

namespace seedance::sched {

size_t FragmentationCache::KeyHash::operator()(const Key& k) const {
  uint64_t h = static_cast<uint64_t>(k.model) * 0x9E3779B97F4A7C15ull ^
               static_cast<uint64_t>(k.cpu) * 0xC2B2AE3D27D4EB4Full ^ static_cast<uint64_t>(k.gpus);
  for (int16_t v : k.left) h = (h ^ static_cast<uint64_t>(v)) * 0x100000001B3ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

int FragmentationCache::ModelId(const std::string& model) const {
  auto [it, inserted] = model_ids_.try_emplace(model, static_cast<int>(model_ids_.size()));
  return it->second;
}

double FragmentationCache::Frag(int model, const std::string& model_name, int64_t cpu,
                                std::span<const int> left, std::span<const int> changed,
                                int milli) const {
  NodeState s;
  s.cpu_left = cpu;
  s.gpu_left.assign(left.begin(), left.end());
  for (int g : changed) s.gpu_left[static_cast<size_t>(g)] -= milli;
  if (left.size() > kMaxMemoGpus) return NodeFragmentation(s, model_name, classes_);
  Key k;
  k.model = model;
  k.cpu = cpu;
  k.gpus = static_cast<int32_t>(left.size());
  for (size_t i = 0; i < left.size(); ++i) k.left[i] = static_cast<int16_t>(s.gpu_left[i]);
  std::sort(k.left.begin(), k.left.begin() + k.gpus);
  auto it = memo_.find(k);
  if (it != memo_.end()) return it->second;
  const double f = NodeFragmentation(s, model_name, classes_);
  memo_.emplace(k, f);
  return f;
}

double FragmentationCache::Current(const Cluster& cluster, int node) const {
  const Node& n = cluster.nodes()[static_cast<size_t>(node)];
  const NodeState& s = cluster.state(node);
  return Frag(ModelId(n.gpu_model), n.gpu_model, s.cpu_left, s.gpu_left, {}, 0);
}

double FragmentationCache::Increase(const Cluster& cluster, const Pod& pod, int node,
                                    std::span<const int> gpus) const {
  const Node& n = cluster.nodes()[static_cast<size_t>(node)];
  const NodeState& s = cluster.state(node);
  const int model = ModelId(n.gpu_model);
  const double before = Frag(model, n.gpu_model, s.cpu_left, s.gpu_left, {}, 0);
  const double after =
      Frag(model, n.gpu_model, s.cpu_left - pod.cpu_milli, s.gpu_left, gpus, pod.gpu_milli);
  return after - before;
}

void FragmentationCache::FgdScore(const Cluster& cluster, const Pod& pod, Candidate& c,
                                  double extra_cost) const {
  auto score_of = [extra_cost](double increase) {
    return static_cast<int64_t>(
        std::floor(100.0 / (1.0 + std::exp((increase + extra_cost) / 1000.0))));
  };
  if (pod.num_gpu != 1 || pod.gpu_milli >= 1000) {
    c.score = score_of(Increase(cluster, pod, c.node, c.gpus));
    return;
  }
  const NodeState& s = cluster.state(c.node);
  int64_t best = -1;
  int best_gpu = -1, last_left = -1;
  for (int i = 0; i < static_cast<int>(s.gpu_left.size()); ++i) {
    const int left = s.gpu_left[static_cast<size_t>(i)];
    if (left < pod.gpu_milli || left == last_left) continue;  // equal lefts score equally
    last_left = left;
    const int one[1] = {i};
    const int64_t sc = score_of(Increase(cluster, pod, c.node, one));
    if (sc > best) {
      best = sc;
      best_gpu = i;
    }
  }
  c.score = best;
  c.gpus = {best_gpu};
}

}  // namespace seedance::sched
