// `seedancectl version`: what was built, and what CUDA this machine offers.
#include "seedance/port/cuda_info.h"
#include "seedance/port/simd.h"
#include "seedance/version.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {

void RegisterVersion(CLI::App& app, Context& context) {
  struct Flags {
    std::string output;
    bool check_gpu = false;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("version", "Print the version, build and CUDA details");
  AddOutputFlag(cmd, &flags->output);
  cmd->add_flag("--check-gpu", flags->check_gpu,
                "Also run a small kernel on GPU 0 and compare its result with the host");
  cmd->callback([flags, &context] {
    base::Report r;
    r["version"] = std::string(kVersion);
    r["git_commit"] = std::string(kGitCommit);
    r["build_type"] = std::string(kBuildType);
    r["compiler"] = std::string(kCompiler);
    r["simd"] = port::SimdToReport();
    r["cuda"] = port::CudaInfoToReport(port::QueryCuda());
    base::Report& c = r["cuda"];
    if (flags->check_gpu) {
      const base::Status s = port::CudaSelfTest();
      c["self_test"] = s.ok() ? "passed" : std::string(s.message());
      if (!s.ok()) {
        PrintReport(r, flags->output);
        context.exit_code = PrintError(s.Annotate("GPU self-test"));
        return;
      }
    }
    context.exit_code = PrintReport(r, flags->output);
  });
}

}  // namespace seedance::cli
