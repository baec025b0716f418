// `seedancectl scheduler`: Seedance's policies inside a real Kubernetes control plane (feature
// SCHED-8, CLI-2). `serve` is the kube-scheduler extender (k8s/extender*.h, kept in step with
// the API server by list-watch); `set` changes a running extender's policy and topology plugins
// (PUT /config, no restart); `print-config` writes the KubeSchedulerConfiguration that points
// kube-scheduler at it; `audit` recomputes per-GPU use from the API server.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "seedance/base/env.h"
#include "seedance/k8s/audit.h"
#include "seedance/k8s/extender.h"
#include "seedance/k8s/extender_config.h"
#include "seedance/k8s/extender_server.h"
#include "seedance/k8s/extender_sync.h"
#include "seedance/k8s/kube_client.h"
#include "seedance/k8s/kube_scheduler_config.h"
#include "seedance/probe/exporter.h"
#include "seedance/sched/readers.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

void RegisterServe(CLI::App* noun, Context& context) {
  struct Flags {
    std::string listen = "127.0.0.1:8888", kubeconfig, policy = "seedance", mode = "decide";
    std::string ties = "name";
    std::string workload, prefix, record, token_file;
    double ttl_s = 30;
    int64_t seed = 42;
    bool numa_aware = false, rdma = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "serve", "Serve kube-scheduler's extender verbs (filter, prioritize, bind, preempt)");
  cmd->add_option("--listen", f->listen, "HOST:PORT to serve on (port 0: a free one)")
      ->check(ListenAddress())
      ->capture_default_str();
  cmd->add_option("--kubeconfig", f->kubeconfig,
                  "The API server to list-watch and bind through (default: in-cluster)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--policy", f->policy,
                  "random, bestfit, dotprod, gpupacking, gpuclustering, fgd or seedance")
      ->capture_default_str();
  cmd->add_option("--mode", f->mode,
                  "decide (filter returns the policy's node) or cooperative (every fitting "
                  "node, scored 0..10)")
      ->check(CLI::IsMember({"decide", "cooperative"}))
      ->capture_default_str();
  cmd->add_option("--workload", f->workload,
                  "Alibaba 2023 pod list giving FGD and Seedance's policy their typical pods")
      ->check(CLI::ExistingFile);
  cmd->add_option("--prefix", f->prefix, "Path before the verbs (the urlPrefix's path)");
  cmd->add_option("--record", f->record,
                  "Append every verb's request and response to FILE as JSON lines (what the fake "
                  "kube-scheduler tests replay)")
      ->check(OutputPath());
  cmd->add_option("--token-file", f->token_file,
                  "A bearer token (a mounted Secret): PUT /config needs it, and the verbs need "
                  "it unless sent from loopback (kube-scheduler in the same pod)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--reservation-ttl", f->ttl_s,
                  "Seconds a pod reserved at filter waits for its bind")
      ->check(RealIn(0.1, 3600))
      ->capture_default_str();
  cmd->add_option("--ties", f->ties,
                  "Score ties: name (the node whose name sorts first), shuffled-names (the "
                  "same after a renaming drawn from --seed, as `simulate --protocol fgd` does "
                  "when the nodes are listed in name order) or random")
      ->check(CLI::IsMember({"name", "shuffled-names", "random"}))
      ->capture_default_str();
  cmd->add_option("--seed", f->seed, "Seeds random ties and the random policy")
      ->check(IntIn(0, int64_t{1} << 62))
      ->capture_default_str();
  cmd->add_flag("--numa-aware", f->numa_aware,
                "Put a pod of several GPUs on GPUs of one NUMA domain (label "
                "seedance.io/numa-nodes) when one has room");
  cmd->add_flag("--rdma-enable", f->rdma,
                "Send gang members and pods annotated seedance.io/rdma: \"true\" only to nodes "
                "with RDMA NICs (label seedance.io/rdma-nics)");
  cmd->callback([f, &context] {
    base::Env* env = base::Env::Default();
    k8s::ExtenderOptions o;
    o.policy = f->policy;
    o.numa_aware = f->numa_aware;
    o.rdma = f->rdma;
    o.reservation_ttl_s = f->ttl_s;
    o.seed = static_cast<uint64_t>(f->seed);
    auto mode = k8s::ParseExtenderMode(f->mode, "--mode");
    if (Failed(mode.status(), context)) return;
    o.mode = *mode;
    auto ties = sched::ParseTieBreak(f->ties, "--ties");
    if (Failed(ties.status(), context)) return;
    o.ties = *ties;
    if (!f->workload.empty()) {
      auto text = env->ReadFile(f->workload);
      if (Failed(text.status(), context)) return;
      auto pods = sched::ReadAlibabaPods(*text, f->workload);
      if (Failed(pods.status(), context)) return;
      o.workload = std::move(*pods);
    }
    auto extender = k8s::Extender::Create(o);
    if (Failed(WithFlag(extender.status(), {{"policy", "--policy"}}), context)) return;
    auto client = k8s::ConnectKube(*env, f->kubeconfig);
    if (Failed(client.status(), context)) return;
    auto sync = k8s::ExtenderSync::Start(**client, **extender, [](const std::string& line) {
      std::fprintf(stderr, "sync: %s\n", line.c_str());
    });
    if (Failed(sync.status(), context)) return;
    auto address = probe::ParseListenAddress(f->listen);
    if (Failed(address.status(), context)) return;
    k8s::KubeBinder binder(**client);
    k8s::ExtenderServerOptions so;
    so.http.host = address->first;
    so.http.port = address->second;
    so.prefix = f->prefix;
    if (!f->token_file.empty()) {
      auto token = k8s::ReadTokenFile(*env, f->token_file);
      if (Failed(token.status(), context)) return;
      so.token = *token;
    } else if (address->first != "127.0.0.1" && address->first != "localhost") {
      std::fprintf(stderr,
                   "warning: no --token-file: anyone who reaches %s can change the policy "
                   "(PUT /config) and post Bindings through the verbs\n",
                   f->listen.c_str());
    }
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> record(nullptr, &std::fclose);
    if (!f->record.empty()) {
      record.reset(std::fopen(f->record.c_str(), "a"));
      if (!record) {
        Failed(base::UnavailableError("cannot open for appending", f->record), context);
        return;
      }
      so.recorder = [file = record.get()](std::string_view verb, std::string_view request, int code,
                                          std::string_view response) {
        const std::string line = k8s::ExchangeJsonLine(verb, request, code, response);
        std::fwrite(line.data(), 1, line.size(), file);
        std::fflush(file);
      };
    }
    auto server = k8s::ExtenderServer::Start(**extender, binder, so);
    if (Failed(WithFlag(server.status(), {{"listen", "--listen"}}), context)) return;
    InstallStopSignals();
    const auto st = (*extender)->stats();
    std::fprintf(stderr,
                 "extender (%s, %s) serving http://%s:%d%s/{filter,prioritize,bind,preempt} "
                 "with %lld nodes and %lld pods; Ctrl-C stops\n",
                 f->policy.c_str(), f->mode.c_str(), address->first.c_str(), (*server)->port(),
                 f->prefix.c_str(), static_cast<long long>(st.nodes),
                 static_cast<long long>(st.pods));
    while (!StopRequested()) env->SleepFor(std::chrono::milliseconds(100));
    (*server)->Stop();
    (*sync)->Stop();
  });
}

