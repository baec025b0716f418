// The kube-scheduler extender protocol, `k8s.io/kube-scheduler/extender/v1` over HTTP/JSON
// (feature SCHED-8). kube-scheduler POSTs to <urlPrefix>/<verb>:
//
//   filter      ExtenderArgs {Pod, Nodes | NodeNames}      -> ExtenderFilterResult
//               {Nodes, NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error};
//               NodeNames null means "no node fits", [] the same for kube-scheduler
//   prioritize  ExtenderArgs                                -> HostPriorityList [{Host, Score}],
//               scores 0..10, which kube-scheduler multiplies by the extender's weight
//   bind        ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node}
//                                                           -> ExtenderBindingResult {Error}
//   preempt     ExtenderPreemptionArgs {Pod, NodeNameToVictims | NodeNameToMetaVictims}
//                                                           -> ExtenderPreemptionResult
//               {NodeNameToMetaVictims: {node: {Pods: [{UID}], NumPDBViolations}}}
//
// The Go types carry no JSON tags, so the keys are the field names. Decoding is liberal: keys
// are matched without regard to case (some clients lower-case them), nulls and missing fields
// take defaults, and with nodeCacheCapable the Nodes are absent and NodeNames carry the names.
// Encoding is strict: exactly the keys and value types the Go types marshal to.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/k8s/objects.h"

namespace seedance::k8s {

struct ExtenderArgs {
  KubePod pod;
  std::vector<KubeNode> nodes;                         // when kube-scheduler sent Nodes
  std::optional<std::vector<std::string>> node_names;  // when it sent NodeNames
  // The candidates' names, from whichever was sent.
  std::vector<std::string> candidate_names() const;
};

struct ExtenderFilterResult {
  std::optional<std::vector<std::string>> node_names;      // nullopt encodes as null: none fits
  std::map<std::string, std::string> failed;               // may fit after preemption
  std::map<std::string, std::string> failed_unresolvable;  // preemption cannot help
  std::string error;
};

struct HostPriority {
  std::string host;
  int64_t score = 0;  // 0..10
};

struct ExtenderBindingArgs {
  std::string pod_name, pod_namespace, pod_uid, node;
};

struct MetaVictims {
  std::vector<std::string> pod_uids;
  int64_t num_pdb_violations = 0;
};

struct ExtenderPreemptionArgs {
  KubePod pod;
  // Victims per node, by UID (from NodeNameToMetaVictims, or the Pods of NodeNameToVictims).
  std::map<std::string, MetaVictims> victims;
};

base::StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view body);
base::StatusOr<ExtenderBindingArgs> DecodeBindingArgs(std::string_view body);
base::StatusOr<ExtenderPreemptionArgs> DecodePreemptionArgs(std::string_view body);

std::string EncodeFilterResult(const ExtenderFilterResult& result);
std::string EncodeHostPriorityList(const std::vector<HostPriority>& list);
std::string EncodeBindingResult(std::string_view error);
std::string EncodePreemptionResult(const std::map<std::string, MetaVictims>& victims);

}  // namespace seedance::k8s
