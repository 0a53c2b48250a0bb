// The collectives a thread queued inside weft_group_start/weft_group_end (point-to-point tasks
// are in runtime::threadGroup()); weft_group_end runs them after the point-to-point tasks.
#pragma once

#include <vector>

#include "core/coll/run.h"

namespace weft::api {

std::vector<coll::CollTask>& groupCollectives();

}  // namespace weft::api
