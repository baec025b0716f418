#include "src/sched/overcommit.h"

#include <algorithm>
#include <cmath>

namespace seedance::sched {

void ShareTable::Declare(const std::string& pod, size_t id, const ShareProfile& profile) {
  if (profiles_.size() <= id) profiles_.resize(id + 1);
  profiles_[id] = profile;
  id_of_[pod] = id;
}

std::optional<size_t> ShareTable::IdOf(const std::string& pod) const {
  auto it = id_of_.find(pod);
  if (it == id_of_.end()) return std::nullopt;
  return it->second;
}

int ShareTable::Booking(const ShareProfile& p) {
  return p.util_pct >= 0 ? static_cast<int>(std::ceil(p.request_milli / OvercommitMargin(p.tier)))
                         : p.request_milli;
}

double ShareTable::Busy(size_t id) const {
  const ShareProfile& p = profiles_[id];
  return p.request_milli * (p.util_pct >= 0 ? p.util_pct / 100 : 1.0);
}

double ShareTable::GpuBusy(GpuSlot gpu) const {
  double b = 0;
  if (auto it = on_gpu_.find(gpu); it != on_gpu_.end()) {
    for (size_t j : it->second) b += Busy(j);
  }
  return b;
}

double ShareTable::Speed(GpuSlot gpu) const { return 1 / std::max(1.0, GpuBusy(gpu) / 1000); }

bool ShareTable::MarginOk(const Pod& pod, size_t id, const NodeState& st, int node, int g,
                          bool contended, std::span<const size_t> gone) const {
  if (st.cpu_left < pod.cpu_milli || st.mem_left < pod.memory_mib ||
      st.gpu_left[static_cast<size_t>(g)] < pod.gpu_milli) {
    return false;
  }
  double limit = contended ? OvercommitMargin(profiles_[id].tier) : 1.0;
  double busy = Busy(id);
  if (auto it = on_gpu_.find({node, g}); it != on_gpu_.end()) {
    for (size_t j : it->second) {
      if (std::find(gone.begin(), gone.end(), j) != gone.end()) continue;
      limit = std::min(limit, OvercommitMargin(profiles_[j].tier));
      busy += Busy(j);
    }
  }
  return std::max(1.0, busy / 1000) <= limit + 1e-9;
}

void ShareTable::Leave(size_t id, GpuSlot gpu) {
  auto& there = on_gpu_[gpu];
  there.erase(std::find(there.begin(), there.end(), id));
}

namespace {

class OvercommitFilter final : public FilterPlugin {
 public:
  explicit OvercommitFilter(const ShareTable* shares) : shares_(shares) {}
  std::string_view name() const override { return "overcommit-margin"; }
  void PreFilter(const Cluster&, const Pod& pod) override { id_ = shares_->IdOf(pod.name); }
  bool Filter(const Cluster& cluster, const Pod& pod, int node) const override {
    if (!id_) return true;
    for (int g = 0; g < cluster.nodes()[static_cast<size_t>(node)].gpu_count; ++g) {
      if (shares_->MarginOk(pod, *id_, cluster, node, g, shares_->contention_allowed())) {
        return true;
      }
    }
    return false;
  }

 private:
  const ShareTable* shares_;
  std::optional<size_t> id_;  // the share being placed, if the pod is one
};

class OvercommitReserve final : public ReservePlugin {
 public:
  explicit OvercommitReserve(const ShareTable* shares) : shares_(shares) {}
  std::string_view name() const override { return "overcommit-gpu"; }
  base::Status Reserve(Cluster& cluster, const Pod& pod, Candidate& at) override {
    const std::optional<size_t> id = shares_->IdOf(pod.name);
    if (!id) return base::OkStatus();
    const bool contended = shares_->contention_allowed();
    cluster.Unbind(pod, at.node, at.gpus);  // MarginOk reads the GPUs without it
    if (!shares_->MarginOk(pod, *id, cluster, at.node, at.gpus[0], contended)) {
      for (int g = 0; g < cluster.nodes()[static_cast<size_t>(at.node)].gpu_count; ++g) {
        if (shares_->MarginOk(pod, *id, cluster, at.node, g, contended)) {
          at.gpus = {g};
          break;
        }
      }
    }
    cluster.Bind(pod, at.node, at.gpus);
    return base::OkStatus();
  }
  void Unreserve(Cluster&, const Pod&, const Candidate&) override {}  // nothing kept

 private:
  const ShareTable* shares_;
};

}  // namespace

std::unique_ptr<FilterPlugin> MakeOvercommitFilter(const ShareTable* shares) {
  return std::make_unique<OvercommitFilter>(shares);
}
std::unique_ptr<ReservePlugin> MakeOvercommitReserve(const ShareTable* shares) {
  return std::make_unique<OvercommitReserve>(shares);
}

}  // namespace seedance::sched
