// The table width of the group walk's two-step rounds (gpu/kernels/group_kernel.cu,
// GroupWalkPairStep), apart from the kernels' header so that the engine's options
// (gpu/gpu_engine.h) take their defaults from it: the one-step rounds' shared table and the
// least tail (2S bits, below which a value left walking is never found at a check).
// A build setting (CMake COLLATZ_PAIR_STEP_BITS): 12 or 13 (docs/PERFORMANCE.md, lever 111: on
// an H100 13 bits were 1.6% and 3.1% slower than 12; 14 bits, one block an SM, 13% slower, so
// session 38 dropped them).
#pragma once

#ifndef COLLATZ_PAIR_STEP_BITS
#define COLLATZ_PAIR_STEP_BITS 12
#endif

namespace collatz::gpu {

inline constexpr int kPairStepBits = COLLATZ_PAIR_STEP_BITS;
static_assert(kPairStepBits == 12 || kPairStepBits == 13, "the pair walk takes 12- or 13-bit tables, two blocks an SM");

}  // namespace collatz::gpu
