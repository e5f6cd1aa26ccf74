// The row of the two-step walk's stop table (LaunchParams::walk_check) that its check reads, and
// the narrow check's stop rule, shared by the group kernel and the host-side copies the tests
// call (WalkCheckRowOfLibrary, NarrowWalkStopsOfLibrary), so that both compile the same
// expressions with the same build's definitions.
#pragma once

#include <cstdint>

#include "gpu/search_kernels.h"

namespace collatz::gpu {
namespace {

// For a member with s steps (counted from kPairStepOffset) and a table whose last row is
// `last`: the first of the 2^kWalkCheckShift rows that share s's entries (PairWalkCheckTable).
__host__ __device__ __forceinline__ uint32_t WalkCheckRow(uint32_t s, uint32_t last) {
#if COLLATZ_GPU_MUTATION == 9  // exactness suite's mutation check: a row shared by twice the table's step counts
  const uint32_t row = s & ~((2u << kWalkCheckShift) - 1);
#else
  const uint32_t row = s & ~((1u << kWalkCheckShift) - 1);
#endif
  return row < last ? row : last;
}

// Whether the narrow two-step walk's check ends the lane's member (s counted from
// kPairStepOffset), given `below`: v >> 32 is below its 8-byte threshold (HighBitsLess). A lane
// without a member (s < kPairStepOffset) always ends its round so: its stale value may have
// climbed past 2^96, which no 8-byte threshold stops, and it would walk on as a member.
__host__ __device__ __forceinline__ bool NarrowWalkStops(bool below, uint32_t s) {
#if COLLATZ_GPU_MUTATION == 10  // exactness suite's mutation check: an idle lane stops by its value alone
  return below;
#else
  return below || s < kPairStepOffset;
#endif
}

}  // namespace
}  // namespace collatz::gpu
