// The Kubernetes scheduler extender's logic (feature SCHED-8), without the HTTP: the live
// Scheduler (scheduler.h) fed by the API server's node and pod events, answering
// kube-scheduler's verbs (extender_protocol.h). The server (tools/seedancectl scheduler serve)
// decodes, calls, encodes, and posts the Bindings this plans.
//
// Two modes:
//   decide       filter returns exactly the node the policy chose (the simulator's decision,
//                for parity) and reserves the pod there; prioritize gives it 10, the rest 0
//   cooperative  filter returns every candidate the pod fits on, per GPU, with the reason for
//                each one it does not; prioritize scores them 0..10 by the policy; the GPUs are
//                chosen at bind, on the node kube-scheduler picked
//
// Reservations. In decide mode filter *assumes* the pod on its node and GPUs (Scheduler::
// Schedule), keyed by the pod's UID: filtering the same pod again returns the same node and
// reserves nothing more. Bind commits it (PlanBind, then BindSucceeded once the API server
// took the Binding; BindFailed releases it); a reservation not bound within the TTL is
// released, and so is a pod deleted or finished. Every verb and event runs under one lock, so
// concurrent filters cannot both take the last share of a GPU.
//
// Gangs (pods annotated seedance.io/gang and gang-size): all members or none. A member's filter
// waits (no node, the reason says how many members are still missing) until the extender has
// seen every member pending; then the whole gang is placed in one cycle (Scheduler::
// ScheduleGang, on the candidates of the member asked about) and each member reserved, with
// one deadline, in either mode. The first member's bind posts the Bindings of every member,
// so the gang is bound together; a later bind of a member already bound that way posts
// nothing. A member deleted, a Binding refused, or the TTL passing releases the whole gang's
// reservations. Members bound earlier (a member replaced after the gang ran) count toward the
// size.
//
// Reconfiguration. `scheduler set` (PUT /config) switches the policy and the topology plugins
// (NUMA-aware GPU choice, RDMA-only nodes for pods that talk across nodes) between cycles,
// without a restart; a restart starts from serve's flags again.
//
// Restart. The API server holds the truth: the Binding carries the assignment annotation, so
// a restarted extender rebuilds its state from the pods it lists (UpsertPod of each bound pod
// with an assignment).
//
// Invariants (Check): the scheduler's own (every known pod bound on the cluster at its GPUs),
// and every reservation names a known, assumed pod; every UID maps to one pod name.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/k8s/extender_protocol.h"
#include "seedance/k8s/objects.h"
#include "seedance/sched/model.h"
#include "seedance/sched/policy.h"

namespace seedance::k8s {

enum class ExtenderMode { kDecide, kCooperative };
std::string_view ExtenderModeName(ExtenderMode mode);  // "decide", "cooperative"
base::StatusOr<ExtenderMode> ParseExtenderMode(std::string_view name, std::string_view where);

struct ExtenderOptions {
  std::string policy = "seedance";   // MakePolicy's names
  std::vector<sched::Pod> workload;  // the typical pods FGD and Seedance's policy weigh
  ExtenderMode mode = ExtenderMode::kDecide;
  double reservation_ttl_s = 30;  // an assumed pod not bound by then is released
  sched::TieBreak ties = sched::TieBreak::kNodeName;
  uint64_t seed = 42;
  base::Env* env = nullptr;  // the clock for the TTL; null: Env::Default()
  bool numa_aware = false;   // the topology plugins (topology_plugins.h)
  bool rdma = false;
};

// What `scheduler set` changes on a running extender (its JSON: extender_config.h).
struct ExtenderConfig {
  std::string policy;
  bool numa_aware = false;
  bool rdma = false;
  bool operator==(const ExtenderConfig&) const = default;
};

// What bind must write: a Binding of namespace/name (UID) to `node`, annotated with the GPUs.
struct BindPlan {
  std::string ns, name, uid, node;
  std::vector<int> gpus;
};

struct ExtenderStats {
  int64_t nodes = 0, pods = 0, reservations = 0, gangs_waiting = 0;
  int64_t filters = 0, filter_fits = 0, binds = 0, bind_failures = 0, expired = 0;
  int64_t used_gpu_milli = 0, total_gpu_milli = 0;
};

class Extender {
 public:
  static base::StatusOr<std::unique_ptr<Extender>> Create(const ExtenderOptions& options);
  ~Extender();

  // The informers' events. A node update that its pods would no longer fit is an error (kept).
  // GPUs the Node's seedance.io/unhealthy-gpus names get nothing new.
  base::Status UpsertNode(const KubeNode& node);
  base::Status DeleteNode(std::string_view name);
  // A pod seen in a list or a watch: one bound elsewhere with an assignment is recorded (a
  // restart rebuilds this way), one this extender reserved is committed when the API server
  // shows it bound, a finished or terminating one is released.
  base::Status UpsertPod(const KubePod& pod);
  void DeletePod(const KubePod& pod);

  ExtenderFilterResult Filter(const ExtenderArgs& args);
  std::vector<HostPriority> Prioritize(const ExtenderArgs& args);
  // The Bindings to post, the asked pod's first: one for a pod alone, every member not yet
  // bound for a gang; none when the pod is already bound there (its gang's bind posted it).
  // Each is then reported by BindSucceeded or BindFailed.
  base::StatusOr<std::vector<BindPlan>> PlanBind(const ExtenderBindingArgs& args);
  // The preempt verb: for each node kube-scheduler proposes, the victims Seedance would take —
  // bound pods of lower priority than the preemptor, lowest QoS tier first (bronze, silver,
  // gold), then the largest GPU share, until the pod fits per GPU; then each victim, the most
  // valuable first, is spared if the pod still fits with it back (kube-scheduler's reprieve). A
  // node where no such set makes room is left out. kube-scheduler deletes the victims of the
  // node it picks; its PDB count for a node is passed back unchanged.
  std::map<std::string, MetaVictims> Preempt(const ExtenderPreemptionArgs& args);
  // What the API server answered to a plan's Binding. Only the reservation of the plan's own
  // pod (its UID and its name) is committed or released.
  void BindSucceeded(const BindPlan& plan);
  void BindFailed(const BindPlan& plan);
  // Releases the reservations older than the TTL; how many.
  int ExpireReservations();

  // A live reconfiguration: the next cycles use the policy and plugins; reservations and
  // bindings made stay. An unknown policy is an error and changes nothing.
  base::Status Reconfigure(const ExtenderConfig& config);
  ExtenderConfig config() const;

  ExtenderStats stats() const;
  base::Status Check() const;
  ExtenderMode mode() const;

  struct State;

 private:
  explicit Extender(std::unique_ptr<State> state);
  base::Status HoldUnhealthyGpus(const KubeNode& node);  // under the state's lock
  std::unique_ptr<State> s_;
};

}  // namespace seedance::k8s
