// The plain baseline the engine is measured against: one thread per number of the range
// (even and odd alike), the Collatz T-step loop in 128 bits, no sieve, no tables.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "core/unit.h"

namespace collatz {

struct GpuBaselineResult {
  double seconds = 0;       // CUDA-event time of the kernel
  uint64_t numbers = 0;     // every N of [spec.begin, spec.end)
  uint32_t max_delay = 0;   // over numbers that stayed within 128 bits
  uint64_t delay_sum = 0;   // mod 2^64, likewise (keeps the work observable)
  uint64_t overflowed = 0;  // numbers whose trajectory left 128 bits (not finished here)
};

// Runs the baseline over [spec.begin, spec.end) (at most 2^40 numbers) on `device`.
Status RunGpuBaseline(const UnitSpec& spec, double* seconds, uint64_t* numbers, GpuBaselineResult* detail = nullptr,
                      int device = 0);

}  // namespace collatz
