// Status and Result<T>: weft's error type. Codes equal ncclResult_t's values so that
// a Status converts to an NCCL-compatible code at every C ABI edge without a table.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace weft {

// Values are ncclResult_t's (nccl.h), in the same order.
enum class Code : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
};

const char* codeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == Code::kSuccess; }
  explicit operator bool() const { return isOk(); }
  Code code() const { return code_; }
  int ncclCode() const { return static_cast<int>(code_); }
  const std::string& message() const { return message_; }

  // Prefixes the message with what the caller was doing: "loading a.xml: <message>".
  Status withContext(std::string_view context) &&;
  Status withContext(std::string_view context) const&;

  // "invalid argument: <message>" — for logs and tests.
  std::string toString() const;

  // A remote error names the rank that failed first, where the transport knows it (a peer's
  // report of another rank's death): the communicator passes that rank on, not the peer's.
  Status withFailedRank(int rank) && {
    failedRank_ = rank;
    return std::move(*this);
  }
  int failedRank() const { return failedRank_; }  // -1: not known

 private:
  Code code_ = Code::kSuccess;
  std::string message_;
  int failedRank_ = -1;
};

// Helpers that read well at the point of failure.
inline Status invalidArgument(std::string message) { return {Code::kInvalidArgument, std::move(message)}; }
inline Status invalidUsage(std::string message) { return {Code::kInvalidUsage, std::move(message)}; }
inline Status internalError(std::string message) { return {Code::kInternalError, std::move(message)}; }
inline Status systemError(std::string message) { return {Code::kSystemError, std::move(message)}; }
inline Status remoteError(std::string message) { return {Code::kRemoteError, std::move(message)}; }
// "what: strerror(err)" for failed system calls.
Status errnoError(std::string_view what, int err);

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).isOk() && "a Result holding a Status must hold an error");
  }

  bool isOk() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return isOk(); }

  const Status& status() const {
    static const Status kOk;
    return isOk() ? kOk : std::get<Status>(v_);
  }
  Status takeStatus() && { return isOk() ? Status() : std::move(std::get<Status>(v_)); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace weft

#define WEFT_CONCAT_INNER_(a, b) a##b
#define WEFT_CONCAT_(a, b) WEFT_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function if it is an error.
#define WEFT_TRY(expr)                              \
  do {                                              \
    ::weft::Status weft_try_status_ = (expr);       \
    if (!weft_try_status_.isOk()) return weft_try_status_; \
  } while (0)

// Like WEFT_TRY, adding context to the message on the way up.
#define WEFT_TRY_CTX(expr, ctx)                                            \
  do {                                                                     \
    ::weft::Status weft_try_status_ = (expr);                              \
    if (!weft_try_status_.isOk()) return std::move(weft_try_status_).withContext(ctx); \
  } while (0)

// `WEFT_ASSIGN_OR_RETURN(auto x, makeX());` declares x from a Result or returns its Status.
#define WEFT_ASSIGN_OR_RETURN(lhs, expr) \
  WEFT_ASSIGN_OR_RETURN_IMPL_(WEFT_CONCAT_(weft_result_, __LINE__), lhs, expr)
#define WEFT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.isOk()) return std::move(tmp).takeStatus(); \
  lhs = std::move(tmp).value()
