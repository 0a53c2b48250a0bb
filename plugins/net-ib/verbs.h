// Owners for verbs objects: each is released exactly once with its own destroy call. A class
// that declares them in dependency order (context, pd, cq, qp, mr) destroys them in the
// reverse order, as verbs requires (a QP before its CQ, every object before its PD, all before
// the device context).
#pragma once

#include <infiniband/verbs.h>

#include <memory>

namespace weft::ib {

template <auto Destroy>
struct VerbsDeleter {
  template <typename T>
  void operator()(T* object) const {
    if (object != nullptr) (void)Destroy(object);  // nothing useful to do on failure at teardown
  }
};

using DeviceListPtr = std::unique_ptr<ibv_device*, VerbsDeleter<ibv_free_device_list>>;
using ContextPtr = std::unique_ptr<ibv_context, VerbsDeleter<ibv_close_device>>;
using PdPtr = std::unique_ptr<ibv_pd, VerbsDeleter<ibv_dealloc_pd>>;
using CqPtr = std::unique_ptr<ibv_cq, VerbsDeleter<ibv_destroy_cq>>;
using QpPtr = std::unique_ptr<ibv_qp, VerbsDeleter<ibv_destroy_qp>>;
using MrPtr = std::unique_ptr<ibv_mr, VerbsDeleter<ibv_dereg_mr>>;

}  // namespace weft::ib
