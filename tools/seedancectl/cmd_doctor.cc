// `seedancectl doctor` (feature PROBE-5): the GPU software stack this machine has, checked
// against the table of known problems (probe/doctor.h); exit 1 when a row matches.
#include "seedance/base/env.h"
#include "seedance/probe/doctor.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {

void RegisterDoctor(CLI::App& app, Context& context) {
  struct Flags {
    std::string root = "/", table, output;
    std::vector<std::string> python_prefixes;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Check the driver, CUDA, cuDNN, cuBLAS, NCCL, PyTorch and Transformers versions against "
      "known problems; exit 1 when one matches");
  cmd->add_option("--root", f->root, "Read the machine's files under this directory")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  cmd->add_option("--python-prefix", f->python_prefixes,
                  "A Python environment to look into (repeatable; default: $VIRTUAL_ENV, "
                  "$CONDA_PREFIX)");
  cmd->add_option("--table", f->table, "A table of known problems instead of the built-in one")
      ->check(CLI::ExistingFile);
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    base::Env& env = *base::Env::Default();
    probe::DoctorOptions o;
    o.root = f->root;
    o.python_prefixes =
        f->python_prefixes.empty() ? probe::DefaultPythonPrefixes(env) : f->python_prefixes;
    std::string text(probe::KnownProblemsYaml());
    std::string file = "known_problems.yaml (built in)";
    if (!f->table.empty()) {
      auto read = env.ReadFile(f->table);
      if (Failed(read.status(), context)) return;
      text = std::move(*read);
      file = f->table;
    }
    auto table = probe::ParseKnownProblems(text, file);
    if (Failed(table.status(), context)) return;
    std::vector<std::string> unreadable;
    const probe::Stack stack = probe::FindStack(env, o, &unreadable);
    const probe::DoctorReport d = probe::Diagnose(stack, *table, std::move(unreadable));
    context.exit_code = PrintReport(probe::DoctorToReport(d), f->output);
    if (context.exit_code == 0 && !d.matched.empty()) context.exit_code = kExitFailure;
  });
}

}  // namespace seedance::cli
