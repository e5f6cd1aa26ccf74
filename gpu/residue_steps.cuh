// What the sieve builder and the join map build share (gpu/sieve_kernels.cu,
// gpu/join_map_kernels.cu): a residue's first k T-steps and the grid of a grid-stride launch.
#pragma once

#include <cstdint>

namespace collatz::gpu {

// (p, c) of residue r after k T-steps: c = T^k(r) (the value 2^k h + r reaches is 3^p h + c),
// p the odd steps; c < 3^p for r < 2^k, so 64 bits hold it for k <= 40 (and T^k(r) < 2^54
// for r < 2^34, the join map's lifts).
__device__ __forceinline__ uint64_t ResidueTSteps(uint64_t v, int k, uint32_t* p) {
  uint32_t odd = 0;
  for (int j = 0; j < k; ++j) {
    if (v & 1) {
      v += (v >> 1) + 1;  // (3v + 1) / 2
      ++odd;
    } else {
      v >>= 1;
    }
  }
  *p = odd;
  return v;
}

// Blocks of 256 threads for a grid-stride loop over `count` items (at most 65536 blocks).
inline int GridFor(uint64_t count) {
  const uint64_t blocks = (count + 255) / 256;
  return static_cast<int>(blocks < 65536 ? (blocks == 0 ? 1 : blocks) : 65536);
}

}  // namespace collatz::gpu
