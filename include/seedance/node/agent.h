// `seedancectl node agent`: one process per GPU node, run as a DaemonSet (feature SCHED-8, the
// node half of the scheduler extender). It
//   - is kubelet's device plugin for `seedance.io/gpu-milli` (device_plugin.h, gpu_shares.h);
//   - answers each Allocate with the GPUs the extender assigned to the pod it is for
//     (allocation.h), read from and marked on the API server — the agent keeps no state of its
//     own, so a restart loses nothing;
//   - follows GPU health (gpu_health.h) every `health_interval`: ListAndWatch reports it to
//     kubelet and the Node's seedance.io/unhealthy-gpus annotation to the extender;
//   - labels its Node from discovery (node_labels.h).
// GPUs come from NVML (port/nvml.h through probe/gpu.h), or from a fixture file in the probe's
// format (`--gpus-from`, for tests and demos); the topology from sysfs under `sysfs_root`.
//
// Thread safety: Run() on one thread; Stop() from any (a signal handler's thread included).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/node/allocation.h"
#include "seedance/node/device_plugin.h"

namespace seedance::node {

struct NodeAgentOptions {
  std::string node_name;   // required: the Node this agent runs on (the downward API's NODE_NAME)
  std::string kubeconfig;  // empty: the pod's service account
  std::string gpus_from;   // a GPU fixture file; empty: NVML
  std::string sysfs_root = "/";
  DevicePluginOptions plugin;
  std::chrono::milliseconds health_interval{5000};
  bool label_node = true;
  AllocationEnvOptions env;
};

class NodeAgent {
 public:
  // Reads the GPUs and the topology and connects to the API server. An error when there are no
  // GPUs to serve, or the options are wrong.
  static base::StatusOr<std::unique_ptr<NodeAgent>> Create(base::Env& env,
                                                           NodeAgentOptions options);
  ~NodeAgent();

  // Labels the Node, then serves kubelet and follows health until Stop().
  base::Status Run();
  void Stop();
  const std::vector<AgentGpu>& gpus_at_start() const;

  struct Impl;

 private:
  explicit NodeAgent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::node
