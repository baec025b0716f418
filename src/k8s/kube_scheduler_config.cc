#include "seedance/k8s/kube_scheduler_config.h"

#include <sstream>
#include <string>

#include "seedance/k8s/objects.h"

namespace seedance::k8s {

base::StatusOr<std::string> KubeSchedulerConfigYaml(const KubeSchedulerConfigOptions& o) {
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
    << "leaderElection:\n  leaderElect: false\n"
    << "clientConnection:\n  kubeconfig: \"" << o.kubeconfig << "\"\n"
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
