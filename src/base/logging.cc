#include "seedance/base/logging.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

namespace seedance::base {
namespace {

LogLevel InitialLevel() {
  LogLevel level = LogLevel::kWarning;
  if (const char* env = std::getenv("SEEDANCE_LOG_LEVEL")) ParseLogLevel(env, &level);
  return level;
}

std::atomic<int>& LevelStorage() {
  static std::atomic<int> level{static_cast<int>(InitialLevel())};
  return level;
}

const char* Basename(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

void WriteLine(const std::string& line) {
  // One write call per line so that lines from different threads do not mix.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace

void SetMinLogLevel(LogLevel level) { LevelStorage().store(static_cast<int>(level)); }
LogLevel MinLogLevel() { return static_cast<LogLevel>(LevelStorage().load()); }

bool ParseLogLevel(std::string_view text, LogLevel* level) {
  if (text == "debug")
    *level = LogLevel::kDebug;
  else if (text == "info")
    *level = LogLevel::kInfo;
  else if (text == "warning")
    *level = LogLevel::kWarning;
  else if (text == "error")
    *level = LogLevel::kError;
  else
    return false;
  return true;
}

namespace internal {

LogMessage::LogMessage(LogLevel level, const char* file, int line) : level_(level) {
  static constexpr char kLetters[] = {'D', 'I', 'W', 'E'};
  stream_ << kLetters[static_cast<int>(level_)] << ' ' << Basename(file) << ':' << line << "] ";
}

LogMessage::~LogMessage() {
  stream_ << '\n';
  WriteLine(stream_.str());
}

CheckFailure::CheckFailure(const char* condition, const char* file, int line) {
  stream_ << "F " << Basename(file) << ':' << line << "] check failed: " << condition << ' ';
}

CheckFailure::~CheckFailure() {
  stream_ << '\n';
  WriteLine(stream_.str());
  std::abort();
}

}  // namespace internal
}  // namespace seedance::base
