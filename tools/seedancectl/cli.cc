#include "tools/seedancectl/cli.h"

#include <cstdio>
#include <iostream>

#include "seedance/base/env.h"

namespace seedance::cli {

void AddOutputFlag(CLI::App* command, std::string* output) {
  *output = "table";
  command->add_option("-o,--output", *output, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

int PrintReport(const base::Report& report, const std::string& output) {
  const auto format = base::ParseOutputFormat(output).value_or(base::OutputFormat::kTable);
  std::cout << base::Render(report, format) << std::flush;
  return 0;
}

int PrintError(const base::Status& status) {
  std::string line = "error: " + std::string(status.message());
  if (!status.where().empty()) line += " (" + std::string(status.where()) + ")";
  std::cerr << line << std::endl;
  return kExitFailure;
}

bool Failed(const base::Status& status, Context& context) {
  if (status.ok()) return false;
  context.exit_code = PrintError(status);
  return true;
}

base::StatusOr<cost::GpuCatalog> LoadCatalog(const Context& context) {
  if (context.catalog_file.empty()) return cost::GpuCatalog::BuiltIn();
  auto text = base::Env::Default()->ReadFile(context.catalog_file);
  if (!text.ok()) return text.status().Annotate("cannot read the GPU catalog");
  return cost::GpuCatalog::WithOverrides(cost::GpuCatalog::BuiltIn(), *text, context.catalog_file);
}

}  // namespace seedance::cli
