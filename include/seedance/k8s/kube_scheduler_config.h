// The KubeSchedulerConfiguration that points kube-scheduler at the extender (feature SCHED-8,
// CLI-2: `seedancectl scheduler print-config`). The settings the extender depends on:
//   nodeCacheCapable: true          kube-scheduler sends node names; the extender keeps its own
//                                   cache by list-watch (extender_sync.h)
//   managedResources seedance.io/gpu-milli, ignoredByScheduler: false
//                                   kube-scheduler calls the extender only for the pods that
//                                   request it; its own fit check and its preemption dry run
//                                   count the extended resource too; the extender decides which
//                                   GPUs within the node. With all_pods the list is left out and
//                                   every pod goes through the extender (CPU-only pods placed by
//                                   the policy too, as in the simulator: the parity replay)
//   percentageOfNodesToScore: 100   otherwise kube-scheduler sends only a sample of the nodes,
//                                   and the extender could not choose among all of them
//   filter, prioritize, bind, preempt verbs; weight (scores 0..10 are multiplied by it);
//   httpTimeout; ignorable: false (a pod waits, Pending with an event naming the extender,
//   rather than be placed without GPU accounting)
// The API version: kubescheduler.config.k8s.io/v1 (kube-scheduler 1.25 and later) by default,
// v1beta1 (1.19-1.22) on request.
// The layout by default is a second scheduler beside the cluster's own, as managed clusters
// (EKS, GKE, AKS) allow: profile `seedance` (pods opt in with spec.schedulerName: seedance), with
// leader election on a Lease of its own (kube-system/seedance-scheduler), so several replicas can
// run. Replacing the default scheduler is scheduler_name "default-scheduler" (its Lease is then
// kube-scheduler's own name, as that scheduler's would be).
//
// Thread safety: a pure function.
#pragma once

#include <string>

#include "seedance/base/status.h"

namespace seedance::k8s {

struct KubeSchedulerConfigOptions {
  std::string extender_url;  // http(s)://host:port[/prefix]
  std::string kubeconfig;    // clientConnection.kubeconfig; empty: in-cluster
  int weight = 1;            // 1..100
  int http_timeout_s = 5;
  bool v1 = true;         // false: 1.19-1.22's v1beta1 schema
  bool all_pods = false;  // no managedResources: the extender sees every pod
  std::string scheduler_name = "seedance";
  bool leader_elect = true;
  std::string lease_namespace = "kube-system";
};

base::StatusOr<std::string> KubeSchedulerConfigYaml(const KubeSchedulerConfigOptions& options);

}  // namespace seedance::k8s
