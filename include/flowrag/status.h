// Status and Result<T>: how every module boundary in flowrag reports errors.
//
// A Status is either OK or carries a code and a message. Messages name the
// input that was wrong (file, line, field, URL) and what was expected, e.g.
//   corpus.jsonl:17: expected a JSON object with a string "text" field
// Exceptions never cross the public API; functions that can fail return a
// Status or a Result<T>.
//
// Thread-safety: values; safe to copy and move between threads.
#ifndef FLOWRAG_STATUS_H_
#define FLOWRAG_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace flowrag {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller's input is malformed (bad JSON, bad option)
  kNotFound,         // a file, document or key does not exist
  kAlreadyExists,
  kCorruption,       // stored data is inconsistent or not a flowrag store
  kIoError,          // the OS refused a read or write
  kUnavailable,      // a remote service failed or timed out (retryable)
  kDeadlineExceeded,
  kFailedPrecondition,  // the operation needs state that is not there
  kCancelled,
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "InvalidArgument: corpus.jsonl:3: ..." or "OK".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context: `.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace flowrag

// Propagates a non-OK Status from an expression returning Status.
#define FLOWRAG_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::flowrag::Status _st = (expr);            \
    if (!_st.ok()) return _st;                 \
  } while (0)

#define FLOWRAG_CONCAT_INNER(a, b) a##b
#define FLOWRAG_CONCAT(a, b) FLOWRAG_CONCAT_INNER(a, b)

// Declares `lhs` from a Result<T> expression, or returns its Status.
#define FLOWRAG_ASSIGN_OR_RETURN(lhs, expr) \
  FLOWRAG_ASSIGN_OR_RETURN_IMPL(FLOWRAG_CONCAT(_res_, __LINE__), lhs, expr)
#define FLOWRAG_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // FLOWRAG_STATUS_H_
