// Kubernetes Nodes and Pods — the JSON the API server and kube-scheduler send — read into the
// scheduler's model (feature SCHED-8, the extender). Liberal in what is read: a missing or null
// field takes its default (kube-scheduler versions differ in what they fill in), and a field of
// the wrong type or a bad quantity is an error naming its path.
//
// What users write (docs/guide/kubernetes.md):
//   Node   allocatable (else capacity) `seedance.io/gpu-milli`: 1000 x GPUs — or, without it,
//          `nvidia.com/gpu` — cpu, memory; label `seedance.io/gpu-model`; optionally the labels
//          `seedance.io/numa-nodes` (NUMA domains the GPUs split into) and
//          `seedance.io/rdma-nics` (RDMA NICs), which the topology plugins read.
//   Pod    requests (= limits) `seedance.io/gpu-milli`: the pod's total milli-GPU; annotations
//          `seedance.io/num-gpu` (GPUs) and `seedance.io/gpu-milli` (milli-GPU on each; < 1000
//          only with one GPU), optionally `seedance.io/gpu-spec` (allowed models, `|`-separated
//          as in the Alibaba trace) and `seedance.io/qos` (LS, BE, Burstable, Guaranteed);
//          spec.priority (from its PriorityClass); a gang's members carry
//          `seedance.io/gang` (its name, per namespace) and `seedance.io/gang-size` (how many
//          members it has; all are placed and bound together, or none); `seedance.io/rdma:
//          "true"` asks for a node with an RDMA NIC (under --rdma-enable). Without the annotations
//          the shape follows from the request: up to 1000 is a share of one GPU, more must be whole
//          GPUs. The extender publishes its decision as the annotation `seedance.io/gpu-assignment`
//          ("0,3": the node's GPU indices), carried by the Binding it posts.
// A pod's CPU and memory requests are those kube-scheduler uses: the sum over its containers,
// or the largest init container's when that is larger.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/sched/model.h"

namespace seedance::k8s {

inline constexpr std::string_view kGpuMilliResource = "seedance.io/gpu-milli";
inline constexpr std::string_view kNvidiaGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kGpuModelLabel = "seedance.io/gpu-model";
inline constexpr std::string_view kNumGpuAnnotation = "seedance.io/num-gpu";
inline constexpr std::string_view kGpuMilliAnnotation = "seedance.io/gpu-milli";
inline constexpr std::string_view kGpuSpecAnnotation = "seedance.io/gpu-spec";
inline constexpr std::string_view kQosAnnotation = "seedance.io/qos";
inline constexpr std::string_view kGangAnnotation = "seedance.io/gang";
inline constexpr std::string_view kGangSizeAnnotation = "seedance.io/gang-size";
inline constexpr int kMaxGangSize = 4096;
inline constexpr std::string_view kNumaNodesLabel = "seedance.io/numa-nodes";
inline constexpr std::string_view kRdmaNicsLabel = "seedance.io/rdma-nics";
inline constexpr std::string_view kRdmaAnnotation = "seedance.io/rdma";
inline constexpr std::string_view kAssignmentAnnotation = "seedance.io/gpu-assignment";
// Written on the Node by the node agent (node/gpu_health.h): GPU indices, as the assignment.
inline constexpr std::string_view kUnhealthyGpusAnnotation = "seedance.io/unhealthy-gpus";

struct KubeNode {
  sched::Node node;
  bool unschedulable = false;       // spec.unschedulable (cordoned)
  std::vector<int> unhealthy_gpus;  // the annotation seedance.io/unhealthy-gpus
};

struct KubePod {
  sched::Pod pod;  // pod.name is "namespace/name"
  std::string ns, name, uid;
  std::string node_name;       // spec.nodeName; empty while pending
  std::string scheduler_name;  // spec.schedulerName
  std::vector<int> gpus;       // the assignment annotation; empty when there is none
  std::string gang;          // "namespace/gang" for a gang member (pod.gang: its size); "" if none
  bool terminating = false;  // metadata.deletionTimestamp is set
  // Holds resources: bound and neither Succeeded nor Failed.
  bool holds_resources() const;
};

base::StatusOr<KubeNode> ParseKubeNode(std::string_view json, std::string_view where);
base::StatusOr<KubePod> ParseKubePod(std::string_view json, std::string_view where);

// "0,3" for GPUs {0, 3}, "" for none; the parse rejects anything but distinct non-negative
// integers.
std::string FormatGpuAssignment(const std::vector<int>& gpus);
base::StatusOr<std::vector<int>> ParseGpuAssignment(std::string_view text, std::string_view where);

}  // namespace seedance::k8s
