// Status and Result<T>: how setup code reports failure without exceptions.
//
// A Status is either ok or carries a code and a human-readable message that
// names what failed (file, key, syscall). Result<T> holds a T or a non-ok
// Status. Both are plain values; neither is thread-safe to mutate
// concurrently. Per-packet code does not use these (it returns enums).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace tilestream {

class Status {
 public:
  enum class Code { kOk = 0, kInvalidArgument, kNotFound, kIoError, kUnsupported, kInternal };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status Unsupported(std::string msg) { return {Code::kUnsupported, std::move(msg)}; }
  static Status Internal(std::string msg) { return {Code::kInternal, std::move(msg)}; }
  // "what: strerror(err)". `what` names the operation and its object.
  static Status IoError(const std::string& what, int err);
  static Status IoError(std::string msg) { return {Code::kIoError, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok());
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  // REQUIRES: ok()
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace tilestream

// Returns early from a function returning Status or Result<T>.
#define TS_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::tilestream::Status ts_status_ = (expr); \
    if (!ts_status_.ok()) return ts_status_;  \
  } while (0)
