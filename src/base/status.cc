#include "seedance/base/status.h"

#include <cstdio>
#include <cstdlib>

namespace seedance::base {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case StatusCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case StatusCode::kIoError:
      return "IO_ERROR";
    case StatusCode::kInternal:
      return "INTERNAL";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message, std::string where) {
  if (code == StatusCode::kOk) return;  // an OK status carries nothing
  state_ = std::make_unique<State>(State{code, std::move(message), std::move(where)});
}

Status::Status(const Status& other)
    : state_(other.state_ ? std::make_unique<State>(*other.state_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) state_ = other.state_ ? std::make_unique<State>(*other.state_) : nullptr;
  return *this;
}

std::string_view Status::message() const { return ok() ? std::string_view() : state_->message; }
std::string_view Status::where() const { return ok() ? std::string_view() : state_->where; }

Status Status::WithWhere(std::string where) const {
  if (ok()) return Status();
  return Status(state_->code, state_->message, std::move(where));
}

Status Status::Annotate(std::string_view prefix) const {
  if (ok()) return Status();
  return Status(state_->code, std::string(prefix) + ": " + state_->message, state_->where);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(state_->code));
  out += ": ";
  out += state_->message;
  if (!state_->where.empty()) {
    out += " (";
    out += state_->where;
    out += ")";
  }
  return out;
}

bool operator==(const Status& a, const Status& b) {
  if (a.ok() || b.ok()) return a.ok() == b.ok();
  return a.state_->code == b.state_->code && a.state_->message == b.state_->message &&
         a.state_->where == b.state_->where;
}

Status InvalidArgumentError(std::string m, std::string w) {
  return Status(StatusCode::kInvalidArgument, std::move(m), std::move(w));
}
Status NotFoundError(std::string m, std::string w) {
  return Status(StatusCode::kNotFound, std::move(m), std::move(w));
}
Status OutOfRangeError(std::string m, std::string w) {
  return Status(StatusCode::kOutOfRange, std::move(m), std::move(w));
}
Status FailedPreconditionError(std::string m, std::string w) {
  return Status(StatusCode::kFailedPrecondition, std::move(m), std::move(w));
}
Status ResourceExhaustedError(std::string m, std::string w) {
  return Status(StatusCode::kResourceExhausted, std::move(m), std::move(w));
}
Status UnavailableError(std::string m, std::string w) {
  return Status(StatusCode::kUnavailable, std::move(m), std::move(w));
}
Status UnimplementedError(std::string m, std::string w) {
  return Status(StatusCode::kUnimplemented, std::move(m), std::move(w));
}
Status IoError(std::string m, std::string w) {
  return Status(StatusCode::kIoError, std::move(m), std::move(w));
}
Status InternalError(std::string m, std::string w) {
  return Status(StatusCode::kInternal, std::move(m), std::move(w));
}

namespace internal {
void DieOnBadStatusAccess(const Status& status) {
  std::fprintf(stderr, "fatal: value() called on an error StatusOr: %s\n",
               status.ToString().c_str());
  std::abort();
}
}  // namespace internal

}  // namespace seedance::base