void RegisterSet(CLI::App* noun, Context& context) {
  struct Flags {
    std::string url, policy, output = "table", token_file;
    bool numa_aware = false, rdma = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "set", "Change a running extender's policy and topology plugins, live (no restart)");
  cmd->add_option("--url", f->url, "The extender: http://HOST:PORT[/prefix]")->required();
  cmd->add_option("--token-file", f->token_file,
                  "The bearer token the extender was served with (serve --token-file)")
      ->check(CLI::ExistingFile);
  CLI::Option* policy =
      cmd->add_option("--policy", f->policy,
                      "random, bestfit, dotprod, gpupacking, gpuclustering, fgd or seedance");
  CLI::Option* numa = cmd->add_flag("--numa-aware,!--no-numa-aware", f->numa_aware,
                                    "Turn NUMA-aware GPU choice on (or off)");
  CLI::Option* rdma = cmd->add_flag("--rdma-enable,!--no-rdma-enable", f->rdma,
                                    "Turn RDMA-only nodes for cross-node pods on (or off)");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, policy, numa, rdma, &context] {
    k8s::ExtenderConfigUpdate update;  // what was not given keeps its value
    if (policy->count() > 0) update.policy = f->policy;
    if (numa->count() > 0) update.numa_aware = f->numa_aware;
    if (rdma->count() > 0) update.rdma = f->rdma;
    std::string token;
    if (!f->token_file.empty()) {
      auto read = k8s::ReadTokenFile(*base::Env::Default(), f->token_file);
      if (Failed(read.status(), context)) return;
      token = *read;
    }
    auto now = k8s::PutExtenderConfig(f->url, update, 10, token);
    if (Failed(WithFlag(now.status(), {{"url", "--url"}}), context)) return;
    context.exit_code = PrintReport(k8s::ExtenderConfigToReport(*now), f->output);
  });
}

