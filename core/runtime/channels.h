// A communicator's channels (rings and trees per channel), built by weft's topology core.
#pragma once

#include "core/base/status.h"
#include "core/runtime/comm.h"

namespace weft::runtime {

// Channels of CPU endpoints (no GPU, no NCCL_TOPO_FILE): two, as a host's memory and loopback
// gain nothing from more, within NCCL_MIN/MAX_NCHANNELS and the config's CTA limits.
inline constexpr int kCpuChannels = 2;

// Fills comm.channels and logs NCCL's Channel/Ring/Trees lines for this rank. Emulated devices
// (comm.mode): NCCL_TOPO_FILE's GPU k is local rank k of every host, ranks numbered host by host,
// so the channels equal `weft search FILE --nodes nNodes`'s.
Status buildChannels(Comm& comm);

}  // namespace weft::runtime
