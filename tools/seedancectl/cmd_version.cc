// `seedancectl version`: what was built, and what CUDA this machine offers.
#include "seedance/port/cuda_info.h"
#include "seedance/version.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor: 13000 is "13.0".
std::string VersionText(int version) {
  if (version <= 0) return "none";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

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
    const port::CudaInfo cuda = port::QueryCuda();
    base::Report& c = r["cuda"];
    c["compiled"] = cuda.compiled;
    c["compiled_version"] = VersionText(cuda.compiled_version);
    c["driver_version"] = VersionText(cuda.driver_version);
    c["device_count"] = cuda.devices.size();
    if (!cuda.error.empty()) c["status"] = cuda.error;
    if (!cuda.devices.empty()) {
      base::Report devices = base::Report::array();
      for (const auto& d : cuda.devices) {
        devices.push_back({{"index", d.index},
                           {"name", d.name},
                           {"memory_bytes", d.memory_bytes},
                           {"compute_capability", std::to_string(d.compute_major) + "." +
                                                      std::to_string(d.compute_minor)}});
      }
      r["cuda_devices"] = devices;
    }
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
