// GPU over-commit of shares (feature SCHED-3's safety margins; event_sim.h gives the model), as
// framework plugins over a table of the shares on each GPU (private to seedance::sched).
//
//   ShareTable        what each share asks (request, tier, utilization) and which shares are on
//                     each GPU; a share's busy milli-GPU is request x utilization (unknown: all
//                     of it), a GPU's busy time the sum over its shares, and each share there
//                     runs at 1 / max(1, busy / 1000) of its speed.
//   OvercommitFilter  a node passes when one of its GPUs takes the share within the margins
//                     (MarginOk), or, while contention is not allowed, without any slowdown.
//   OvercommitReserve the policy may have chosen another GPU of the node: the share moves to
//                     the first GPU that MarginOk accepts.
//
// The shares are known by an id (the simulator's job index) and by their pod's name; pods not
// declared as shares pass the filter and are left alone by the reserve plugin.
//
// Thread safety: one scheduling loop.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "seedance/sched/framework.h"
#include "seedance/sched/qos_tiers.h"

namespace seedance::sched {

using GpuSlot = std::pair<int, int>;  // node, GPU

struct ShareProfile {
  Tier tier = Tier::kSilver;
  double util_pct = -1;   // < 0: unknown
  int request_milli = 0;  // what it asked for; its booking may be smaller
};

class ShareTable {
 public:
  // Declares (or re-declares) share `id` under its pod's name.
  void Declare(const std::string& pod, size_t id, const ShareProfile& profile);
  std::optional<size_t> IdOf(const std::string& pod) const;
  const ShareProfile& profile(size_t id) const { return profiles_.at(id); }

  // The milli-GPU a share of known utilization books: ceil(request / margin of its tier);
  // otherwise its request.
  static int Booking(const ShareProfile& p);

  double Busy(size_t id) const;
  double GpuBusy(GpuSlot gpu) const;
  // Speed of every share on the GPU: 1 / max(1, busy / 1000).
  double Speed(GpuSlot gpu) const;
  // May share `id` (pod `pod`) join GPU g of `node` on `at` (the cluster, or a trial copy
  // without the shares in `gone`)? CPU, memory and its booking must fit there, and the slowdown
  // after it joins must stay within the margin of every share on the GPU, its own included —
  // or, not `contended`, there must be no slowdown at all.
  bool MarginOk(const Pod& pod, size_t id, const Cluster& at, int node, int g, bool contended,
                std::span<const size_t> gone = {}) const {
    return MarginOk(pod, id, at.state(node), node, g, contended, gone);
  }
  // The same, with the node in state `st` (a trial state the caller keeps).
  bool MarginOk(const Pod& pod, size_t id, const NodeState& st, int node, int g, bool contended,
                std::span<const size_t> gone = {}) const;

  void Join(size_t id, GpuSlot gpu) { on_gpu_[gpu].push_back(id); }
  void Leave(size_t id, GpuSlot gpu);
  // The shares on a GPU, in the order they joined.
  const std::vector<size_t>& On(GpuSlot gpu) { return on_gpu_[gpu]; }
  const std::map<GpuSlot, std::vector<size_t>>& gpus() const { return on_gpu_; }

  // Two phases of a placement: first only where a share runs uncontended, then within margins.
  void set_contention_allowed(bool on) { contention_allowed_ = on; }
  bool contention_allowed() const { return contention_allowed_; }

 private:
  std::vector<ShareProfile> profiles_;
  std::unordered_map<std::string, size_t> id_of_;
  std::map<GpuSlot, std::vector<size_t>> on_gpu_;
  bool contention_allowed_ = false;
};

std::unique_ptr<FilterPlugin> MakeOvercommitFilter(const ShareTable* shares);
std::unique_ptr<ReservePlugin> MakeOvercommitReserve(const ShareTable* shares);

}  // namespace seedance::sched
