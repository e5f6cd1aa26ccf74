// The tail fill: the device tail table's entries above the host's, walked with the step table
// (StepEntry) down to the host part. One kernel and launcher (gpu/fill_tail.h) for the search
// engine and batch statistics; its own library (collatz_gpu_tail) so that both link it once.
#include "gpu/fill_tail.h"

#include "gpu/kernels/walk_common.cuh"

namespace collatz::gpu {
namespace {

__global__ void FillTailKernel(const StepEntry* steps, int step_bits, uint16_t* tail, int base_bits,
                               uint64_t first, uint64_t count, int* failed) {
  const uint64_t step_mask = (uint64_t{1} << step_bits) - 1;
  const uint4* table = reinterpret_cast<const uint4*>(steps);
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t hi = 0, lo = first + i;
    uint32_t s = 0;
    bool ok = true;
    while (hi != 0 || (lo >> base_bits) != 0) {
      const uint4 e = __ldg(table + (lo & step_mask));
      uint64_t h_hi = hi >> step_bits;
      uint64_t h_lo = (lo >> step_bits) | (hi << (64 - step_bits));
      if (!MulAdd(h_hi, h_lo, e.y, e.x)) {
        ok = false;
        break;
      }
      hi = h_hi;
      lo = h_lo;
      s += e.z;
    }
    const uint32_t d = ok ? s + tail[lo] : 0;
    if (!ok || d > 0xFFFF) {
      atomicExch(failed, 1);
    } else {
      tail[first + i] = static_cast<uint16_t>(d);
    }
  }
}

}  // namespace

cudaError_t LaunchFillTail(const StepEntry* steps, int step_bits, uint16_t* tail, int base_bits, int tail_bits,
                           int* failed, cudaStream_t stream) {
  if (tail_bits <= base_bits) return cudaSuccess;
  (void)cudaGetLastError();
  const uint64_t first = uint64_t{1} << base_bits;
  const uint64_t count = (uint64_t{1} << tail_bits) - first;
  FillTailKernel<<<4096, 256, 0, stream>>>(steps, step_bits, tail, base_bits, first, count, failed);
  return cudaGetLastError();
}

}  // namespace collatz::gpu
