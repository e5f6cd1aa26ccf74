// The kernel families' instantiation pickers, one per .cu in gpu/kernels/, for the host launchers
// (gpu/search_launch.cu). The kernels are templates with internal linkage, so each family's
// .cu picks its own instantiations and hands out plain function pointers. Plain C++: the host
// compiler includes it too.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "gpu/search_kernels.h"

namespace collatz::gpu {

using LaunchKernelFn = void (*)(LaunchParams);

// The plain search kernel (search_kernel.cu) of a block size (128, 256, 512), numbers (sieved
// or first block), step table (shared or global) and register cap (full occupancy or none).
cudaError_t FindSearchKernel(int block_threads, bool sieved, bool shared_steps, bool full_occupancy,
                             LaunchKernelFn* kernel);

// The walk-queue kernel (queue_kernel.cu) of a block size, numbers and register cap (resident
// threads per SM; 0: none).
cudaError_t FindQueueKernel(int block_threads, bool sieved, int threads_per_sm, LaunchKernelFn* kernel);

// The group kernel (group_kernel.cu) of a block size, register cap, walk table (shared when
// walk_step_bits > 0), steps a walk round (two: kPairStepBits-bit table, kPairWalkBlockThreads
// threads), early termination or none (full_delay) and, for two-step rounds, the narrow fast
// path (LaunchParams::walk_narrow) and the T-steps their check looks ahead
// (LaunchParams::walk_check_bits).
cudaError_t FindGroupKernel(int block_threads, int threads_per_sm, int walk_step_bits, int round_steps,
                            bool full_delay, bool narrow, int check_bits, LaunchKernelFn* kernel);

// The group launch's prelude kernels (group_prelude_kernel.cu) and their block size.
constexpr int kPreludeThreads = 128;
using EntryStopKernelFn = void (*)(LaunchParams, uint8_t*);
using GroupSkipKernelFn = void (*)(LaunchParams, const uint8_t*, uint8_t*);
EntryStopKernelFn FindEntryStopKernel();
GroupSkipKernelFn FindGroupSkipKernel();

}  // namespace collatz::gpu
