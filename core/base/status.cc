#include "core/base/status.h"

#include <cstring>

namespace weft {

const char* codeName(Code code) {
  switch (code) {
    case Code::kSuccess: return "success";
    case Code::kUnhandledCudaError: return "unhandled cuda error";
    case Code::kSystemError: return "system error";
    case Code::kInternalError: return "internal error";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kInvalidUsage: return "invalid usage";
    case Code::kRemoteError: return "remote error";
    case Code::kInProgress: return "in progress";
  }
  return "unknown error";
}

Status Status::withContext(std::string_view context) && {
  if (isOk() || context.empty()) return std::move(*this);
  std::string msg(context);
  msg += ": ";
  msg += message_;
  message_ = std::move(msg);
  return std::move(*this);
}

Status Status::withContext(std::string_view context) const& {
  Status copy = *this;
  return std::move(copy).withContext(context);
}

std::string Status::toString() const {
  if (isOk()) return "success";
  std::string s = codeName(code_);
  if (!message_.empty()) {
    s += ": ";
    s += message_;
  }
  return s;
}

Status errnoError(std::string_view what, int err) {
  std::string msg(what);
  msg += ": ";
  msg += std::strerror(err);
  return Status(Code::kSystemError, std::move(msg));
}

}  // namespace weft
