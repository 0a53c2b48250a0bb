// Owners for libfabric objects: each closes its object exactly once with fi_close, and an
// fi_info list is freed with fi_freeinfo. Declaring them in dependency order (fabric, domain,
// cq/av, endpoint, mr) makes a class close them in the reverse order, as libfabric requires.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <memory>

namespace weft::ofi {

struct FidCloser {
  template <typename T>
  void operator()(T* object) const {
    if (object != nullptr) (void)fi_close(&object->fid);  // nothing useful to do on failure
  }
};
template <typename T>
using FiPtr = std::unique_ptr<T, FidCloser>;

using Fabric = FiPtr<fid_fabric>;
using DomainPtr = FiPtr<fid_domain>;
using CqPtr = FiPtr<fid_cq>;
using AvPtr = FiPtr<fid_av>;
using EpPtr = FiPtr<fid_ep>;
using MrPtr = FiPtr<fid_mr>;

struct InfoFreer {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoFreer>;

}  // namespace weft::ofi
