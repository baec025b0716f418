// `seedancectl simulate`: the FGD paper's protocol over a node and a pod list,
// for one or more policies, averaged over seeds (SPEC SCHED-7a; the event
// mode and the HTML report are not built yet).
#include <numeric>

#include "seedance/base/env.h"
#include "seedance/sched/fgd_protocol.h"
#include "seedance/sched/readers.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {

void RegisterSimulate(CLI::App& app, Context& context) {
  struct Flags {
    std::string nodes, pods, protocol = "fgd", output;
    std::vector<std::string> policies = {"fgd"};
    int seeds = 10;
    uint64_t first_seed = 42;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Schedule a pod trace on a node list with each policy (FGD protocol)");
  cmd->add_option("--nodes", f->nodes, "Node list (Alibaba 2023 CSV)")->required();
  cmd->add_option("--pods", f->pods, "Pod list (Alibaba 2023 CSV)")->required();
  cmd->add_option("--policy", f->policies,
                  "Policies, comma-separated: random, bestfit, dotprod, gpupacking, fgd")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--protocol", f->protocol, "fgd (events: not built yet)")
      ->check(CLI::IsMember({"fgd"}))
      ->capture_default_str();
  cmd->add_option("--seeds", f->seeds, "Seeds (42, 43, ...) to average over")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    base::Env& env = *base::Env::Default();
    auto node_text = env.ReadFile(f->nodes);
    if (Failed(node_text.status().Annotate("cannot read the node list"), context)) return;
    auto nodes = sched::ReadAlibabaNodes(*node_text, f->nodes);
    if (Failed(nodes.status(), context)) return;
    auto pod_text = env.ReadFile(f->pods);
    if (Failed(pod_text.status().Annotate("cannot read the pod list"), context)) return;
    auto pods = sched::ReadAlibabaPods(*pod_text, f->pods);
    if (Failed(pods.status(), context)) return;
    base::Report r;
    r["nodes"] = f->nodes;
    r["pods"] = f->pods;
    r["seeds"] = f->seeds;
    r["policies"] = base::Report::array();
    for (const std::string& name : f->policies) {
      std::vector<double> sum(9, 0.0);
      double runtime = 0;
      for (int s = 0; s < f->seeds; ++s) {
        sched::FgdRunOptions o;
        o.policy = name;
        o.seed = f->first_seed + static_cast<uint64_t>(s);
        auto run = sched::RunFgdProtocol(*nodes, *pods, o);
        if (Failed(run.status(), context)) return;
        for (size_t i = 0; i < 9; ++i) sum[i] += run->alloc_pct_at[i];
        runtime += run->runtime_ms;
      }
      base::Report p;
      p["policy"] = name;
      base::Report at = base::Report::object();
      for (size_t i = 0; i < 9; ++i) at[std::to_string(50 + 10 * i)] = sum[i] / f->seeds;
      p["alloc_ratio_pct_at"] = at;
      p["unallocated_gpu_pct_at_130"] = 100 - sum[8] / f->seeds;
      p["runtime_ms"] = runtime / f->seeds;
      r["policies"].push_back(p);
    }
    context.exit_code = PrintReport(r, f->output);
  });
}

}  // namespace seedance::cli
