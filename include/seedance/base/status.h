// Status and StatusOr<T>: how every fallible call in libseedance reports an
// error. No exception crosses the library boundary.
//
// A Status is either OK (it then holds no allocation, so returning OK costs a
// null pointer) or an error with a code, a message saying what went wrong, and
// an optional `where` naming the place (file:line: field, or a flag name).
// The CLI prints an error as `error: <message> (<where>)`.
//
// Thread safety: Status and StatusOr are values; distinct objects may be used
// from different threads, one object needs external synchronisation.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace seedance::base {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller's input is wrong (bad YAML, negative size)
  kNotFound,         // a file, key or catalog entry does not exist
  kAlreadyExists,
  kOutOfRange,          // a value outside the range the operation accepts
  kFailedPrecondition,  // the system is not in a state to do this
  kResourceExhausted,   // out of memory, budget, capacity
  kUnavailable,         // a device or service is not reachable now
  kDeadlineExceeded,
  kUnimplemented,
  kIoError,   // reading or writing a file failed
  kInternal,  // a broken invariant: a bug in Seedance
};

// "INVALID_ARGUMENT" and so on.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() noexcept = default;
  Status(StatusCode code, std::string message, std::string where = {});

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return ok() ? StatusCode::kOk : state_->code; }
  // Empty for an OK status.
  std::string_view message() const;
  std::string_view where() const;

  // A copy whose `where` is `where` (keeps code and message). Used when a
  // caller knows the place better than the callee did.
  Status WithWhere(std::string where) const;
  // A copy whose message is `prefix + ": " + message()`.
  Status Annotate(std::string_view prefix) const;

  // "OK", or "INVALID_ARGUMENT: <message> (<where>)".
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b);

 private:
  struct State {
    StatusCode code;
    std::string message;
    std::string where;
  };
  std::unique_ptr<State> state_;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message, std::string where = {});
Status NotFoundError(std::string message, std::string where = {});
Status OutOfRangeError(std::string message, std::string where = {});
Status FailedPreconditionError(std::string message, std::string where = {});
Status ResourceExhaustedError(std::string message, std::string where = {});
Status UnavailableError(std::string message, std::string where = {});
Status UnimplementedError(std::string message, std::string where = {});
Status IoError(std::string message, std::string where = {});
Status InternalError(std::string message, std::string where = {});

namespace internal {
[[noreturn]] void DieOnBadStatusAccess(const Status& status);
}  // namespace internal

// Either a value of type T or a non-OK Status. Accessing the value of an error
// aborts the process with the status printed (a bug in the caller).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // Implicit on purpose: `return value;` and `return SomeError(...);` both work.
  StatusOr(const T& value) : value_(value) {}        // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT
  StatusOr(Status status)                            // NOLINT
      : status_(status.ok() ? InternalError("StatusOr constructed from an OK status")
                            : std::move(status)) {}

  bool ok() const { return status_.ok(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  const T& value() const& {
    Check();
    return *value_;
  }
  T& value() & {
    Check();
    return *value_;
  }
  T&& value() && {
    Check();
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  T value_or(T fallback) const& { return ok() ? *value_ : std::move(fallback); }

 private:
  void Check() const {
    if (!status_.ok()) internal::DieOnBadStatusAccess(status_);
  }
  Status status_;
  std::optional<T> value_;
};

}  // namespace seedance::base

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define SEEDANCE_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::seedance::base::Status _seedance_status = (expr);  \
    if (!_seedance_status.ok()) return _seedance_status; \
  } while (false)

#define SEEDANCE_CONCAT_INNER(a, b) a##b
#define SEEDANCE_CONCAT(a, b) SEEDANCE_CONCAT_INNER(a, b)

// `SEEDANCE_ASSIGN_OR_RETURN(auto x, MakeX());` declares/assigns x from a
// StatusOr, or returns its error from the enclosing function.
#define SEEDANCE_ASSIGN_OR_RETURN(lhs, rexpr) \
  SEEDANCE_ASSIGN_OR_RETURN_IMPL(SEEDANCE_CONCAT(_seedance_statusor_, __LINE__), lhs, rexpr)
// `lhs` may be a declaration ("auto x"), so it cannot be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SEEDANCE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                   \
  if (!tmp.ok()) return std::move(tmp).status();        \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
