#include "tools/seedancectl/cli.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "seedance/base/env.h"
#include "seedance/base/parse.h"

namespace seedance::cli {

namespace {

std::string Text(int64_t v) { return std::to_string(v); }

std::string Text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// A validator that parses with `parse` (base/parse.h) and checks [lo, hi].
template <typename T, typename Parse>
CLI::Validator Bounded(T lo, T hi, Parse parse, const char* kind, const char* name) {
  const std::string range = "in [" + Text(lo) + ", " + Text(hi) + "]";
  return CLI::Validator(
      [lo, hi, range, parse, kind](std::string& text) -> std::string {
        const std::optional<T> v = parse(text);
        if (!v) return "'" + text + "' is not a " + kind;
        if (*v < lo || *v > hi) return "'" + text + "' is not " + range;
        return "";
      },
      range, name);
}

}  // namespace

CLI::Validator IntIn(int64_t lo, int64_t hi) {
  return Bounded<int64_t>(lo, hi, base::ParseInt64, "whole decimal number", "IntIn");
}

CLI::Validator RealIn(double lo, double hi) {
  return Bounded<double>(lo, hi, base::ParseFiniteDouble, "finite decimal number", "RealIn");
}

CLI::Validator OutputPath() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path.empty()) return "an empty path";
        std::error_code ec;
        const std::filesystem::path p(path);
        if (std::filesystem::is_directory(p, ec)) return "'" + path + "' is a directory";
        const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
        if (!std::filesystem::is_directory(dir, ec)) {
          return "the directory of '" + path + "' does not exist";
        }
        return "";
      },
      "FILE", "OutputPath");
}

CLI::Validator InputDirectory() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        std::error_code ec;
        if (path.empty()) return "an empty path";
        if (!std::filesystem::exists(path, ec)) return "'" + path + "' does not exist";
        if (!std::filesystem::is_directory(path, ec)) return "'" + path + "' is not a directory";
        return "";
      },
      "DIR", "InputDirectory");
}

void AddOutputFlag(CLI::App* command, std::string* output) {
  *output = "table";
  command->add_option("-o,--output", *output, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

int PrintReport(const base::Report& report, const std::string& output) {
  const auto format = base::ParseOutputFormat(output).value_or(base::OutputFormat::kTable);
  std::cout << base::Render(report, format);
  return StdoutWritten() ? 0 : kExitFailure;
}

bool StdoutWritten() {
  std::cout.flush();
  if (std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout)) return true;
  std::cerr << "error: cannot write to standard output: " << std::strerror(errno) << " (stdout)"
            << std::endl;
  return false;
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
