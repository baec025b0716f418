// `seedancectl comm advise|nccl-log`: NCCL settings for a topology and a
// reading of NCCL_DEBUG=INFO logs (SPEC COMM-5).
#include <cstdio>

#include "seedance/base/env.h"
#include "seedance/comm/nccl_advisor.h"
#include "seedance/comm/nccl_log.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

void RegisterAdvise(CLI::App* noun, Context& context) {
  struct Flags {
    std::string topology, output;
    bool env_format = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "advise", "NCCL environment settings for this machine's topology (or --topology FILE)");
  cmd->add_option("--topology", f->topology,
                  "YAML topology (docs/design/comm.md); default: detect from /sys");
  cmd->add_flag("--env", f->env_format, "Print only 'export VAR=value' lines, for a shell");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    comm::Topology topology;
    if (f->topology.empty()) {
      topology = comm::DetectTopology(*base::Env::Default());
    } else {
      auto text = base::Env::Default()->ReadFile(f->topology);
      if (Failed(text.status().Annotate("cannot read the topology file"), context)) return;
      auto parsed = comm::ParseTopologyYaml(*text, f->topology);
      if (Failed(parsed.status(), context)) return;
      topology = std::move(*parsed);
    }
    const auto advice = comm::AdviseNccl(topology);
    if (f->env_format) {
      for (const auto& a : advice)
        std::printf("export %s=%s\n", a.variable.c_str(), a.value.c_str());
      return;
    }
    base::Report r;
    r["topology"] = comm::TopologyToReport(topology);
    r["advice"] = comm::AdviceToReport(advice);
    context.exit_code = PrintReport(r, f->output);
  });
}

void RegisterNcclLog(CLI::App* noun, Context& context) {
  struct Flags {
    std::string file, output;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "nccl-log",
      "Rings, channels, transports and the slowest collectives of an NCCL_DEBUG=INFO log");
  cmd->add_option("file", f->file,
                  "The log (NCCL_DEBUG=INFO; add NCCL_DEBUG_SUBSYS=INIT,COLL "
                  "for collectives)")
      ->required();
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto text = base::Env::Default()->ReadFile(f->file);
    if (Failed(text.status().Annotate("cannot read the log"), context)) return;
    auto r = comm::AnalyzeNcclLog(*text, f->file);
    if (Failed(r.status(), context)) return;
    context.exit_code = PrintReport(*r, f->output);
  });
}

}  // namespace

void RegisterComm(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("comm", "Communication: NCCL advice and log reading");
  noun->require_subcommand(1);
  RegisterAdvise(noun, context);
  RegisterNcclLog(noun, context);
}

}  // namespace seedance::cli
