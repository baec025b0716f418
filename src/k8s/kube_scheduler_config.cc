#include "seedance/k8s/kube_scheduler_config.h"

#include <sstream>
#include <string>

#include "seedance/k8s/objects.h"

namespace seedance::k8s {

namespace {

std::string LeaderElection(const KubeSchedulerConfigOptions& o) {
  if (!o.leader_elect) return "leaderElection:\n  leaderElect: false\n";
  const std::string lease =
      o.scheduler_name == "default-scheduler" ? "kube-scheduler" : o.scheduler_name + "-scheduler";
  return "leaderElection:\n  leaderElect: true\n  resourceLock: leases\n  resourceName: " + lease +
         "\n  resourceNamespace: " + o.lease_namespace + "\n";
}

// A DNS-1123 label, as profile names and Lease names must be.
bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

}  // namespace

base::StatusOr<std::string> KubeSchedulerConfigYaml(const KubeSchedulerConfigOptions& o) {
  if (!IsDnsLabel(o.scheduler_name)) {
    return base::InvalidArgumentError(
        "expected a DNS label (a-z, 0-9, '-'), got '" + o.scheduler_name + "'", "scheduler_name");
  }
  if (!IsDnsLabel(o.lease_namespace)) {
    return base::InvalidArgumentError("expected a namespace name, got '" + o.lease_namespace + "'",
                                      "lease_namespace");
  }
  if (o.extender_url.rfind("http://", 0) != 0 && o.extender_url.rfind("https://", 0) != 0) {
    return base::InvalidArgumentError(
        "expected http://HOST:PORT or https://..., got '" + o.extender_url + "'", "extender_url");
  }
  if (o.weight < 1 || o.weight > 100) {
    return base::InvalidArgumentError("expected 1 to 100", "weight");
  }
  std::string url = o.extender_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  const bool https = url.rfind("https://", 0) == 0;
  std::ostringstream y;
  y << "# kube-scheduler configuration written by `seedancectl scheduler print-config`:\n"
    << (o.all_pods
            ? "# kube-scheduler calls Seedance's extender for every pod, CPU-only ones too.\n"
            : "# kube-scheduler calls Seedance's extender for the pods that request " +
                  std::string(kGpuMilliResource) + ".\n")
    << "apiVersion: kubescheduler.config.k8s.io/" << (o.v1 ? "v1" : "v1beta1") << "\n"
    << "kind: KubeSchedulerConfiguration\n"
    << LeaderElection(o) << "clientConnection:\n  kubeconfig: \"" << o.kubeconfig << "\"\n"
    << "percentageOfNodesToScore: 100\n"
    << "profiles:\n- schedulerName: " << o.scheduler_name << "\n"
    << "extenders:\n"
    << "- urlPrefix: \"" << url << "\"\n"
    << "  filterVerb: filter\n"
    << "  prioritizeVerb: prioritize\n"
    << "  bindVerb: bind\n"
    << "  preemptVerb: preempt\n"
    << "  weight: " << o.weight << "\n"
    << "  enableHTTPS: " << (https ? "true" : "false") << "\n"
    << "  nodeCacheCapable: true\n"
    << "  ignorable: false\n"
    << "  httpTimeout: " << o.http_timeout_s << "s\n";
  if (!o.all_pods) {
    y << "  managedResources:\n"
      << "  - name: " << kGpuMilliResource << "\n"
      << "    ignoredByScheduler: false\n";
  }
  return y.str();
}

}  // namespace seedance::k8s
