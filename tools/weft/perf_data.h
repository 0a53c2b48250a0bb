// `weft perf -c`: deterministic test data and the results it must give, computed on the host
// independently of the library, in the spirit of nccl-tests' verifiable/ generators.
//
// Every element is a function of (seed, rank, global index), so a rank can produce any other
// rank's input. Reductions use values whose every partial result is exact in the type, in any
// order: integers wrap (exact modulo 2^bits); floating-point sums add integers small enough
// that every partial sum is representable (or one contributing rank when the type is too narrow
// for all); products multiply +-1 by one integer; min/max pick among finite values. Results are
// compared bit for bit, except floating-point avg, which divides by nranks: 2 ulps, as
// nccl-tests allows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tools/weft/perf_coll.h"

namespace weft::tool::perf {

// Input of collectives that only move data (all_gather, broadcast, alltoall, sendrecv): `count`
// elements at `dst`, elements index0, index0+1, … of the stream `seed`. Finite values only.
void fillCopy(void* dst, size_t count, DataType type, uint64_t seed, uint64_t index0);

// Rank `rank`'s input of a reduction with `op` over `nranks` ranks.
void fillReduceInput(void* dst, size_t count, DataType type, RedOp op, int nranks, int rank, uint64_t seed,
                     uint64_t index0);
// The reduction of all ranks' inputs (fillReduceInput with the same arguments).
void fillReduceExpected(void* dst, size_t count, DataType type, RedOp op, int nranks, uint64_t seed, uint64_t index0);

// The scalar that rank `rank` multiplies its input with under mulsum (nccl-tests'
// ncclVerifiablePremulScalar: 1 on even ranks, 2 on odd), as the type's bytes.
uint64_t premulScalar(DataType type, int rank);

// Elements of `got` that differ from `expected` (bit for bit; within 2 ulps for floating-point avg).
int64_t countWrong(const void* got, const void* expected, size_t count, DataType type, RedOp op, bool reduced);

// Round-to-nearest-even encoding of `value` in a type (the bits, in the low bytes), for the
// unit tests and for the scalars.
uint64_t encode(double value, DataType type);
// The value of an element's bits (integers of 64 bits lose precision above 2^53).
double decode(uint64_t bits, DataType type);

}  // namespace weft::tool::perf
