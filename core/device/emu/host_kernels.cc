// The collective kernel compiled for host threads: kernel.h against the CUDA stand-in.
#include "core/coll/reduce_arith.h"
#include "core/device/kernel.h"
#include "core/device/launch.h"

namespace weft::device {

bool emulateCollective(const DevWork& w, unsigned nChannels, unsigned nThreads) {
  return coll::arith::visitArith(static_cast<weft_datatype_t>(w.type), [&]<class A>() {
    emu::launch(dim3(nChannels), dim3(nThreads), [&] { collKernelBody<A>(w); });
  });
}

}  // namespace weft::device
