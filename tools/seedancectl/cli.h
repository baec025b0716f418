// Shared plumbing of seedancectl's subcommands: the global options, the
// `--output` flag, printing reports, and turning a Status into the CLI's
// error line. Each subcommand lives in its own cmd_*.cc file and registers
// itself through one Register* function declared here.
#pragma once

#include <CLI/CLI.hpp>
#include <condition_variable>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"

namespace seedance::cli {

// Exit codes: 0 success, 1 the command failed (bad input, failed check),
// 2 the command line itself is wrong.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct Context {
  std::string catalog_file;  // --catalog / SEEDANCE_GPU_CATALOG
  int exit_code = 0;
};

// Strict numeric option values: a plain decimal number (base/parse.h: no '', NaN, inf, hex, '+'
// or spaces) inside [lo, hi]. Every numeric option of seedancectl carries one, so its range is
// documented in --help ("in [lo, hi]") and a value outside it exits 2 naming the flag.
CLI::Validator IntIn(int64_t lo, int64_t hi);
CLI::Validator RealIn(double lo, double hi);

// A file the command will write: not empty, not a directory, in a directory that exists. Checked
// when the command line is read, so a bad path fails before any work is done.
CLI::Validator OutputPath();
// HOST:PORT as the servers listen (probe::ParseListenAddress); a malformed one is a usage error.
CLI::Validator ListenAddress();
// A name clients must be able to send back: 1 to 256 bytes of printable UTF-8.
CLI::Validator PrintableName();
// A directory to read from (--root): it must exist and be a directory.
CLI::Validator InputDirectory();

// The long-running verbs (serve, listen, agent) stop cleanly on SIGINT or SIGTERM: the handlers
// set a flag that StopRequested() reads (async-signal-safe: a sig_atomic_t write).
void InstallStopSignals();
bool StopRequested();

// Adds `--output,-o table|wide|json` (default table: 100 columns, the verdict first; wide: every
// column) to a reporting command.
void AddOutputFlag(CLI::App* command, std::string* output);

// The noun and verb of a command line, checked against the registered commands before CLI11
// parses it (CLI11 only says "a subcommand is required", and `kv nosuchverb --help` would print
// the noun's help and exit 0): the error line, with a "did you mean" when a name is close, or
// nullopt when the words are known (or help is asked of a noun).
std::optional<std::string> CommandWordsError(const CLI::App& app, int argc, char** argv);

// Progress of a long command on stderr, only when stderr is a terminal (a pipe or a file sees
// nothing): "<label>: <done> of <total>" rewritten in place, and a newline when it ends.
// Step() and Set() may be called from several threads.
class Progress {
 public:
  Progress(std::string label, int total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void Step();
  void Set(int done);  // done so far (a count the caller keeps)

 private:
  std::string label_;
  int total_, done_ = 0;
  bool shown_;
  std::mutex mu_;
};

// While alive, shows the seconds spent once a second, "<label>: 4 s of a 10 s limit", for a
// search bounded by a time limit (`mem plan`'s exact search), so a long wait shows it is working
// and when it should end; past the limit it says so. Nothing is shown when stderr is not a
// terminal.
class SecondsTicker {
 public:
  SecondsTicker(std::string label, double limit_s);
  ~SecondsTicker();
  SecondsTicker(const SecondsTicker&) = delete;
  SecondsTicker& operator=(const SecondsTicker&) = delete;

 private:
  std::string label_;
  double limit_s_;
  bool shown_;
  int seconds_ = 0;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Prints `report` to stdout in the chosen format; returns 0, or kExitFailure (with an error line)
// when standard output cannot be written (a full disk, a closed pipe or descriptor).
// `options` says which sections only --verbose shows.
int PrintReport(const base::Report& report, const std::string& output,
                const base::TableOptions& options = {});

// Prints `error: <message> (<where>)` to stderr; returns kExitFailure.
int PrintError(const base::Status& status);

// Flushes standard output; false (with an error line on stderr) when a write to it failed.
bool StdoutWritten();

// When `status` is an error: prints it, sets the exit code, returns true.
bool Failed(const base::Status& status, Context& context);

// The library's errors name the option of its request (`rate`, `tiers`); the CLI says which flag
// set it. `status` with its `where` replaced by the flag of the field it names, when the table
// has that field; otherwise unchanged.
base::Status WithFlag(
    const base::Status& status,
    std::initializer_list<std::pair<std::string_view, std::string_view>> field_to_flag);

// The built-in catalog, with the --catalog file applied when one was given.
base::StatusOr<cost::GpuCatalog> LoadCatalog(const Context& context);

void RegisterVersion(CLI::App& app, Context& context);
void RegisterOptimize(CLI::App& app, Context& context);
void RegisterCatalog(CLI::App& app, Context& context);
void RegisterCost(CLI::App& app, Context& context);
void RegisterMem(CLI::App& app, Context& context);
void RegisterPrecision(CLI::App& app, Context& context);
void RegisterComm(CLI::App& app, Context& context);
void RegisterKv(CLI::App& app, Context& context);
// `kv serve`, under the `kv` noun (cmd_kv_serve.cc).
void RegisterKvServe(CLI::App* kv, Context& context);
void RegisterSimulate(CLI::App& app, Context& context);
void RegisterTopo(CLI::App& app, Context& context);
void RegisterProbe(CLI::App& app, Context& context);
void RegisterScheduler(CLI::App& app, Context& context);
void RegisterNode(CLI::App& app, Context& context);
void RegisterDoctor(CLI::App& app, Context& context);
void RegisterDiagnose(CLI::App& app, Context& context);
void RegisterLoadTest(CLI::App& app, Context& context);

}  // namespace seedance::cli
