// The device tail table's fill (gpu/kernels/fill_tail_kernel.cu), one kernel for both GPU
// engines: the search engine (gpu_engine.cc) and batch statistics (gpu_stats.cc).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "gpu/step_entry.h"

namespace collatz::gpu {

// Fills tail[n] for n in [2^base_bits, 2^tail_bits) from tail[0 .. 2^base_bits) (already
// there) with the step table; sets *failed (device int) if a value would leave 128 bits.
cudaError_t LaunchFillTail(const StepEntry* steps, int step_bits, uint16_t* tail, int base_bits, int tail_bits,
                           int* failed, cudaStream_t stream);

}  // namespace collatz::gpu
