// The exact early-termination thresholds the GPU kernels compare with (SPEC 3), built on the
// host: one 16-byte load and a 128-bit compare per check.
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "core/unit.h"

namespace collatz {

// stop_below[s], s = 0 .. floor + 1: the least v with R(v) > limit - s (the first record
// above limit - s, or records_complete_below: R is known only below it), so s + R(v) <= limit
// <=> v < stop_below[s]; 0 (nothing stops) for s > limit. Non-increasing in s.
std::vector<ulonglong2> BuildStopTable(const UnitSpec& spec, int64_t limit);

// The residue-group walk's check (gpu::kWalkCheckBits, gpu::WalkCheckShift): entry
// (s << kWalkCheckBits) + r is stop_below[min(s + e, last)] << e for v = r (mod
// 2^kWalkCheckBits), e = WalkCheckShift(r) (saturated at 2^128 - 1): delay(v) = e + delay(v
// >> e) and v >> e < L <=> v < L 2^e. tail_from: below it every entry is at least
// 2^tail_bits, so a value in the tail has stopped and the walk skips the tail test.
struct WalkStopTable {
  std::vector<ulonglong2> entries;
  uint32_t tail_from = 0;
};
WalkStopTable BuildWalkStopTable(const std::vector<ulonglong2>& stop_below, int tail_bits);

}  // namespace collatz
