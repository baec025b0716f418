#include "seedance/node/agent.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "seedance/base/logging.h"
#include "seedance/k8s/kube_client.h"
#include "seedance/node/gpu_health.h"
#include "seedance/node/node_labels.h"
#include "seedance/probe/gpu.h"
#include "seedance/topo/discover.h"

namespace seedance::node {

struct NodeAgent::Impl final : public DeviceBackend {
  base::Env& env;
  NodeAgentOptions options;
  std::unique_ptr<k8s::KubeClient> kube;
  std::unique_ptr<probe::GpuSource> nvml;  // null with a fixture: it is read anew each time
  topo::Topology topology;
  std::vector<AgentGpu> at_start;
  std::mutex mu;  // guards health and stop
  std::condition_variable cv;
  std::unique_ptr<GpuHealth> health;
  bool stop = false;
  std::unique_ptr<DevicePlugin> plugin;

  Impl(base::Env& e, NodeAgentOptions o) : env(e), options(std::move(o)) {}

  base::StatusOr<std::vector<port::NvmlReading>> ReadGpus() {
    if (nvml) return nvml->Read();
    SEEDANCE_ASSIGN_OR_RETURN(auto source, probe::NewFixtureGpuSource(env, options.gpus_from));
    return source->Read();
  }

  std::vector<AgentGpu> Gpus() {
    std::lock_guard<std::mutex> lock(mu);
    return health->gpus();
  }

  std::string PodsPath() const {
    return "/api/v1/pods?fieldSelector=spec.nodeName%3D" + options.node_name;
  }

  base::StatusOr<std::vector<AgentPod>> ListPods() {
    SEEDANCE_ASSIGN_OR_RETURN(std::string body, kube->Get(PodsPath()));
    return ParseAgentPodList(body, "PodList");
  }

  std::vector<ShareDevice> Devices() override { return ShareDevices(Gpus()); }

  base::StatusOr<std::map<std::string, std::string>> Allocate(
      const std::vector<std::string>& ids) override {
    const std::vector<AgentGpu> gpus = Gpus();
    base::Status last;
    for (int attempt = 0; attempt < 5; ++attempt) {
      SEEDANCE_ASSIGN_OR_RETURN(std::vector<AgentPod> pods, ListPods());
      SEEDANCE_ASSIGN_OR_RETURN(AllocationMatch m,
                                MatchAllocation(pods, options.node_name, gpus, ids));
      const AgentPod& pod = pods[m.pod];
      if (!m.repeat) {
        auto patched = kube->Patch("/api/v1/namespaces/" + pod.ns + "/pods/" + pod.name,
                                   AllocatedPatch(pod, m.container, DeviceFingerprint(ids)));
        if (!patched.ok()) {
          last = patched.status();
          // 409: the pod changed since the list (another allocation, a status update): again.
          if (last.code() == base::StatusCode::kFailedPrecondition) continue;
          return last;
        }
      }
      SEEDANCE_LOG(kInfo) << (m.repeat ? "answered again: " : "allocated: ") << pod.Key() << " "
                          << m.container << " on GPU(s) "
                          << k8s::FormatGpuAssignment(pod.assignment);
      return AllocationEnv(pod, m.container, gpus, options.env);
    }
    return base::UnavailableError("the pod kept changing under the allocation: " + last.ToString());
  }

  std::vector<std::string> Prefer(const std::vector<std::string>& available,
                                  const std::vector<std::string>& must_include,
                                  int64_t size) override {
    auto pods = ListPods();
    if (!pods.ok()) {
      SEEDANCE_LOG(kWarning) << "no preference: " << pods.status().ToString();
      return {};
    }
    return PreferredDevices(*pods, options.node_name, Gpus(), available, must_include, size);
  }

  void PatchNode() {
    const std::vector<AgentGpu> gpus = Gpus();
    std::map<std::string, std::optional<std::string>> labels;
    if (options.label_node) labels = NodeLabels(topology, gpus);
    auto r = kube->Patch("/api/v1/nodes/" + options.node_name, NodePatch(labels, gpus));
    if (!r.ok()) SEEDANCE_LOG(kWarning) << "could not patch the Node: " << r.status().ToString();
  }

  void HealthLoop() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu);
        if (cv.wait_for(lock, options.health_interval, [&] { return stop; })) return;
      }
      auto readings = ReadGpus();
      if (!readings.ok()) {
        SEEDANCE_LOG(kWarning) << "GPU health not read: " << readings.status().ToString();
        continue;
      }
      bool changed;
      {
        std::lock_guard<std::mutex> lock(mu);
        changed = health->Update(*readings);
      }
      if (changed) {
        for (const AgentGpu& g : Gpus()) {
          if (!g.healthy)
            SEEDANCE_LOG(kWarning) << "GPU " << g.index << " unhealthy: " << g.why_unhealthy;
        }
        plugin->DevicesChanged();
        PatchNode();
      }
    }
  }
};

NodeAgent::NodeAgent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NodeAgent::~NodeAgent() { Stop(); }

base::StatusOr<std::unique_ptr<NodeAgent>> NodeAgent::Create(base::Env& env,
                                                             NodeAgentOptions options) {
  if (options.node_name.empty()) {
    return base::InvalidArgumentError("the node's name is required (the pod's spec.nodeName)",
                                      "--node");
  }
  auto impl = std::make_unique<Impl>(env, std::move(options));
  if (impl->options.gpus_from.empty()) impl->nvml = probe::NewNvmlGpuSource();
  SEEDANCE_ASSIGN_OR_RETURN(auto readings, impl->ReadGpus());
  if (readings.empty()) {
    return base::FailedPreconditionError(
        "no GPUs to serve" + (impl->nvml ? " (" + impl->nvml->note() + ")" : std::string()),
        impl->options.gpus_from.empty() ? "NVML" : impl->options.gpus_from);
  }
  SEEDANCE_ASSIGN_OR_RETURN(topo::Machine machine,
                            topo::DiscoverMachine(impl->options.sysfs_root, ""));
  impl->topology = std::move(machine.topology);
  impl->at_start = GpusFromReadings(readings, impl->topology);
  impl->health = std::make_unique<GpuHealth>(impl->at_start);
  impl->health->Update(readings);
  SEEDANCE_ASSIGN_OR_RETURN(impl->kube, k8s::ConnectKube(env, impl->options.kubeconfig));
  impl->plugin = std::make_unique<DevicePlugin>(*impl, impl->options.plugin);
  return std::unique_ptr<NodeAgent>(new NodeAgent(std::move(impl)));
}

base::Status NodeAgent::Run() {
  Impl& s = *impl_;
  s.PatchNode();
  std::thread health([&s] { s.HealthLoop(); });
  base::Status r = s.plugin->Run();
  Stop();
  health.join();
  return r;
}

void NodeAgent::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  if (impl_->plugin) impl_->plugin->Stop();
}

const std::vector<AgentGpu>& NodeAgent::gpus_at_start() const { return impl_->at_start; }

}  // namespace seedance::node
