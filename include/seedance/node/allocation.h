// Which pod a kubelet Allocate call is for (feature SCHED-8, the node half).
//
// kubelet's Allocate names device IDs, never the pod. The agent does what the peers do
// (gpushare, HAMi): among the pods bound to this node that are still Pending, carry the
// extender's `seedance.io/gpu-assignment`, and have a container requesting exactly that many
// `seedance.io/gpu-milli` not yet allocated, it takes the oldest — kubelet admits pods in
// creation order — and marks that container as allocated on the pod (annotation
// `seedance.io/gpu-allocated`: {"container": "<device fingerprint>"}), with the pod's
// resourceVersion as the precondition so two answers cannot take one pod. When the IDs fall on
// exactly the GPUs of some candidates' assignments (GetPreferredAllocation steers kubelet
// there), the oldest of those wins. A retry of an Allocate the agent already answered (same
// IDs) finds its pod by the fingerprint and gets the same answer.
//
// Refusals (kubelet writes them into the pod's events): no candidate; an assignment naming a
// GPU this node does not have, or an unhealthy one; an assignment that would put more than 1,000
// milli-GPU on a GPU beside the pods already allocated there. The agent never guesses a GPU.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/k8s/objects.h"
#include "seedance/node/gpu_shares.h"

namespace seedance::node {

using k8s::kAssignmentAnnotation;  // written by the extender
inline constexpr std::string_view kAllocatedAnnotation = "seedance.io/gpu-allocated";

struct ContainerShare {
  std::string name;
  int64_t milli = 0;  // its seedance.io/gpu-milli request (limit when no request)
};

// What the agent reads of a Pod.
struct AgentPod {
  std::string ns, name, uid, node_name, phase, resource_version;
  std::string created;  // metadata.creationTimestamp, RFC 3339 in UTC: sorts as time
  bool terminating = false;
  bool has_assignment = false;
  std::vector<int> assignment;                   // GPU indices on the node
  std::vector<ContainerShare> containers;        // the containers that request GPU shares
  std::map<std::string, std::string> allocated;  // container -> device fingerprint
  std::string Key() const { return ns + "/" + name; }
};

// A Pod as the API server returns it. Errors name `where` and the field.
base::StatusOr<AgentPod> ParseAgentPod(std::string_view json, std::string_view where);
// The pods of a PodList.
base::StatusOr<std::vector<AgentPod>> ParseAgentPodList(std::string_view json,
                                                        std::string_view where);

struct AllocationMatch {
  size_t pod = 0;  // position in the pods given
  std::string container;
  bool repeat = false;  // the pod already carries this fingerprint: answer again, write nothing
};

// The pod and container an Allocate of `ids` is for; FailedPrecondition with the reason when
// none may be taken. `gpus` are this node's.
base::StatusOr<AllocationMatch> MatchAllocation(const std::vector<AgentPod>& pods,
                                                const std::string& node,
                                                const std::vector<AgentGpu>& gpus,
                                                const std::vector<std::string>& ids);

// The device IDs GetPreferredAllocation proposes: `size` of `available` (all of `must_include`)
// on the GPUs of the assignment of the pod MatchAllocation would take for a request of `size`,
// that pod's share on each. Empty when no candidate or not enough of its GPUs' IDs are free —
// kubelet then chooses as it would without the plugin's preference.
std::vector<std::string> PreferredDevices(const std::vector<AgentPod>& pods,
                                          const std::string& node,
                                          const std::vector<AgentGpu>& gpus,
                                          const std::vector<std::string>& available,
                                          const std::vector<std::string>& must_include,
                                          int64_t size);

struct AllocationEnvOptions {
  // Sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE to the share, rounded up to a whole percent, for a
  // container sharing a GPU (under NVIDIA MPS; off by default).
  bool mps_thread_percentage = false;
};

// The container's environment: NVIDIA_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES (the GPUs'
// UUIDs, or indices without them), SEEDANCE_GPU_MILLI (milli-GPU on each GPU),
// SEEDANCE_GPU_ASSIGNMENT (the node's indices) and, when asked, the MPS percentage.
std::map<std::string, std::string> AllocationEnv(const AgentPod& pod, const std::string& container,
                                                 const std::vector<AgentGpu>& gpus,
                                                 const AllocationEnvOptions& options);

// The merge patch that marks `container` of `pod` allocated with `fingerprint`.
std::string AllocatedPatch(const AgentPod& pod, const std::string& container,
                           const std::string& fingerprint);

}  // namespace seedance::node
