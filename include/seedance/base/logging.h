// Small logging and invariant-check helpers.
//
//   SEEDANCE_LOG(kInfo) << "planned " << n << " buffers";
//   SEEDANCE_CHECK(offset % alignment == 0) << "offset " << offset;
//   SEEDANCE_DCHECK(IsValid());   // compiled out when NDEBUG is defined
//
// Log lines go to stderr as `<L> <file>:<line>] <text>`. The minimum level is
// kWarning unless SEEDANCE_LOG_LEVEL (debug|info|warning|error) or
// SetMinLogLevel says otherwise. A failed CHECK prints the condition and the
// streamed text, then aborts: it marks a bug, never bad user input (bad input
// is a Status).
//
// Thread safety: logging may be called from any thread; each line is written
// with one write call.
#pragma once

#include <sstream>
#include <string_view>

namespace seedance::base {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

void SetMinLogLevel(LogLevel level);
LogLevel MinLogLevel();
// Parses "debug", "info", "warning", "error"; false when the text is none of them.
bool ParseLogLevel(std::string_view text, LogLevel* level);

namespace internal {

class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

class CheckFailure {
 public:
  CheckFailure(const char* condition, const char* file, int line);
  [[noreturn]] ~CheckFailure();
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `cond ? (void)0 : Voidify() & stream << ...` type-check.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace internal
}  // namespace seedance::base

// The macros end in a stream for `<< ...`, so they cannot be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SEEDANCE_LOG(level)                                                                     \
  (::seedance::base::LogLevel::level < ::seedance::base::MinLogLevel())                         \
      ? (void)0                                                                                 \
      : ::seedance::base::internal::Voidify() &                                                 \
            ::seedance::base::internal::LogMessage(::seedance::base::LogLevel::level, __FILE__, \
                                                   __LINE__)                                    \
                .stream()

#define SEEDANCE_CHECK(condition)               \
  (condition)                                   \
      ? (void)0                                 \
      : ::seedance::base::internal::Voidify() & \
            ::seedance::base::internal::CheckFailure(#condition, __FILE__, __LINE__).stream()
// NOLINTEND(bugprone-macro-parentheses)

#ifdef NDEBUG
#define SEEDANCE_DCHECK(condition) \
  while (false) SEEDANCE_CHECK(condition)
#else
#define SEEDANCE_DCHECK(condition) SEEDANCE_CHECK(condition)
#endif
