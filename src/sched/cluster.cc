#include "seedance/sched/cluster.h"

#include <algorithm>
#include <atomic>
#include <string>

namespace seedance::sched {
namespace {

uint64_t NewHistoryId() {
  static std::atomic<uint64_t> next{1};  // simulations on several threads make clusters
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

int64_t NodeState::gpu_left_total() const {
  int64_t t = 0;
  for (int g : gpu_left) t += g;
  return t;
}

int NodeState::full_free_gpus() const {
  return static_cast<int>(std::count(gpu_left.begin(), gpu_left.end(), 1000));
}

Cluster::ChangeLog::ChangeLog() : id(NewHistoryId()) {}

Cluster::ChangeLog& Cluster::ChangeLog::operator=(const ChangeLog&) {
  nodes.clear();
  id = NewHistoryId();
  return *this;
}

Cluster::Cluster(std::vector<Node> nodes) : nodes_(std::move(nodes)) {
  state_.reserve(nodes_.size());
  for (const Node& n : nodes_) {
    NodeState s;
    s.cpu_left = n.cpu_milli;
    s.mem_left = n.memory_mib;
    s.gpu_left.assign(static_cast<size_t>(n.gpu_count), 1000);
    total_gpu_milli_ += int64_t{1000} * n.gpu_count;
    state_.push_back(std::move(s));
  }
  std::vector<int> by_name(nodes_.size());
  for (size_t i = 0; i < by_name.size(); ++i) by_name[i] = static_cast<int>(i);
  std::stable_sort(by_name.begin(), by_name.end(), [&](int a, int b) {
    return nodes_[static_cast<size_t>(a)].name < nodes_[static_cast<size_t>(b)].name;
  });
  tie_rank_.resize(nodes_.size());
  for (size_t r = 0; r < by_name.size(); ++r) {
    tie_rank_[static_cast<size_t>(by_name[r])] = static_cast<int>(r);
  }
}

void Cluster::ShuffleTieOrder(std::mt19937_64& rng) {
  for (size_t r = 0; r < tie_rank_.size(); ++r) tie_rank_[r] = static_cast<int>(r);
  std::shuffle(tie_rank_.begin(), tie_rank_.end(), rng);
  ++tie_epoch_;
}

bool Cluster::TypeAllowed(const Pod& pod, int node) const {
  if (pod.gpu_models.empty()) return true;
  const std::string& model = nodes_[static_cast<size_t>(node)].gpu_model;
  return std::find(pod.gpu_models.begin(), pod.gpu_models.end(), model) != pod.gpu_models.end();
}

namespace {

std::optional<std::vector<int>> ChooseGpusOn(const Pod& pod, const NodeState& s) {
  std::vector<int> gpus;
  if (pod.num_gpu == 0) return gpus;
  if (pod.gpu_milli >= 1000) {
    for (int i = 0;
         i < static_cast<int>(s.gpu_left.size()) && static_cast<int>(gpus.size()) < pod.num_gpu;
         ++i) {
      if (s.gpu_left[static_cast<size_t>(i)] == 1000) gpus.push_back(i);
    }
    if (static_cast<int>(gpus.size()) < pod.num_gpu) return std::nullopt;
    return gpus;
  }
  int best = -1;
  for (int i = 0; i < static_cast<int>(s.gpu_left.size()); ++i) {
    const int left = s.gpu_left[static_cast<size_t>(i)];
    if (left >= pod.gpu_milli && (best < 0 || left < s.gpu_left[static_cast<size_t>(best)]))
      best = i;
  }
  if (best < 0) return std::nullopt;
  gpus.push_back(best);
  return gpus;
}

}  // namespace

std::optional<std::vector<int>> Cluster::ChooseGpus(const Pod& pod, int node) const {
  return ChooseGpusOn(pod, state_[static_cast<size_t>(node)]);
}

std::optional<std::vector<int>> Cluster::PlaceOn(const Pod& pod, int node,
                                                 const NodeState& s) const {
  if (s.cpu_left < pod.cpu_milli || s.mem_left < pod.memory_mib) return std::nullopt;
  if (pod.num_gpu > 0 && !TypeAllowed(pod, node)) return std::nullopt;
  return ChooseGpusOn(pod, s);
}

NodeState Cluster::After(const Pod& pod, int node, std::span<const int> gpus) const {
  NodeState s = state_[static_cast<size_t>(node)];
  s.cpu_left -= pod.cpu_milli;
  s.mem_left -= pod.memory_mib;
  for (int g : gpus) s.gpu_left[static_cast<size_t>(g)] -= pod.gpu_milli;
  return s;
}

int GpuTag(const Pod& pod) {
  if (pod.num_gpu == 0) return -1;
  if (pod.gpu_milli < 1000) return 0;
  return std::min(pod.num_gpu, 8);
}

void Cluster::Bind(const Pod& pod, int node, std::span<const int> gpus) {
  state_[static_cast<size_t>(node)] = After(pod, node, gpus);
  if (const int tag = GpuTag(pod); tag >= 0) ++state_[static_cast<size_t>(node)].tag_pods[tag];
  used_gpu_milli_ += static_cast<int64_t>(gpus.size()) * pod.gpu_milli;
  log_.nodes.push_back(node);
}

void Cluster::Unbind(const Pod& pod, int node, std::span<const int> gpus) {
  NodeState& s = state_[static_cast<size_t>(node)];
  s.cpu_left += pod.cpu_milli;
  s.mem_left += pod.memory_mib;
  for (int g : gpus) s.gpu_left[static_cast<size_t>(g)] += pod.gpu_milli;
  if (const int tag = GpuTag(pod); tag >= 0) --s.tag_pods[tag];
  used_gpu_milli_ -= static_cast<int64_t>(gpus.size()) * pod.gpu_milli;
  log_.nodes.push_back(node);
}

base::Status Cluster::Check() const {
  int64_t left = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeState& s = state_[i];
    const Node& n = nodes_[i];
    if (s.cpu_left < 0 || s.cpu_left > n.cpu_milli || s.mem_left < 0 || s.mem_left > n.memory_mib) {
      return base::InternalError("node over- or under-committed (CPU/memory)", n.name);
    }
    for (int g : s.gpu_left) {
      if (g < 0 || g > 1000) return base::InternalError("GPU over- or under-committed", n.name);
      left += g;
    }
  }
  if (total_gpu_milli_ - left != used_gpu_milli_) {
    return base::InternalError("used GPU total does not match the nodes");
  }
  return base::OkStatus();
}

}  // namespace seedance::sched
