// The host launchers of the search kernels (gpu/search_kernels.h): they pick a kernel
// instantiation through the families' pickers (gpu/kernels/find_kernels.h), size its shared
// memory and launch it. The kernels themselves live in gpu/kernels/: search_kernel.cu (the
// plain kernel), queue_kernel.cu (the walk queue), group_kernel.cu (residue groups) and
// group_prelude_kernel.cu (their preludes); the tail fill is gpu/kernels/fill_tail_kernel.cu
// (LaunchFillTail, gpu/fill_tail.h).
#include "gpu/search_kernels.h"

#include <algorithm>

#include "gpu/kernels/find_kernels.h"
#include "gpu/kernels/walk_check_row.cuh"

namespace collatz::gpu {
namespace {

size_t GroupDynamicShared(int walk_step_bits, int round_steps) {
  if (round_steps == 2) return sizeof(uint2) << kPairStepBits;
  return walk_step_bits > 0 ? (sizeof(uint32_t) << walk_step_bits) + 32 * sizeof(uint32_t) : 0;
}

}  // namespace

cudaError_t LaunchSearch(const LaunchParams& p, int block_threads, bool shared_steps, int grid_blocks,
                         cudaStream_t stream) {
  if (shared_steps && p.tables.step_bits > kMaxSharedStepBits) return cudaErrorInvalidValue;
  if (block_threads != 128 && block_threads != 256 && block_threads != 512) return cudaErrorInvalidValue;
  (void)cudaGetLastError();  // drop a stale error of an earlier unchecked call (cleanup paths)
  const bool sieved = p.entries != nullptr;
  LaunchKernelFn kernel = nullptr;
  if (p.queue && !shared_steps) {
    const cudaError_t e = FindQueueKernel(block_threads, sieved, p.queue_threads_per_sm, &kernel);
    if (e != cudaSuccess) return e;
    kernel<<<grid_blocks, block_threads, 0, stream>>>(p);
  } else {
    const cudaError_t e = FindSearchKernel(block_threads, sieved, shared_steps, p.full_occupancy != 0, &kernel);
    if (e != cudaSuccess) return e;
    const size_t shared = shared_steps ? (sizeof(uint32_t) << p.tables.step_bits) : 0;
    kernel<<<grid_blocks, block_threads, shared, stream>>>(p);
  }
  return cudaGetLastError();
}

cudaError_t SearchBlocksPerSm(int block_threads, bool shared_steps, int step_bits, bool full, bool queue,
                              int queue_threads_per_sm, int* blocks) {
  LaunchKernelFn kernel = nullptr;
  if (queue && !shared_steps) {
    const cudaError_t e = FindQueueKernel(block_threads, true, queue_threads_per_sm, &kernel);
    if (e != cudaSuccess) return e;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, block_threads, 0);
  }
  const cudaError_t e = FindSearchKernel(block_threads, true, shared_steps, full, &kernel);
  if (e != cudaSuccess) return e;
  const size_t shared = shared_steps ? sizeof(uint32_t) << step_bits : 0;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, block_threads, shared);
}

cudaError_t LaunchGroups(const LaunchParams& p, int block_threads, int grid_blocks, cudaStream_t stream) {
  (void)cudaGetLastError();
  if (p.entry_stops == nullptr || p.group_skip == nullptr || p.group_entries == 0) return cudaErrorInvalidValue;
  // Blocks of kPreludeThreads: they fit beside a running group kernel (2 x 640 threads at 48
  // registers leave 4096 registers an SM), so the next launch's preludes run during this one
  // instead of in the gap between the two.
  const EntryStopKernelFn entry_stop_kernel = FindEntryStopKernel();
  entry_stop_kernel<<<(p.group_entries + kPreludeThreads - 1) / kPreludeThreads, kPreludeThreads, 0, stream>>>(
      p, p.entry_stops);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  const uint64_t groups = static_cast<uint64_t>(p.group_entries) << p.group_bits;
  const GroupSkipKernelFn group_skip_kernel = FindGroupSkipKernel();
  group_skip_kernel<<<static_cast<unsigned>(std::min<uint64_t>((groups + kPreludeThreads - 1) / kPreludeThreads, 8192)),
                      kPreludeThreads, 0, stream>>>(p, p.entry_stops, p.group_skip);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  LaunchKernelFn kernel = nullptr;
  cudaError_t e = FindGroupKernel(block_threads, p.queue_threads_per_sm, p.walk_step_bits, p.walk_round_steps,
                                  p.early_stop == 0, p.walk_narrow != 0, p.walk_check_bits, &kernel);
  if (e != cudaSuccess) return e;
  // More than 48 KiB of shared memory a block (a 13-bit walk table and the rings) must be
  // allowed explicitly.
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(GroupDynamicShared(p.walk_step_bits, p.walk_round_steps)));
  if (e != cudaSuccess) return e;
  kernel<<<grid_blocks, block_threads, GroupDynamicShared(p.walk_step_bits, p.walk_round_steps), stream>>>(p);
  return cudaGetLastError();
}

cudaError_t GroupBlocksPerSm(int block_threads, int threads_per_sm, int walk_step_bits, int walk_round_steps,
                             int* blocks) {
  LaunchKernelFn kernel = nullptr;
  // Every such kernel takes the same registers and shared memory.
  cudaError_t e =
      FindGroupKernel(block_threads, threads_per_sm, walk_step_bits, walk_round_steps, false, false, kWalkCheckBits, &kernel);
  if (e != cudaSuccess) return e;
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(GroupDynamicShared(walk_step_bits, walk_round_steps)));
  if (e != cudaSuccess) return e;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, block_threads,
                                                       GroupDynamicShared(walk_step_bits, walk_round_steps));
}

uint32_t WalkCheckRowOfLibrary(uint32_t s, uint32_t last) { return WalkCheckRow(s, last); }
bool NarrowWalkStopsOfLibrary(bool below, uint32_t s) { return NarrowWalkStops(below, s); }

}  // namespace collatz::gpu
