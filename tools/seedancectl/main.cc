// seedancectl: the command-line face of Seedance, `seedancectl <noun> <verb>`
// in the style of kubectl. This file only wires the subcommands together;
// each one is a cmd_*.cc file.
#include <csignal>
#include <exception>
#include <functional>
#include <iostream>

#include "seedance/base/env.h"
#include "seedance/port/simd.h"
#include "seedance/version.h"
#include "tools/seedancectl/cli.h"

int main(int argc, char** argv) {
  using namespace seedance::cli;  // NOLINT(google-build-using-namespace): main wires the CLI
  // A write past the file-size limit (ulimit -f) then fails with EFBIG, which is reported and
  // cleaned up, instead of killing the process with a temporary file left behind.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"seedancectl: cut the cost of GPU training and serving"};
  app.name("seedancectl");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(seedance::kVersion));

  // The process's SIMD kernels (port/simd.h), from SEEDANCE_SIMD, before any work.
  const auto simd = seedance::port::SimdKernelFromEnv(*seedance::base::Env::Default());
  const seedance::base::Status simd_set =
      simd.ok() ? seedance::port::SetSimdKernel(*simd) : simd.status();
  if (!simd_set.ok()) {
    PrintError(simd_set);
    return kExitUsage;
  }

  Context context;
  app.add_option("--catalog", context.catalog_file,
                 "YAML file that overrides or extends the built-in GPU catalog")
      ->envname("SEEDANCE_GPU_CATALOG");

  RegisterVersion(app, context);
  RegisterOptimize(app, context);
  RegisterCatalog(app, context);
  RegisterCost(app, context);
  RegisterMem(app, context);
  RegisterPrecision(app, context);
  RegisterComm(app, context);
  RegisterKv(app, context);
  RegisterSimulate(app, context);
  RegisterTopo(app, context);
  RegisterProbe(app, context);
  RegisterScheduler(app, context);
  RegisterNode(app, context);
  RegisterDoctor(app, context);
  RegisterDiagnose(app, context);
  RegisterLoadTest(app, context);

  // Global options (--catalog) are accepted after the noun and verb too: an option a verb does not
  // know falls through to its noun and then to the program. Not for a verb that takes unknown
  // words as its values (allow_extras: precision show's "-inf").
  std::function<void(CLI::App*)> fall_through = [&fall_through](CLI::App* parent) {
    for (CLI::App* sub : parent->get_subcommands({})) {
      if (!sub->get_allow_extras()) sub->fallthrough();
      fall_through(sub);
    }
  };
  fall_through(&app);

  // CLI11 would only say "a subcommand is required" for a misspelt noun or verb.
  if (auto error = CommandWordsError(app, argc, argv)) {
    std::cerr << "error: " << *error << std::endl;
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << " (command line; see 'seedancectl --help')" << std::endl;
    return kExitUsage;
  } catch (const std::exception& e) {
    // The last line of defence: every known cause reports a Status instead. Reaching this is a
    // bug; it still ends with a message and exit 1, never an abort.
    std::cerr << "error: internal error: " << e.what() << std::endl;
    return kExitFailure;
  } catch (...) {
    std::cerr << "error: internal error (unknown exception)" << std::endl;
    return kExitFailure;
  }
  // Reports are flushed as they are printed; this catches anything else written to stdout.
  if (context.exit_code == 0 && !StdoutWritten()) return kExitFailure;
  return context.exit_code;
}
