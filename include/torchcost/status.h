// Status and Result<T>: how torchcost reports errors without exceptions.
#ifndef TORCHCOST_STATUS_H_
#define TORCHCOST_STATUS_H_

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace torchcost {

// A Status is the outcome of an operation: ok, or an error code with a one-line
// message.
class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,
    kNotFound,
    kParseError,
    kOutOfRange,
    kUnimplemented,
    kInternal
  };

  // Returns a success status.
  Status() = default;
  Status(Code code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return Status(Code::kInvalidArgument, std::move(msg));
  }
  static Status NotFound(std::string msg) {
    return Status(Code::kNotFound, std::move(msg));
  }
  static Status ParseError(std::string msg) {
    return Status(Code::kParseError, std::move(msg));
  }
  static Status OutOfRange(std::string msg) {
    return Status(Code::kOutOfRange, std::move(msg));
  }
  static Status Unimplemented(std::string msg) {
    return Status(Code::kUnimplemented, std::move(msg));
  }
  static Status Internal(std::string msg) {
    return Status(Code::kInternal, std::move(msg));
  }

  // Returns true iff the status indicates success.
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // Returns the one-line message; empty on success.
  const std::string& message() const { return message_; }
  // Returns a copy whose message is "prefix: message".
  Status WithPrefix(const std::string& prefix) const {
    return ok() ? *this : Status(code_, prefix + ": " + message_);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// A Result<T> holds either a value of type T or a non-ok Status.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design.
  Result(Status status)
      : status_(std::move(status)) {}  // NOLINT: implicit by design.

  // Returns true iff a value is held.
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  T& operator*() & { return *value_; }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace torchcost

// Returns early from the enclosing function if `expr` (a Status) is not ok.
#define TORCHCOST_RETURN_IF_ERROR(expr)      \
  do {                                       \
    ::torchcost::Status _tc_status = (expr); \
    if (!_tc_status.ok()) return _tc_status; \
  } while (0)

#define TORCHCOST_CONCAT_INNER_(a, b) a##b
#define TORCHCOST_CONCAT_(a, b) TORCHCOST_CONCAT_INNER_(a, b)
// Assigns the value of `rexpr` (a Result) to `lhs`, or returns its Status.
#define TORCHCOST_ASSIGN_OR_RETURN(lhs, rexpr)                \
  auto TORCHCOST_CONCAT_(_tc_result_, __LINE__) = (rexpr);    \
  if (!TORCHCOST_CONCAT_(_tc_result_, __LINE__).ok())         \
    return TORCHCOST_CONCAT_(_tc_result_, __LINE__).status(); \
  lhs = std::move(TORCHCOST_CONCAT_(_tc_result_, __LINE__)).value()

#endif  // TORCHCOST_STATUS_H_
