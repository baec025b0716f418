// `seedancectl node agent`: the node half of the scheduler extender (feature SCHED-8), run on each
// GPU node as a DaemonSet (deploy/node-agent.yaml): kubelet's device plugin for
// seedance.io/gpu-milli, the allocation of each pod's assigned GPUs, GPU health and the Node's
// labels (node/agent.h).
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "seedance/base/env.h"
#include "seedance/node/agent.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

void RegisterAgent(CLI::App* noun, Context& context) {
  struct Flags {
    std::string node, kubeconfig, gpus_from, root = "/";
    std::string plugin_dir = "/var/lib/kubelet/device-plugins";
    std::string endpoint = "seedance-gpu-milli.sock";
    double health_s = 5, watch_s = 0.5;
    bool no_labels = false, mps = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "agent",
      "kubelet's device plugin for seedance.io/gpu-milli: gives each pod the GPUs the extender "
      "assigned it, follows GPU health, labels the Node");
  cmd->add_option("--node", f->node, "This node's name (default: $NODE_NAME)")
      ->envname("NODE_NAME");
  cmd->add_option("--kubeconfig", f->kubeconfig, "The API server (default: in-cluster)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--gpus-from", f->gpus_from,
                  "GPU readings from a fixture file in the probe's format instead of NVML")
      ->check(CLI::ExistingFile);
  cmd->add_option("--root", f->root, "Root of the sysfs tree the topology is read from")
      ->check(InputDirectory())
      ->capture_default_str();
  cmd->add_option("--device-plugin-dir", f->plugin_dir,
                  "kubelet's device-plugin directory (kubelet.sock is there)")
      ->check(InputDirectory())
      ->capture_default_str();
  cmd->add_option("--endpoint", f->endpoint, "The plugin's socket name in that directory")
      ->capture_default_str();
  cmd->add_option("--health-interval", f->health_s, "Seconds between GPU health reads")
      ->check(RealIn(0.01, 3600))
      ->capture_default_str();
  cmd->add_option("--watch-interval", f->watch_s,
                  "Seconds between checks for a kubelet restart (and registration retries)")
      ->check(RealIn(0.01, 60))
      ->capture_default_str();
  cmd->add_flag("--no-labels", f->no_labels,
                "Do not write the seedance.io/gpu-model, numa-nodes and rdma-nics labels");
  cmd->add_flag("--mps-thread-percentage", f->mps,
                "Give a container sharing a GPU CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = its share "
                "(for nodes that run NVIDIA MPS)");
  cmd->callback([f, &context] {
    if (f->endpoint.empty() || f->endpoint.find('/') != std::string::npos) {
      Failed(base::InvalidArgumentError("expected a file name, got '" + f->endpoint + "'",
                                        "--endpoint"),
             context);
      return;
    }
    node::NodeAgentOptions o;
    o.node_name = f->node;
    o.kubeconfig = f->kubeconfig;
    o.gpus_from = f->gpus_from;
    o.sysfs_root = f->root;
    o.plugin.plugin_dir = f->plugin_dir;
    o.plugin.endpoint = f->endpoint;
    o.plugin.watch_interval = std::chrono::milliseconds(static_cast<int64_t>(f->watch_s * 1000));
    o.health_interval = std::chrono::milliseconds(static_cast<int64_t>(f->health_s * 1000));
    o.label_node = !f->no_labels;
    o.env.mps_thread_percentage = f->mps;
    base::Env* env = base::Env::Default();
    auto agent = node::NodeAgent::Create(*env, o);
    if (Failed(WithFlag(agent.status(), {{"kubeconfig", "--kubeconfig"}}), context)) return;
    InstallStopSignals();
    std::fprintf(stderr, "node agent for %s: %zu GPUs, serving %s/%s; Ctrl-C stops\n",
                 f->node.c_str(), (*agent)->gpus_at_start().size(), f->plugin_dir.c_str(),
                 f->endpoint.c_str());
    std::atomic<bool> done{false};
    std::thread stopper([&] {
      while (!StopRequested() && !done) env->SleepFor(std::chrono::milliseconds(100));
      (*agent)->Stop();
    });
    base::Status r = (*agent)->Run();
    done = true;
    stopper.join();
    Failed(r, context);
  });
}

}  // namespace

void RegisterNode(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("node", "The node agent for GPU nodes in Kubernetes");
  noun->require_subcommand(1);
  RegisterAgent(noun, context);
}

}  // namespace seedance::cli