void RegisterPrintConfig(CLI::App* noun, Context& context) {
  auto o = std::make_shared<k8s::KubeSchedulerConfigOptions>();
  CLI::App* cmd = noun->add_subcommand(
      "print-config", "Print the KubeSchedulerConfiguration that points kube-scheduler here");
  cmd->add_option("--extender-url", o->extender_url, "The extender: http://HOST:PORT[/prefix]")
      ->required();
  cmd->add_option("--kubeconfig", o->kubeconfig,
                  "kube-scheduler's clientConnection.kubeconfig (default: in-cluster)");
  cmd->add_option("--weight", o->weight, "Multiplies the extender's 0..10 scores")
      ->check(IntIn(1, 100))
      ->capture_default_str();
  cmd->add_option("--http-timeout", o->http_timeout_s, "Seconds kube-scheduler waits per call")
      ->check(IntIn(1, 600))
      ->capture_default_str();
  cmd->add_flag("--all-pods", o->all_pods,
                "Call the extender for every pod, CPU-only ones too (default: only the pods "
                "that request seedance.io/gpu-milli)");
  cmd->add_flag("--v1", o->v1,
                "The kubescheduler.config.k8s.io/v1 schema (kube-scheduler 1.25+; the default)");
  cmd->add_flag("!--v1beta1", o->v1, "The v1beta1 schema instead, for kube-scheduler 1.19 to 1.22");
  cmd->add_option("--scheduler-name", o->scheduler_name,
                  "The profile pods name in spec.schedulerName; default-scheduler replaces the "
                  "cluster's own scheduler")
      ->capture_default_str();
  cmd->add_flag("!--no-leader-elect", o->leader_elect,
                "One replica only, without a Lease (default: leader election on "
                "kube-system/<name>-scheduler)");
  cmd->callback([o, &context] {
    auto yaml = k8s::KubeSchedulerConfigYaml(*o);
    if (Failed(WithFlag(yaml.status(), {{"extender_url", "--extender-url"},
                                        {"weight", "--weight"},
                                        {"scheduler_name", "--scheduler-name"}}),
               context)) {
      return;
    }
    std::fputs(yaml->c_str(), stdout);
  });
}

void RegisterAudit(CLI::App* noun, Context& context) {
  struct Flags {
    std::string kubeconfig, output = "table";
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "audit", "Recompute per-GPU use from the API server's pods; exit 1 on any violation");
  cmd->add_option("--kubeconfig", f->kubeconfig, "The API server (default: in-cluster)")
      ->check(CLI::ExistingFile);
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    base::Env* env = base::Env::Default();
    auto client = k8s::ConnectKube(*env, f->kubeconfig);
    if (Failed(client.status(), context)) return;
    auto nodes = (*client)->Get("/api/v1/nodes");
    if (Failed(nodes.status(), context)) return;
    auto pods = (*client)->Get("/api/v1/pods");
    if (Failed(pods.status(), context)) return;
    auto audit = k8s::AuditGpus(*nodes, *pods);
    if (Failed(audit.status(), context)) return;
    context.exit_code = PrintReport(k8s::AuditToReport(*audit), f->output);
    if (context.exit_code == 0 && !audit->findings.empty()) context.exit_code = kExitFailure;
  });
}

}  // namespace

void RegisterScheduler(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand(
      "scheduler", "Seedance's policies in a Kubernetes cluster: the scheduler extender");
  noun->require_subcommand(1);
  RegisterServe(noun, context);
  RegisterSet(noun, context);
  RegisterPrintConfig(noun, context);
  RegisterAudit(noun, context);
}

}  // namespace seedance::cli
