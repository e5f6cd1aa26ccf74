#include "gpu/baseline_kernel.h"

namespace collatz::gpu {
namespace {

__global__ void BaselineKernel(uint64_t begin_lo, uint64_t begin_hi, uint64_t count, BaselineTotals* totals) {
  unsigned long long sum = 0, overflowed = 0;
  unsigned int max_delay = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t lo = begin_lo + i;
    uint64_t hi = begin_hi + (lo < i ? 1 : 0);
    uint32_t d = 0;
    bool overflow = false;
    while (hi != 0 || lo > 1) {
      if (lo & 1) {
        // (3v + 1) / 2 = v + (v + 1) / 2, in 128 bits.
        const uint64_t h_lo = (lo >> 1) | (hi << 63), h_hi = hi >> 1;  // (v - 1) / 2
        const uint64_t a_lo = h_lo + 1, a_hi = h_hi + (a_lo == 0 ? 1 : 0);  // (v + 1) / 2
        const uint64_t r_lo = lo + a_lo;
        const uint64_t carry = r_lo < lo ? 1 : 0;
        const uint64_t t = hi + a_hi;
        const uint64_t r_hi = t + carry;
        if (t < hi || r_hi < t) {
          overflow = true;
          break;
        }
        lo = r_lo;
        hi = r_hi;
        d += 2;
      } else {
        lo = (lo >> 1) | (hi << 63);
        hi >>= 1;
        d += 1;
      }
    }
    if (overflow) {
      ++overflowed;
    } else {
      sum += d;
      max_delay = d > max_delay ? d : max_delay;
    }
  }
  atomicAdd(&totals->delay_sum, sum);
  if (overflowed != 0) atomicAdd(&totals->overflowed, overflowed);
  atomicMax(&totals->max_delay, max_delay);
}

}  // namespace

cudaError_t LaunchBaseline(uint64_t begin_lo, uint64_t begin_hi, uint64_t count, BaselineTotals* totals,
                           cudaStream_t stream) {
  int device = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e != cudaSuccess) return e;
  const uint64_t want = (count + 255) / 256;
  const int grid = static_cast<int>(want < static_cast<uint64_t>(sms) * 16 ? want : static_cast<uint64_t>(sms) * 16);
  BaselineKernel<<<grid > 0 ? grid : 1, 256, 0, stream>>>(begin_lo, begin_hi, count, totals);
  return cudaGetLastError();
}

}  // namespace collatz::gpu
