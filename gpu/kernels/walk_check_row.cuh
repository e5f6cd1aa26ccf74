// The row of the two-step walk's stop table (LaunchParams::walk_check) that its check reads,
// shared by the group kernel and the host-side copy the tests call (WalkCheckRowOfLibrary), so
// that both compile the same expression with the same build's definitions.
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

}  // namespace
}  // namespace collatz::gpu
