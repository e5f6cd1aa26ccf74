// The baseline kernel's launch wrapper (baseline_kernel.cu).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace collatz::gpu {

struct BaselineTotals {
  unsigned long long delay_sum;
  unsigned long long overflowed;
  unsigned int max_delay;
  unsigned int unused;
};

cudaError_t LaunchBaseline(uint64_t begin_lo, uint64_t begin_hi, uint64_t count, BaselineTotals* totals,
                           cudaStream_t stream);

}  // namespace collatz::gpu
