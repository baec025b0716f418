// Topology-aware scheduling plugins (features CLI-2 and SCHED-8: `scheduler set --numa-aware
// --rdma-enable`), for any Framework (framework.h). Each can be switched on and off between
// cycles, which is how the extender reconfigures live.
//
//   numa-aware (reserve)  A pod of several whole GPUs is moved to GPUs of one NUMA domain of the
//                         chosen node when a domain has enough of them free: of those domains,
//                         the one with the fewest free whole GPUs (best fit, so whole domains
//                         stay whole; the lowest domain on ties), its lowest free GPUs. When no
//                         domain has room the policy's GPUs stay and the pod spans domains. A
//                         node of G GPUs and D domains (Node::numa_nodes) has GPU g in domain
//                         g * D / G: GPUs split evenly in index order, as servers wire them.
//   rdma (filter)         A pod that talks across nodes — a gang member (Pod::gang > 1) or one
//                         that asks (Pod::rdma) — passes only nodes with an RDMA NIC
//                         (Node::nics > 0).
//
// Thread safety: as the Framework — one scheduling loop at a time; set_enabled between cycles.
#pragma once

#include <memory>
#include <string_view>

#include "seedance/sched/framework.h"

namespace seedance::sched {

// The NUMA domain of GPU `gpu` on `node` (0 when the node has one domain).
int NumaDomainOf(const Node& node, int gpu);
// Whether the pod needs an RDMA NIC under the rdma plugin.
bool TalksAcrossNodes(const Pod& pod);

class NumaAwareReserve final : public ReservePlugin {
 public:
  std::string_view name() const override { return "numa-aware"; }
  base::Status Reserve(Cluster& cluster, const Pod& pod, Candidate& at) override;
  void Unreserve(Cluster&, const Pod&, const Candidate&) override {}  // nothing kept
  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }

 private:
  bool enabled_ = false;
};

class RdmaFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "rdma"; }
  bool Filter(const Cluster& cluster, const Pod& pod, int node) const override;
  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }

 private:
  bool enabled_ = false;
};

}  // namespace seedance::sched
