// `seedancectl topo show|check`: the machine's topology in nvidia-smi's
// legend (feature TOPO-1) and a process's affinity check (TOPO-2, TOPO-3).
#include <unistd.h>

#include <cstdio>

#include "seedance/base/env.h"
#include "seedance/topo/affinity.h"
#include "seedance/topo/discover.h"
#include "seedance/topo/matrix.h"
#include "seedance/topo/topology.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

void RegisterShow(CLI::App* noun, Context& context) {
  struct Flags {
    std::string root, nvlink_from, output;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "show",
      "NUMA nodes, CPUs, caches, GPUs and NICs, and the device matrix of nvidia-smi topo -m");
  cmd->add_option("--root", f->root, "Read /sys under this directory (a saved or fake tree)")
      ->check(InputDirectory());
  cmd->add_option("--nvlink-from", f->nvlink_from,
                  "NVLink links from a saved 'nvidia-smi topo -m' output instead of NVML");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto m = topo::DiscoverMachine(f->root, f->nvlink_from);
    if (Failed(m.status(), context)) return;
    if (f->output == "json") {
      context.exit_code = PrintReport(topo::TopologyToReport(m->topology), f->output);
    } else {
      std::fputs(topo::RenderTopologyTable(m->topology).c_str(), stdout);
    }
  });
}

void RegisterCheck(CLI::App* noun, Context& context) {
  struct Flags {
    std::string root, output;
    int pid = -1;
    double remote_limit = 0.30;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "check",
      "Check a process's CPU and memory placement. Exit 0 consistent, 1 no NUMA information, "
      "2 unbound, 3 memory not local");
  cmd->add_option("--pid", f->pid, "The process (default: this one, e.g. under numactl)")
      ->check(IntIn(0, 1 << 22));
  cmd->add_option("--root", f->root, "Read /sys and /proc under this directory")
      ->check(InputDirectory());
  cmd->add_option("--remote-limit", f->remote_limit,
                  "Remote-to-local resident bytes above which memory is not local")
      ->check(RealIn(0, 100));
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto m = topo::DiscoverMachine(f->root, "");
    if (Failed(m.status(), context)) return;
    const int pid = f->pid >= 0 ? f->pid : static_cast<int>(::getpid());
    auto placement = topo::ReadProcessPlacement(*m->env, pid, m->topology);
    if (Failed(placement.status(), context)) return;
    topo::AffinityOptions options;
    options.remote_to_local_limit = f->remote_limit;
    const auto report = topo::CheckAffinity(m->topology, *placement, options);
    PrintReport(topo::AffinityToReport(report, *placement), f->output);
    context.exit_code = report.exit_code;
  });
}

}  // namespace

void RegisterTopo(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("topo", "Node topology and affinity");
  noun->require_subcommand(1);
  RegisterShow(noun, context);
  RegisterCheck(noun, context);
}

}  // namespace seedance::cli
