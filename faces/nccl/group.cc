// ncclGroupStart/End over weft's groups, plus what NCCL's groups also do and weft's do not: an
// init started inside a group (non-blocking in weft) completes at the outermost ncclGroupEnd.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "faces/nccl/face.h"

namespace weft::nccl {
namespace {

struct DeferredInit {
  weft_comm_t* comm;
  bool callerBlocking;
};

struct FaceGroup {
  int depth = 0;
  std::vector<DeferredInit> inits;
};

thread_local FaceGroup tlsGroup;

// Waits until `comm`'s init is no longer in progress. weft bounds the init itself
// (WEFT_INIT_TIMEOUT) and an abort from another thread ends it, so this wait ends too.
weft_result_t waitInit(weft_comm_t* comm) {
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    weft_result_t state = weftSuccess;
    weft_result_t rc = weft_comm_get_async_error(comm, &state);
    if (rc != weftSuccess) return rc;
    if (state != weftInProgress) return state;
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(5)) pause *= 2;
  }
}

// Finishes the blocking inits of the thread's group; the first failure is the group's result.
// Non-blocking ones go on in the background, as NCCL's do.
ncclResult_t finishInits(std::vector<DeferredInit>& inits, bool* anyNonBlocking) {
  ncclResult_t first = ncclSuccess;
  for (const DeferredInit& d : inits) {
    if (!d.callerBlocking) {
      *anyNonBlocking = true;
      continue;
    }
    weft_result_t state = waitInit(d.comm);
    if (state != weftSuccess && first == ncclSuccess) {
      std::string why = weft_last_error();
      if (why.empty()) why = "communicator initialisation failed (" + std::string(weft_result_string(state)) + ")";
      first = fail("ncclGroupEnd", static_cast<ncclResult_t>(state), why);
    }
  }
  inits.clear();
  return first;
}

}  // namespace

bool inGroup() { return tlsGroup.depth > 0; }

void deferInit(weft_comm_t* comm, bool callerBlocking) { tlsGroup.inits.push_back({comm, callerBlocking}); }

ncclResult_t awaitDeferred(const char* call, ncclComm_t comm) {
  auto& inits = tlsGroup.inits;
  for (size_t i = 0; i < inits.size(); ++i) {
    if (inits[i].comm != toWeft(comm)) continue;
    DeferredInit d = inits[i];
    inits.erase(inits.begin() + static_cast<std::ptrdiff_t>(i));
    weft_result_t state = waitInit(d.comm);
    if (state == weftSuccess) return ncclSuccess;
    return fromWeft(call, state);
  }
  return ncclSuccess;
}

}  // namespace weft::nccl

using weft::nccl::fail;
using weft::nccl::fromWeft;

WEFT_NCCL_API(ncclResult_t, ncclGroupStart, void) {
  ++weft::nccl::tlsGroup.depth;
  return fromWeft("ncclGroupStart", weft_group_start());
}

WEFT_NCCL_API(ncclResult_t, ncclGroupEnd, void) {
  auto& g = weft::nccl::tlsGroup;
  if (g.depth == 0) return fail("ncclGroupEnd", ncclInvalidUsage, "ncclGroupEnd: not in a group call.");
  if (--g.depth > 0) return fromWeft("ncclGroupEnd", weft_group_end());
  bool anyNonBlocking = false;
  ncclResult_t inits = weft::nccl::finishInits(g.inits, &anyNonBlocking);
  ncclResult_t ops = fromWeft("ncclGroupEnd", weft_group_end());
  if (inits != ncclSuccess) return inits;
  if (ops != ncclSuccess) return ops;
  return anyNonBlocking ? ncclInProgress : ncclSuccess;
}

// NCCL estimates the group's time from its model without launching anything. weft does not
// simulate: the group ends with nothing run, and the call says so.
WEFT_NCCL_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  const char* call = "ncclGroupSimulateEnd";
  auto& g = weft::nccl::tlsGroup;
  if (g.depth == 0) return fail(call, ncclInvalidUsage, "ncclGroupSimulateEnd: not in a group call.");
  if (--g.depth == 0) {
    bool anyNonBlocking = false;
    (void)weft::nccl::finishInits(g.inits, &anyNonBlocking);
  }
  int dropped = 0;
  weft_result_t rc = weft_group_discard(&dropped);
  if (rc != weftSuccess) return fromWeft(call, rc);
  (void)simInfo;
  return fail(call, ncclInvalidUsage,
              "weft does not simulate groups (no time estimate); the group ended and its " + std::to_string(dropped) +
                  " queued operation(s) were dropped, none ran");
}
