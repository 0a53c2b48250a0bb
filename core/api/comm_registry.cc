#include "core/api/comm_registry.h"

#include "core/base/log.h"
#include "core/base/strings.h"

namespace weft::api {

void Registry::add(weft_comm* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.insert(c);
}

Status Registry::enter(const weft_comm* c, const char* what) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (c == nullptr) return invalidArgument(std::string(what) + ": comm is NULL");
  auto it = live_.find(const_cast<weft_comm*>(c));
  if (it == live_.end())
    return invalidArgument(strprintf("%s: comm %p is not a live communicator (already destroyed?)", what,
                                     static_cast<const void*>(c)));
  if ((*it)->impl.aborting.load())
    return invalidUsage(strprintf("%s: comm %p is being aborted or destroyed", what, static_cast<const void*>(c)));
  (*it)->impl.activeCalls.fetch_add(1);
  return Status::ok();
}

Status Registry::take(weft_comm* c, const char* what) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (c == nullptr) return invalidArgument(std::string(what) + ": comm is NULL");
  auto it = live_.find(c);
  if (it == live_.end()) {
    WEFT_WARN("comm %p has already been destroyed", static_cast<void*>(c));
    return invalidArgument(strprintf("%s: comm %p has already been destroyed", what, static_cast<void*>(c)));
  }
  if (c->impl.aborting.exchange(true))
    return invalidUsage(strprintf("%s: comm %p is already being torn down", what, static_cast<void*>(c)));
  return Status::ok();
}

void Registry::remove(weft_comm* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.erase(c);
}

Registry& registry() {
  static Registry r;
  return r;
}

Result<CallScope> enterComm(const weft_comm* c, const char* what) {
  WEFT_TRY(registry().enter(c, what));
  return CallScope(c);
}

Status readyForWork(runtime::Comm& c, const char* what) {
  int state = c.state.load();
  if (state == static_cast<int>(Code::kInProgress))
    return invalidArgument(std::string(what) + ": Attempt to use communicator before the previous operation returned ncclSuccess");
  if (state != 0) return c.stoppedStatus(what);
  return Status::ok();
}

}  // namespace weft::api
