// `seedancectl comm advise|nccl-log`: NCCL settings for a topology and a
// reading of NCCL_DEBUG=INFO logs (feature COMM-5).
#include <cstdio>

#include "seedance/base/env.h"
#include "seedance/comm/nccl_advisor.h"
#include "seedance/comm/nccl_log.h"
#include "seedance/topo/discover.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

void RegisterAdvise(CLI::App* noun, Context& context) {
  struct Flags {
    std::string topology, root, nvlink_from, output;
    int nodes = 1;
    bool env_format = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "advise", "NCCL environment settings for this machine's topology (or --topology FILE)");
  cmd->add_option(
      "--topology", f->topology,
      "YAML topology (docs/design/comm.md); default: this node's, as topo show reads it");
  cmd->add_option("--root", f->root, "Read /sys under this directory (a saved or fake tree)")
      ->check(InputDirectory());
  cmd->add_option("--nvlink-from", f->nvlink_from,
                  "NVLink links from a saved 'nvidia-smi topo -m' output instead of NVML");
  cmd->add_option("--nodes", f->nodes, "Nodes of the job, each like this one (with no --topology)")
      ->check(IntIn(1, 1 << 20))
      ->capture_default_str();
  cmd->get_option("--topology")->excludes(cmd->get_option("--root"));
  cmd->get_option("--topology")->excludes(cmd->get_option("--nodes"));
  cmd->get_option("--topology")->excludes(cmd->get_option("--nvlink-from"));
  cmd->add_flag("--env", f->env_format, "Print only 'export VAR=value' lines, for a shell");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    comm::AdviseRequest request;
    if (f->topology.empty()) {
      request.root = f->root;
      request.nvlink_from = f->nvlink_from;
      request.nodes = f->nodes;
    } else {
      auto text = base::Env::Default()->ReadFile(f->topology);
      if (Failed(text.status().Annotate("cannot read the topology file"), context)) return;
      request.topology_yaml = std::move(*text);
      request.topology_file = f->topology;
    }
    auto r = comm::AdviseReport(request);
    if (Failed(r.status(), context)) return;
    if (f->env_format) {
      for (const auto& a : (*r)["advice"]) {
        std::printf("export %s=%s\n", a["variable"].get<std::string>().c_str(),
                    a["value"].get<std::string>().c_str());
      }
      return;
    }
    context.exit_code = PrintReport(*r, f->output);
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
  // Input files are named flags in every verb (--input, --model, --nodes); the one positional
  // is optimize's job spec.
  cmd->add_option("--input", f->file,
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
