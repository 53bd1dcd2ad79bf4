// Status and Result<T>: how every runtime and kernel function reports failure.
// No exceptions cross the runtime's API; errors are values.
#pragma once

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace sg {

// Grouped by kind. The tools map them to exit codes (SPEC.md §9):
//   kInvalidArgument      -> 1 (usage)
//   kInvalidGraph, kInvalidInput, kNotFound -> 2 (rejected while loading or binding)
//   kRuntimeError, kLimitExceeded, kOutOfMemory, kCancelled, kDeadlineExceeded -> 3
//     (failed while running)
// The numbers are the C API's SG_* codes (c_api.h): append only, never renumber.
enum class StatusCode : unsigned char {
  kOk = 0,
  kInvalidArgument,   // a caller's mistake in using the API (unknown entry, bad option)
  kInvalidGraph,      // the graph file is malformed, corrupt, too new, or uses unknown ops
  kInvalidInput,      // an input is missing, unknown, or has the wrong dtype or shape
  kRuntimeError,      // a shape, index or arithmetic error found while running; a failed Assert
  kLimitExceeded,     // recursion depth, or the Session's memory limit
  kOutOfMemory,       // the host allocator failed
  kCancelled,         // Session::cancel ended the run
  kUnsupported,       // valid request this build cannot serve (e.g. no CUDA)
  kInternal,          // a broken invariant
  kDeadlineExceeded,  // the run's timeout passed (SessionOptions::run_timeout)
  kNotFound,          // the graph file does not exist (or a folder on its path)
};

inline const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kInvalidGraph: return "invalid graph";
    case StatusCode::kInvalidInput: return "invalid input";
    case StatusCode::kRuntimeError: return "runtime error";
    case StatusCode::kLimitExceeded: return "limit exceeded";
    case StatusCode::kOutOfMemory: return "out of memory";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kInternal: return "internal error";
    case StatusCode::kDeadlineExceeded: return "deadline exceeded";
    case StatusCode::kNotFound: return "not found";
  }
  return "?";
}

// One pointer: null when OK, so that returning and dropping an OK status (every
// kernel call on the hot path) costs a store and a test, not a std::string.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : rep_(code == StatusCode::kOk ? nullptr : new Rep{code, std::move(message)}) {}
  Status(const Status& o) : rep_(o.rep_ == nullptr ? nullptr : new Rep(*o.rep_)) {}
  Status(Status&& o) noexcept : rep_(std::exchange(o.rep_, nullptr)) {}
  Status& operator=(const Status& o) {
    if (this != &o) {
      Rep* copy = o.rep_ == nullptr ? nullptr : new Rep(*o.rep_);
      delete rep_;
      rep_ = copy;
    }
    return *this;
  }
  Status& operator=(Status&& o) noexcept {
    if (this != &o) {
      delete rep_;
      rep_ = std::exchange(o.rep_, nullptr);
    }
    return *this;
  }
  ~Status() { delete rep_; }
  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ == nullptr ? StatusCode::kOk : rep_->code; }
  const std::string& message() const {
    static const std::string kNone;
    return rep_ == nullptr ? kNone : rep_->message;
  }

  // Prepends context: "ctx: message".
  Status with_context(const std::string& ctx) const {
    if (ok()) return *this;
    return Status(rep_->code, ctx + ": " + rep_->message);
  }

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  Rep* rep_ = nullptr;
};

inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status invalid_graph(std::string m) { return {StatusCode::kInvalidGraph, std::move(m)}; }
inline Status invalid_input(std::string m) { return {StatusCode::kInvalidInput, std::move(m)}; }
inline Status runtime_error(std::string m) { return {StatusCode::kRuntimeError, std::move(m)}; }
inline Status limit_exceeded(std::string m) { return {StatusCode::kLimitExceeded, std::move(m)}; }
inline Status out_of_memory(std::string m) { return {StatusCode::kOutOfMemory, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status deadline_exceeded(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT(implicit)
  Result(Status status) : v_(std::move(status)) {      // NOLINT(implicit)
    assert(!std::get_if<Status>(&v_)->ok() && "Result from an OK status");
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : *std::get_if<Status>(&v_);
  }
  // The value; calling these on an error is a bug in the caller (check ok() first,
  // or use value_or): it ends the process with the status on stderr, in every
  // build type, since no exception may cross the runtime's API.
  T& value() & { return *checked(); }
  const T& value() const& { return *checked(); }
  T&& value() && { return std::move(*checked()); }
  // The value, or `fallback` on an error.
  template <class U>
  T value_or(U&& fallback) const& {
    return ok() ? *std::get_if<T>(&v_) : static_cast<T>(std::forward<U>(fallback));
  }
  template <class U>
  T value_or(U&& fallback) && {
    return ok() ? std::move(*std::get_if<T>(&v_)) : static_cast<T>(std::forward<U>(fallback));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  T* checked() {
    if (T* v = std::get_if<T>(&v_)) return v;
    value_of_error(*std::get_if<Status>(&v_));
  }
  const T* checked() const {
    if (const T* v = std::get_if<T>(&v_)) return v;
    value_of_error(*std::get_if<Status>(&v_));
  }
  [[noreturn]] static void value_of_error(const Status& s) noexcept {
    std::fprintf(stderr, "sg::Result::value() called on an error (%s): %s\n", status_code_name(s.code()),
                 s.message().c_str());
    std::abort();
  }

  std::variant<T, Status> v_;
};

}  // namespace sg

#define SG_CONCAT_INNER(a, b) a##b
#define SG_CONCAT(a, b) SG_CONCAT_INNER(a, b)

// Returns the status from the enclosing function when it is not OK.
#define SG_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::sg::Status sg_status_ = (expr);             \
    if (!sg_status_.ok()) return sg_status_;      \
  } while (0)

// SG_ASSIGN_OR_RETURN(auto x, make_x()); returns the error status on failure.
#define SG_ASSIGN_OR_RETURN(lhs, expr) SG_ASSIGN_OR_RETURN_IMPL(SG_CONCAT(sg_result_, __LINE__), lhs, expr)
#define SG_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
