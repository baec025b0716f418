#include "tools/seedancectl/cli.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "seedance/base/env.h"
#include "seedance/base/parse.h"
#include "seedance/base/printable.h"
#include "seedance/base/suggest.h"
#include "seedance/probe/exporter.h"

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

volatile std::sig_atomic_t g_stop_requested = 0;
void RequestStop(int) { g_stop_requested = 1; }

}  // namespace

void InstallStopSignals() {
  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);
}

bool StopRequested() { return g_stop_requested != 0; }

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

CLI::Validator ListenAddress() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto parsed = probe::ParseListenAddress(text);
        return parsed.ok() ? "" : std::string(parsed.status().message());
      },
      "HOST:PORT", "ListenAddress");
}

CLI::Validator PrintableName() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "an empty name";
        if (text.size() > 256) return "a name longer than 256 bytes";
        if (base::Printable(text) != text) {
          return "not printable UTF-8: '" + base::Printable(text) + "'";
        }
        return "";
      },
      "NAME", "PrintableName");
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
      ->check(CLI::IsMember({"table", "wide", "json"}))
      ->capture_default_str();
}

int PrintReport(const base::Report& report, const std::string& output,
                const base::TableOptions& options) {
  const auto parsed = base::ParseOutputFormat(output);
  const base::OutputFormat format = parsed.ok() ? *parsed : base::OutputFormat::kTable;
  std::cout << base::Render(report, format, options);
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
  // Messages quote input: bounded, and every byte made visible (base/printable.h).
  std::string line = "error: " + base::Printable(status.message());
  if (!status.where().empty()) line += " (" + base::Printable(status.where()) + ")";
  std::cerr << line << std::endl;
  return kExitFailure;
}

namespace {

std::vector<std::string> NamesOf(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// "unknown <what> '<word>'<of>; did you mean '<name>'? The <what>s: a, b, c"
std::string Unknown(const std::string& what, const std::string& word, const std::string& of,
                    const std::vector<std::string>& names) {
  std::string line = "unknown " + what + " '" + word + "'" + of;
  const auto close = base::ClosestName(word, names);
  line += close ? "; did you mean '" + *close + "'?" : ".";
  return line + " The " + what + "s: " + Joined(names);
}

}  // namespace

std::optional<std::string> CommandWordsError(const CLI::App& app, int argc, char** argv) {
  // Global options come before the noun: skip them and the value of one that takes a value.
  int i = 1;
  while (i < argc && argv[i][0] == '-') {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "--version") return std::nullopt;
    const CLI::Option* opt = app.get_option_no_throw(arg.substr(0, arg.find('=')));
    i += (opt != nullptr && opt->get_type_size() > 0 && arg.find('=') == std::string::npos) ? 2 : 1;
  }
  if (i >= argc) return std::nullopt;  // CLI11 says a command is required
  const std::string noun_word = argv[i];
  const CLI::App* noun = nullptr;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(noun_word)) noun = sub;
  }
  if (noun == nullptr) {
    return Unknown("command", noun_word, "", NamesOf(app)) +
           " (command line; see 'seedancectl --help')";
  }
  const std::vector<std::string> verbs = NamesOf(*noun);
  if (verbs.empty()) return std::nullopt;
  const std::string see = " (command line; see 'seedancectl " + noun_word + " --help')";
  if (i + 1 >= argc) {
    return "'" + noun_word + "' needs a verb: " + Joined(verbs) + see;
  }
  const std::string verb_word = argv[i + 1];
  if (verb_word[0] == '-') return std::nullopt;  // the noun's --help, or CLI11's own error
  for (const CLI::App* sub : noun->get_subcommands({})) {
    if (sub->check_name(verb_word)) return std::nullopt;
  }
  return Unknown("verb", verb_word, " for '" + noun_word + "'", verbs) + see;
}

base::Status WithFlag(
    const base::Status& status,
    std::initializer_list<std::pair<std::string_view, std::string_view>> field_to_flag) {
  for (const auto& [field, flag] : field_to_flag) {
    if (status.where() == field) return status.WithWhere(std::string(flag));
  }
  return status;
}

Progress::Progress(std::string label, int total)
    : label_(std::move(label)), total_(total), shown_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (shown_ && done_ > 0) std::fputc('\n', stderr);
}

void Progress::Step() {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  if (shown_) std::fprintf(stderr, "\r%s: %d of %d", label_.c_str(), done_, total_);
}

void Progress::Set(int done) {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = done;
  if (shown_) std::fprintf(stderr, "\r%s: %d of %d", label_.c_str(), done_, total_);
}

SecondsTicker::SecondsTicker(std::string label, double limit_s)
    : label_(std::move(label)), limit_s_(limit_s), shown_(isatty(STDERR_FILENO) == 1) {
  if (!shown_) return;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
      ++seconds_;
      if (seconds_ <= limit_s_) {
        std::fprintf(stderr, "\r%s: %d s of a %g s limit", label_.c_str(), seconds_, limit_s_);
      } else {
        std::fprintf(stderr, "\r%s: %d s, past the %g s limit (finishing)", label_.c_str(),
                     seconds_, limit_s_);
      }
    }
  });
}

SecondsTicker::~SecondsTicker() {
  if (!shown_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_one();
  thread_.join();
  if (seconds_ > 0) std::fputc('\n', stderr);
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
