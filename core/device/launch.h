// Running the collective kernel (kernel.h) for one DevWork: on host threads, or on a GPU when the
// CUDA kernels were built (WEFT_WITH_CUDA).
#pragma once

#include "core/device/work.h"

namespace weft::device {

// The kernel's real source on host threads (emu/cuda_emu.h): `nChannels` blocks of `nThreads`
// threads, block b running w.channels[b], returning when every block has finished. The buffers,
// FIFOs and counters w points to are host memory; ranks emulated side by side call this from
// threads of their own, each with its own DevWork. False for an unknown datatype.
bool emulateCollective(const DevWork& w, unsigned nChannels, unsigned nThreads);

}  // namespace weft::device

// The CUDA launch (kernels.cu), with C linkage so that libweft can find it in the kernels'
// library at run time: enqueues the kernel for `w` (a DevWork in host memory, passed by value) on
// `stream` (a cudaStream_t) with `nChannels` blocks of `nThreads` threads (a multiple of 64 when a
// channel has two lanes). Returns the cudaError_t of the launch (cudaErrorInvalidValue for an
// unknown datatype).
extern "C" int weftDeviceLaunchColl(const weft::device::DevWork* w, unsigned nChannels, unsigned nThreads,
                                    void* stream);
