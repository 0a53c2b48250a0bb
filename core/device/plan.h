// From weft's schedules (core/coll/schedule.h) and operators (core/coll/reduce.h) to what the
// kernel reads (work.h): the host side of a launch, the same for a GPU and for the emulation.
#pragma once

#include <vector>

#include "core/coll/reduce.h"
#include "core/coll/schedule.h"
#include "core/device/work.h"

namespace weft::device {

// A lane's steps in the kernel's form. Steps that name one peer (recursive doubling, a CPU
// algorithm) have no kernel form: false, and `out` is left empty.
bool devSteps(const std::vector<coll::Step>& steps, std::vector<DevStep>* out);

// The kernel's reduction for an operator (MinMax becomes Max or Min by its argument's bit 0).
DevRed devRed(const coll::RedOp& op);

}  // namespace weft::device
