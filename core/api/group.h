// The collectives a thread queued inside weft_group_start/weft_group_end (point-to-point tasks
// are in runtime::threadGroup()); weft_group_end runs them after the point-to-point tasks.
#pragma once

#include <vector>

#include "core/coll/run.h"
#include "core/device/comm_device.h"

namespace weft::api {

std::vector<coll::CollTask>& groupCollectives();
// The sends and receives on GPU memory a thread queued in its group (enqueued at its end).
std::vector<device::P2pOp>& groupDeviceP2p();

}  // namespace weft::api
